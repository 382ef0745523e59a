"""How many MCP sessions ``discord-mcp serve --http`` keeps, and for how long.

Theory. Every ``initialize`` without an ``Mcp-Session-Id`` opens a session in the MCP SDK's
session manager: a server task, its streams and buffers, kept until the client ends it
(``DELETE``) or it idles out. Nothing else bounds them, so a caller that only initializes grows
the process without end (9,000 of them held 478 MB). This ASGI middleware, behind the
:mod:`.http_guard`, keeps its own count of the sessions it saw opened (a response carrying
an ``Mcp-Session-Id``) and:

- refuses a request that would open one more while ``max_sessions`` are open or being opened,
  with 503 and a sentence, before the SDK sees it (so nothing is allocated);
- ends a session that had no request in flight for ``idle_seconds`` (an open ``GET`` stream
  or a long tool call counts as in flight) the way a client ends it, with a ``DELETE`` to the
  app, which frees it in the SDK; this runs at each request, and the SDK's own idle timeout
  (given the same duration) frees them when no request comes;
- forgets a session the client deleted, or that the SDK no longer knows (404).

The clock is injected (monotonic seconds), so tests expire sessions without waiting.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from discord_mcp.errors import ConfigError

SESSION_HEADER = b"mcp-session-id"
MAX_SESSIONS_ENV = "DISCORD_MCP_HTTP_MAX_SESSIONS"
IDLE_SECONDS_ENV = "DISCORD_MCP_HTTP_SESSION_IDLE_SECONDS"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SessionLimits:
    """At most ``max_sessions`` open at once; each ends after ``idle_seconds`` without a
    request in flight."""

    max_sessions: int = 64
    idle_seconds: float = 1800.0

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise ConfigError(
                f"--max-sessions / {MAX_SESSIONS_ENV}",
                f"{self.max_sessions} sessions cannot serve anyone",
                "Give 1 or more (the default is 64)",
            )
        if not (math.isfinite(self.idle_seconds) and self.idle_seconds > 0):
            raise ConfigError(
                f"--session-idle-seconds / {IDLE_SECONDS_ENV}",
                f"{self.idle_seconds:g} is not a time a session can idle",
                "Give a positive number of seconds (the default is 1800)",
            )


def limits_from(
    environ: Mapping[str, str], *, max_sessions: int | None, idle_seconds: float | None
) -> SessionLimits:
    """The flags' limits, else the environment's, else the defaults.

    Raises:
        ConfigError: a value that is not a number, or out of range.
    """
    default = SessionLimits()
    if max_sessions is None and environ.get(MAX_SESSIONS_ENV, "").strip():
        text = environ[MAX_SESSIONS_ENV].strip()
        if not text.isdigit():
            raise ConfigError(MAX_SESSIONS_ENV, f"{text!r} is not a whole number", "Give e.g. 64")
        max_sessions = int(text)
    if idle_seconds is None and environ.get(IDLE_SECONDS_ENV, "").strip():
        text = environ[IDLE_SECONDS_ENV].strip()
        try:
            idle_seconds = float(text)
        except ValueError:
            raise ConfigError(
                IDLE_SECONDS_ENV, f"{text!r} is not a number of seconds", "Give e.g. 1800"
            ) from None
    return SessionLimits(
        max_sessions=default.max_sessions if max_sessions is None else max_sessions,
        idle_seconds=default.idle_seconds if idle_seconds is None else idle_seconds,
    )


@dataclass
class _Session:
    scope: Scope
    """The request that opened it (where to send the ``DELETE`` that ends it)."""
    last_active: float
    in_flight: int = 0


class SessionCap:
    """The limits above, as ASGI middleware in front of the MCP endpoint."""

    def __init__(
        self,
        app: ASGIApp,
        limits: SessionLimits,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.limits = limits
        self._clock = clock
        self._sessions: dict[bytes, _Session] = {}
        self._opening = 0

    @property
    def open_sessions(self) -> int:
        """Sessions open now, as this middleware counts them."""
        return len(self._sessions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self._end_idle()
        given = [v for k, v in scope.get("headers") or [] if k.lower() == SESSION_HEADER]
        if given:
            await self._in_session(given[0], scope, receive, send)
        elif scope.get("method") == "POST":
            await self._opening_one(scope, receive, send)
        else:
            await self.app(scope, receive, send)  # nothing to open (the SDK answers 400/405)

    async def _opening_one(self, scope: Scope, receive: Receive, send: Send) -> None:
        if len(self._sessions) + self._opening >= self.limits.max_sessions:
            await _refuse(send, self.limits)
            return
        self._opening += 1
        pending = True

        def opened(status: int, session_id: bytes | None) -> None:
            # At the response's start: the client may use the id before the body ends.
            nonlocal pending
            if pending:
                pending = False
                self._opening -= 1
                if session_id and status < 400:
                    # Its headers (the token among them) are not kept: a DELETE needs none.
                    kept = {k: v for k, v in scope.items() if k != "headers"}
                    self._sessions[session_id] = _Session(scope=kept, last_active=self._clock())

        try:
            await self.app(scope, receive, _watching(send, opened))
        finally:
            opened(500, None)

    async def _in_session(
        self, session_id: bytes, scope: Scope, receive: Receive, send: Send
    ) -> None:
        session = self._sessions.get(session_id)
        if session is None:
            await self.app(scope, receive, send)  # unknown to us: the SDK answers 404
            return
        session.in_flight += 1
        answered: list[int] = []
        try:
            await self.app(
                scope, receive, _watching(send, lambda status, _: answered.append(status))
            )
        finally:
            session.in_flight -= 1
            session.last_active = self._clock()
            status = answered[0] if answered else 0
            if status == 404 or (scope.get("method") == "DELETE" and 0 < status < 400):
                self._sessions.pop(session_id, None)

    async def _end_idle(self) -> None:
        now = self._clock()
        idle = [
            session_id
            for session_id, session in self._sessions.items()
            if session.in_flight == 0 and now - session.last_active >= self.limits.idle_seconds
        ]
        ended = [(session_id, self._sessions.pop(session_id)) for session_id in idle]
        for session_id, session in ended:  # forgotten first: a concurrent sweep skips them
            log.info(
                "closing MCP session %s… after %g s idle",
                session_id[:6].decode("latin-1"),
                now - session.last_active,
            )
            try:
                await self._delete(session_id, session.scope)
            except Exception:  # the session is gone from the count either way
                log.exception("closing an idle MCP session failed")

    async def _delete(self, session_id: bytes, opened_by: Scope) -> None:
        """End a session in the SDK as its client would: ``DELETE`` with its id."""
        scope = dict(opened_by, method="DELETE", headers=[(SESSION_HEADER, session_id)])
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": b"", "more_body": False}
            return {"type": "http.disconnect"}

        async def discard(message: Message) -> None:
            return None

        await self.app(scope, receive, discard)


def _watching(send: Send, started: Callable[[int, bytes | None], None]) -> Send:
    """``send``, telling ``started`` the response's status and ``Mcp-Session-Id`` (or None)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            session_id = next(
                (bytes(v) for k, v in message.get("headers") or [] if k.lower() == SESSION_HEADER),
                None,
            )
            started(int(message["status"]), session_id)
        await send(message)

    return sending


async def _refuse(send: Send, limits: SessionLimits) -> None:
    minutes = limits.idle_seconds / 60
    idle = f"{minutes:g} minutes" if minutes >= 1 else f"{limits.idle_seconds:g} seconds"
    sentence = (
        f"This server already has {limits.max_sessions} MCP sessions open, its limit "
        f"(--max-sessions, {MAX_SESSIONS_ENV}): end one, or try again once one has been "
        f"idle for {idle} and is closed."
    )
    body = json.dumps({"error": sentence}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", b"60"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
