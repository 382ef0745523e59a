"""The owner's page: ``GET /`` on the emulator shows its guild as Discord would, live.

Static files only (``index.html``, ``style.css`` and the ES modules beside this file), served
as they are: no build step. The page reads the live feed (``/_emulator/feed``, see
``feed.py``) and acts through the control API, as the person picked at its top. Discord
content is untrusted: the scripts build DOM nodes and set ``textContent``, never HTML, and the
Content-Security-Policy below forbids inline scripts and foreign origins anyway. With a
control token (``outside.py``) the page is served only to a request that carries it, and embeds
it in a ``<meta name="emulator-control-token">`` for its scripts (same-origin only: no other
origin can read the page, and ``frame-ancestors 'none'`` keeps it out of frames).
"""

from __future__ import annotations

import html
from pathlib import Path

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

PAGE_DIR = Path(__file__).parent
PAGE_PATH = "/"
_FILES = {
    "index.html": "text/html; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "render.js": "text/javascript; charset=utf-8",
    "markdown.js": "text/javascript; charset=utf-8",
    "modal.js": "text/javascript; charset=utf-8",
}
_HEADERS = {
    "Cache-Control": "no-cache",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
}


def _file(name: str, data: bytes | None = None) -> Response:
    body = (PAGE_DIR / name).read_bytes() if data is None else data
    return Response(body, headers=_HEADERS | {"Content-Type": _FILES[name]})


def page_routes(control_token: str | None = None) -> list[Route]:
    """``/`` (the page), ``/page/<file>`` (its scripts and style), and Discord's
    ``/channels/...`` links, which open the page there."""
    index_html = (PAGE_DIR / "index.html").read_bytes()
    if control_token is not None:
        meta = f'<meta name="emulator-control-token" content="{html.escape(control_token)}">'
        index_html = index_html.replace(b"</head>", meta.encode() + b"\n</head>", 1)

    async def index(request: Request) -> Response:
        return _file("index.html", index_html)

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _FILES:
            return Response("not found", status_code=404, media_type="text/plain")
        return _file(name)

    async def jump(request: Request) -> Response:
        # Discord's links (``/channels/<guild or @me>/<channel>[/<message>]``, as in thread
        # URLs and reminder digests) open the page at that channel and message.
        channel = request.path_params["channel_id"]
        message = request.path_params.get("message_id", "")
        if not channel.isdigit() or not (message.isdigit() or not message):
            return Response("not found", status_code=404, media_type="text/plain")
        query = f"?{request.url.query}" if request.url.query else ""
        target = f"/{query}#{channel}" + (f"/{message}" if message else "")
        return RedirectResponse(target, 302)

    return [
        Route(PAGE_PATH, index, methods=["GET"]),
        Route("/page/{name}", asset, methods=["GET"]),
        Route("/channels/{guild_id}/{channel_id}", jump, methods=["GET"]),
        Route("/channels/{guild_id}/{channel_id}/{message_id}", jump, methods=["GET"]),
    ]
