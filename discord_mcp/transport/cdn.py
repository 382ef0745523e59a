"""Downloading attachments: the one function that fetches a file's bytes from Discord's CDN.

An attachment object carries ``url`` (``cdn.discordapp.com``), signed and valid for about a
day; the CDN needs no token, so none is sent (the token goes only to the API, through
:mod:`discord_mcp.transport.rest`). Every download is bounded: a connect and read timeout per
operation, a deadline for the whole transfer, and a size cap checked while the bytes arrive, so
a huge or stalled file cannot hold a process. Redirects are not followed. httpx errors never
leave this module: they become :class:`~discord_mcp.errors.DownloadFailed` sentences.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx

from discord_mcp import __version__
from discord_mcp.errors import DownloadFailed

DEADLINE_S = 120.0
"""The longest one download may take, start to end."""
_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
_USER_AGENT = f"discord-mcp/{__version__}"


@dataclass(frozen=True, slots=True)
class Downloaded:
    """A file's bytes and the type the CDN declared (None when it declared none)."""

    data: bytes
    content_type: str | None


async def download(
    url: str,
    *,
    max_bytes: int,
    deadline: float = DEADLINE_S,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Downloaded:
    """Fetch ``url`` (at most ``max_bytes``; within ``deadline`` seconds).

    Raises:
        DownloadFailed: not http(s), an error status, larger than ``max_bytes``, too slow, or
            the connection failed.
    """
    if not url.startswith(("https://", "http://")):
        raise DownloadFailed(f"not a download URL: {url[:80]!r}")
    try:
        async with (
            asyncio.timeout(deadline),
            httpx.AsyncClient(
                timeout=_TIMEOUT, transport=transport, headers={"User-Agent": _USER_AGENT}
            ) as http,
            http.stream("GET", url) as response,
        ):
            if response.status_code != 200:
                raise DownloadFailed(
                    f"the file could not be fetched (HTTP {response.status_code}); its link may "
                    "have expired"
                )
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise DownloadFailed(_too_big(max_bytes))
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise DownloadFailed(_too_big(max_bytes))
                chunks.append(chunk)
            return Downloaded(b"".join(chunks), response.headers.get("content-type"))
    except TimeoutError:
        raise DownloadFailed(f"the download took longer than {deadline:.0f} s") from None
    except httpx.HTTPError as exc:
        raise DownloadFailed(f"the download failed ({type(exc).__name__})") from exc


def _too_big(max_bytes: int) -> str:
    return f"the file is larger than {max_bytes / 1024 / 1024:.0f} MiB, the download limit"
