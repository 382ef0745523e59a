"""The client's project over HTTP: the folder its MCP roots name.

``discord-mcp serve --http`` is one process for every client, started in a folder of its own:
its project name (``PROJECT_NAME``, else its folder's name) says nothing of the client that
asks. A client that declares the ``roots`` capability answers ``roots/list`` with the folders
it works in; the first ``file://`` root's folder name labels that session's questions, as a
stdio server's folder would. A client without roots, a root that is not a local folder, an
error or no answer within :data:`ANSWER_WITHIN_S`: the server's own project name, as before.
The name is only a label (what the card and the thread show): which project owns a decision,
for waiting, cancelling and the inbox, stays the server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import warnings
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

ANSWER_WITHIN_S = 5.0
KEPT = 1024
"""Sessions whose project is remembered (the oldest forgotten first)."""
_UNSAFE = re.compile(r"[^\w.\- ]+")


def project_from_roots(uris: Iterable[str]) -> str | None:
    """The folder name of the first ``file://`` root, as a label (None: none usable)."""
    for uri in uris:
        parts = urlsplit(str(uri))
        if parts.scheme != "file":
            continue
        name = PurePosixPath(unquote(parts.path)).name
        cleaned = " ".join(_UNSAFE.sub("-", name).split()).strip(".- ")[:64]
        if cleaned:
            return cleaned
    return None


class ClientProjects:
    """Each HTTP session's project label, asked once per session."""

    def __init__(self, within: float = ANSWER_WITHIN_S) -> None:
        self._within = within
        self._known: dict[str, str | None] = {}

    async def of(self, key: str, session: Any) -> str | None:
        """The project label of the session ``key`` (its MCP ``session``), or None."""
        if key in self._known:
            return self._known[key]
        name = await self._ask(session)
        self._known[key] = name
        while len(self._known) > KEPT:
            self._known.pop(next(iter(self._known)))
        return name

    async def _ask(self, session: Any) -> str | None:
        # Roots are deprecated from the protocol version 2026-07-28 on (SEP-2577), and the SDK
        # warns when they are used; the clients of today speak older versions and offer them.
        with warnings.catch_warnings(), contextlib.suppress(Exception):
            warnings.simplefilter("ignore")
            # A label: any failure keeps the server's name.
            capabilities = session.client_params.capabilities
            if getattr(capabilities, "roots", None) is None:
                return None
            async with asyncio.timeout(self._within):
                listed = await session.list_roots()
            return project_from_roots(str(root.uri) for root in listed.roots)
        return None


_GENERIC = ("mcp", "client", "cli")


def short_client(name: str | None) -> str:
    """A client's name as a session label shows it, whole words only: ``codex-mcp-client`` is
    ``codex`` and ``gemini-cli-mcp-client`` ``gemini`` (as their approval cards name them),
    never cut in the middle of a word."""
    first = (name or "").split()[0] if (name or "").split() else ""
    words = [w for w in re.split(r"[-_]", first.lower()) if w and w not in _GENERIC]
    kept: list[str] = []
    for word in words:
        if len("-".join([*kept, word])) > 20:
            break
        kept.append(word)
    return "-".join(kept) or "agent"
