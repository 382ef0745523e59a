"""The emulator's CDN: the bytes behind an attachment's ``url`` and ``proxy_url``.

``GET /attachments/{channel_id}/{attachment_id}/{filename}`` (Discord's
``cdn.discordapp.com``) and the same under ``/media`` (``media.discordapp.net``) answer the
file exactly as uploaded, with its ``Content-Type``, when the query carries the signature the
attachment object's URL was given (``ex``, ``is``, ``hm``; ``attachments.py``) and it has not
expired. Anything else (an unknown or deleted attachment, a wrong name, no or a bad signature,
an expired URL) is 404 with Discord's "This content is no longer available." No token is
needed, as on Discord.

The files come from agents and strangers and are served from the owner's page's origin, so
none may run script there (:func:`safe_headers`): every answer has ``X-Content-Type-Options:
nosniff``; anything but a raster image gets ``Content-Security-Policy: sandbox`` (no script, an
opaque origin), and anything but a raster image or plain text downloads (``Content-Disposition:
attachment``) instead of opening.
"""

from __future__ import annotations

import hmac

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from discord_mcp.emulator.attachments import path_of, signature
from discord_mcp.emulator.store import Store

GONE = "This content is no longer available."
INLINE_IMAGES = frozenset(
    {"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"}
)
"""Raster images, which cannot carry script (SVG can: it is not here)."""


def safe_headers(content_type: str) -> dict[str, str]:
    """Headers that keep a served file from running as this origin."""
    kind = content_type.split(";", 1)[0].strip().lower()
    headers = {"X-Content-Type-Options": "nosniff"}
    if kind in INLINE_IMAGES:
        return headers
    headers["Content-Security-Policy"] = "sandbox; default-src 'none'"
    if kind != "text/plain":
        headers["Content-Disposition"] = "attachment"
    return headers


def media_routes(store: Store) -> list[Route]:
    """The CDN routes (outside ``/api/v10`` and ``/_emulator``) bound to one store."""

    async def serve(request: Request) -> Response:
        params = request.path_params
        attachment = store.files.get(params["attachment_id"])
        if (
            attachment is None
            or attachment.channel_id != params["channel_id"]
            # Starlette's path parameters are already percent-decoded.
            or params["filename"] != attachment.filename
        ):
            return PlainTextResponse(GONE, status_code=404)
        query = request.query_params
        expires, issued, given = query.get("ex", ""), query.get("is", ""), query.get("hm", "")
        expected = signature(store.media_secret, path_of(attachment), expires, issued)
        try:
            expired = int(expires, 16) < store.wall()
        except ValueError:
            expired = True
        if expired or not hmac.compare_digest(given, expected):
            return PlainTextResponse(GONE, status_code=404)
        kind = attachment.content_type or "application/octet-stream"
        return Response(attachment.data, media_type=kind, headers=safe_headers(kind))

    template = "/attachments/{channel_id}/{attachment_id}/{filename}"
    return [
        Route(template, serve, methods=["GET"]),
        Route("/media" + template, serve, methods=["GET"]),
    ]
