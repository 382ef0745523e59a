"""What a REST route is: its template, its handler, and the :class:`Call` the handler gets.

``rest.py`` (messages, channels, interactions...) and ``rest_commands.py`` (application
commands) declare routes with these; ``app.py`` matches a request to a route, builds the call
and turns the :class:`Reply` into a response.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from discord_mcp.emulator.interactions import InteractionDesk
from discord_mcp.emulator.sessions import IdentifyBudget
from discord_mcp.emulator.state import State
from discord_mcp.emulator.uploads import Upload


@dataclass
class Reply:
    """What a route answers: a status, a JSON body (None for an empty body), extra headers."""

    status: int
    json: Any | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Call:
    """One request as a handler sees it. ``body`` is the JSON body (or a multipart request's
    ``payload_json``); ``uploads`` are its ``files[n]`` parts, in request order."""

    state: State
    desk: InteractionDesk
    budget: IdentifyBudget
    params: dict[str, str]
    query: dict[str, str]
    body: Any | None
    host: str
    uploads: list[Upload] = field(default_factory=list)


Handler = Callable[[Call], Reply]


@dataclass(frozen=True)
class RestRoute:
    method: str
    template: str
    handler: Handler
    # Interaction callbacks and webhook followups authenticate with the token in their path.
    needs_auth: bool = True
    global_limit: bool = True

    @property
    def name(self) -> str:
        return f"{self.method} {self.template}"

    def match(self, segments: list[str]) -> dict[str, str] | None:
        parts = self.template.strip("/").split("/")
        if len(parts) != len(segments):
            return None
        params: dict[str, str] = {}
        for part, segment in zip(parts, segments, strict=True):
            if part.startswith("{"):
                if not segment:
                    return None
                params[part[1:-1]] = segment
            elif part != segment:
                return None
        return params
