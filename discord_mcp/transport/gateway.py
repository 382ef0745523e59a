"""The Discord gateway client: one websocket session, kept alive.

Theory (https://discord.com/developers/docs/events/gateway):

* Connect to the URL from ``GET /gateway/bot`` with ``?v=10&encoding=json``. The server says
  HELLO (op 10) with a heartbeat interval. The client beats (op 1, carrying the last sequence
  number) after ``interval * random()`` and then every interval; the server ACKs (op 11).
  A beat that found no ACK since the previous one means the connection is a zombie.
* A new session starts with IDENTIFY (op 2: token, intents). READY gives a ``session_id`` and a
  ``resume_gateway_url``. Each dispatch (op 0) carries a sequence number ``s``.
* A broken connection is *resumed* on the resume URL with RESUME (op 6: session_id, last seq):
  Discord replays what was missed, then sends RESUMED. Identifies are scarce (1000 a day per
  token, and one per 5 s), resumes are not.
* Discord may ask us to reconnect (op 7, resume) or say the session is invalid (op 9; ``d``
  says whether it may be resumed). Close codes 4004 and 4010-4014 are final: retrying cannot
  help, the configuration must change (4014: the Message Content intent is not enabled).
* A close with 1000/1001 ends the session for good; any other close keeps it resumable for a
  few minutes, which is how a successor process picks it up (see ``discord_mcp.relay``).

Policy of :meth:`Gateway.run`, one ``except`` per failure class:

======================================  ==========================================================
what happened                           what we do
======================================  ==========================================================
op 7, op 9 ``true``, zombie, dropped    resume at once (then with backoff if it keeps failing)
connection, other close codes
op 9 ``false``, 4007, 4009              forget the session; identify again (after 1-5 s)
4014 with Message Content asked for     identify again without it (:attr:`Gateway.content`
                                        False), saying which toggle would bring it back
4004, 4010-4014                         stop: raise GatewayError saying what to fix
network errors, handshake failures      back off exponentially with jitter (cap 60 s), resume
======================================  ==========================================================

Every identify goes through an injected guard that enforces the machine-wide identify budget.
websockets' exceptions never leave this module.

Nothing waits inside the read loop: ``on_dispatch`` is a plain function, called in order for
every dispatch, which must only hand the event over (:mod:`discord_mcp.relay.lanes` runs the
handlers). A loop that awaited a handler would read no heartbeat ACK meanwhile (and close a
healthy connection as a zombie) and no interaction (which Discord fails after 3 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import websockets
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from discord_mcp.config import Secret
from discord_mcp.errors import GatewayError
from discord_mcp.tasks import cancel_and_wait

log = logging.getLogger(__name__)

GUILDS = 1 << 0
GUILD_MESSAGES = 1 << 9
GUILD_MESSAGE_REACTIONS = 1 << 10
MESSAGE_CONTENT = 1 << 15
DEFAULT_INTENTS = GUILDS | GUILD_MESSAGES | GUILD_MESSAGE_REACTIONS | MESSAGE_CONTENT
"""34305: threads, messages, reactions, and message content (privileged)."""

FATAL_CLOSE_CODES: dict[int, str] = {
    4004: "Discord rejected the bot token (gateway close 4004). Check DISCORD_BOT_TOKEN",
    4010: "Discord rejected the shard (gateway close 4010)",
    4011: "Discord requires sharding for this bot (gateway close 4011)",
    4012: "Discord rejected the gateway API version (gateway close 4012)",
    4013: "Discord rejected the requested intents as invalid (gateway close 4013)",
    4014: (
        "Discord refused the intents asked for as not enabled (gateway close 4014). Enable "
        "them in the developer portal: your application > Bot > Privileged Gateway Intents"
    ),
}
CONTENT_TOGGLE = (
    "Developer Portal (https://discord.com/developers/applications) > your application > Bot "
    "> Privileged Gateway Intents > Message Content Intent: switch it on and Save"
)
"""Where the toggle that 4014 is about is, word for word."""
CONTENT_REFUSED = (
    "Discord refused the Message Content intent (gateway close 4014): logging in without it. "
    "Buttons, selects, modals and slash commands keep working; the text of replies cannot be "
    "read (the owner is told to answer with the buttons). To read them: " + CONTENT_TOGGLE
)
NEW_SESSION_CLOSE_CODES = frozenset({4007, 4009})
HANDOVER_CLOSE_CODE = 3000
"""How we close when we leave: anything but 1000/1001 keeps the session resumable."""
ZOMBIE_CLOSE_CODE = 4000
HELLO_TIMEOUT_S = 15.0
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 60.0
STABLE_AFTER_S = 60.0
"""A connection that stays up this long resets the backoff."""

Dispatch = Callable[[str, dict[str, Any], int | None], None]
"""Told each dispatch (name, data, sequence) in order; returns at once (it cannot await)."""


class IdentifyGuard(Protocol):
    """Permission to start a new session (identify), shared by every process of a token."""

    async def acquire(self) -> None:
        """Wait until an identify is allowed; raise GatewayError if the budget is spent."""


@dataclass(slots=True)
class SessionInfo:
    """What it takes to resume: the session, the last sequence number, where to resume."""

    session_id: str | None = None
    seq: int | None = None
    resume_url: str | None = None

    @property
    def resumable(self) -> bool:
        return bool(self.session_id and self.resume_url)


class _Reconnect(Exception):
    """Control flow inside this module: reconnect, resuming or not."""

    def __init__(self, *, resume: bool, reason: str) -> None:
        super().__init__(reason)
        self.resume = resume


class Gateway:
    """One gateway session for one bot token.

    Args:
        token: the bot token.
        url: the gateway URL (from ``GET /gateway/bot`` or DISCORD_GATEWAY_URL).
        on_dispatch: called with (event name, data, sequence) for every dispatch, in order;
            it must return at once (hand the event over, never handle it there).
        identify_guard: enforces the identify budget.
        intents: the gateway intents.
        session: a session to resume first (handed over by a previous holder).
        on_session_change: told whenever the session id, resume URL or sequence changes.
        on_content_refused: told once Discord refused the Message Content intent (4014) and
            the session goes on without it.
    """

    def __init__(
        self,
        token: Secret,
        *,
        url: str,
        on_dispatch: Dispatch,
        identify_guard: IdentifyGuard,
        intents: int = DEFAULT_INTENTS,
        session: SessionInfo | None = None,
        on_session_change: Callable[[SessionInfo], None] | None = None,
        on_content_refused: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self._token = token
        self._url = url.rstrip("/")
        self._on_dispatch = on_dispatch
        self._guard = identify_guard
        self._intents = intents
        self.session = session or SessionInfo()
        self._on_session_change = on_session_change
        self._clock = clock
        self._sleep = sleep
        self._rng = rng or random.Random()  # noqa: S311 - jitter, not secrets
        self.ready = asyncio.Event()
        """Set while a session is live (after READY or RESUMED), cleared when it drops."""
        self._ws: ClientConnection | None = None
        self._last_beat = 0.0
        self._last_ack = 0.0
        self._failures = 0
        self.identifies = 0
        self.resumes = 0
        self._closing = False
        self.content = bool(intents & MESSAGE_CONTENT)
        """Whether the session reads messages' text (False once Discord refused the Message
        Content intent, or it was never asked for)."""
        self._on_content_refused = on_content_refused

    # ---- the loop ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Keep a session alive until cancelled.

        Raises:
            GatewayError: Discord refused us for good (bad token, intents); the message says
                what to fix.
        """
        resume = self.session.resumable
        while not self.is_closing():
            connected_at = self._clock()
            try:
                await self._connect_once(resume=resume)
                resume = True  # a clean end of the loop body means "server went away"
            except _Reconnect as exc:
                log.info("gateway: %s; %s", exc, "resuming" if exc.resume else "new session")
                resume = exc.resume and self.session.resumable
                if not exc.resume:
                    self._forget_session()
                    await self._sleep(1.0 + 4.0 * self._rng.random())
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd is not None else None
                if code == 4014 and self._intents & MESSAGE_CONTENT:
                    # The portal's toggle is off: the rest of the bot works without it.
                    self._intents &= ~MESSAGE_CONTENT
                    self.content = False
                    log.error("%s", CONTENT_REFUSED)
                    if self._on_content_refused is not None:
                        self._on_content_refused()
                    self._forget_session()
                    resume = False
                elif code in FATAL_CLOSE_CODES:
                    raise GatewayError(FATAL_CLOSE_CODES[code], close_code=code) from None
                elif code in NEW_SESSION_CLOSE_CODES:
                    log.info("gateway closed %s: starting a new session", code)
                    self._forget_session()
                    resume = False
                else:
                    log.info("gateway closed (%s): resuming", code if code else "no close frame")
                    resume = self.session.resumable
            except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
                log.warning("gateway connection failed: %s", type(exc).__name__)
                resume = self.session.resumable
            finally:
                self.ready.clear()
                self._ws = None
            if self.is_closing():
                return
            if self._clock() - connected_at >= STABLE_AFTER_S:
                self._failures = 0
            self._failures += 1
            if self._failures > 1:
                await self._sleep(self._backoff())

    def _backoff(self) -> float:
        ceiling = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2.0 ** (self._failures - 2))
        return float(ceiling * (0.5 + 0.5 * self._rng.random()))

    def _forget_session(self) -> None:
        self.session = SessionInfo()
        self._session_changed()

    def _session_changed(self) -> None:
        if self._on_session_change is not None:
            self._on_session_change(self.session)

    async def _connect_once(self, *, resume: bool) -> None:
        base = self.session.resume_url if resume and self.session.resume_url else self._url
        async with connect(
            f"{base.rstrip('/')}/?v=10&encoding=json",
            max_size=None,
            open_timeout=15,
            close_timeout=2,
            ping_interval=None,  # Discord's own heartbeat is the keep-alive
        ) as ws:
            self._ws = ws
            hello = await self._hello(ws)
            interval = float(hello["heartbeat_interval"]) / 1000.0
            if resume and self.session.resumable:
                self.resumes += 1
                await self._send(
                    {
                        "op": 6,
                        "d": {
                            "token": self._token.reveal(),
                            "session_id": self.session.session_id,
                            "seq": self.session.seq,
                        },
                    }
                )
            else:
                await self._guard.acquire()
                self.identifies += 1
                await self._send(
                    {
                        "op": 2,
                        "d": {
                            "token": self._token.reveal(),
                            "intents": self._intents,
                            "properties": {
                                "os": "linux",
                                "browser": "discord-mcp",
                                "device": "discord-mcp",
                            },
                        },
                    }
                )
            beating = asyncio.create_task(self._heartbeat(ws, interval), name="heartbeat")
            try:
                await self._receive(ws)
            finally:
                await cancel_and_wait(beating, within=5)

    async def _hello(self, ws: ClientConnection) -> dict[str, Any]:
        async with asyncio.timeout(HELLO_TIMEOUT_S):
            payload = json.loads(await ws.recv())
        if payload.get("op") == 7:
            raise _Reconnect(resume=True, reason="reconnect requested before hello")
        if payload.get("op") != 10 or not isinstance(payload.get("d"), dict):
            raise _Reconnect(resume=True, reason=f"expected hello, got op {payload.get('op')}")
        return dict(payload["d"])

    async def _heartbeat(self, ws: ClientConnection, interval: float) -> None:
        self._last_ack = self._last_beat = self._clock()
        await self._sleep(interval * self._rng.random())
        while True:
            if self._last_ack < self._last_beat:
                log.warning("gateway: no heartbeat ACK since the last beat; reconnecting")
                await ws.close(ZOMBIE_CLOSE_CODE, "zombie connection")
                return
            await self._beat()
            await self._sleep(interval)

    async def _beat(self) -> None:
        self._last_beat = self._clock()
        await self._send({"op": 1, "d": self.session.seq})

    async def _send(self, payload: dict[str, Any]) -> None:
        if self._ws is not None:
            await self._ws.send(json.dumps(payload))

    async def _receive(self, ws: ClientConnection) -> None:
        async for raw in ws:
            payload = json.loads(raw)
            op = payload.get("op")
            if op == 0:
                self._dispatch(payload)
            elif op == 11:
                self._last_ack = self._clock()
            elif op == 1:
                await self._beat()
            elif op == 7:
                raise _Reconnect(resume=True, reason="Discord asked us to reconnect (op 7)")
            elif op == 9:
                raise _Reconnect(resume=bool(payload.get("d")), reason="invalid session (op 9)")

    def _dispatch(self, payload: dict[str, Any]) -> None:
        name = str(payload.get("t") or "")
        raw_data = payload.get("d")
        data: dict[str, Any] = raw_data if isinstance(raw_data, dict) else {}
        seq = payload.get("s")
        if isinstance(seq, int):
            self.session.seq = seq
        if name == "READY":
            self.session.session_id = str(data.get("session_id") or "") or None
            self.session.resume_url = str(data.get("resume_gateway_url") or "") or None
            self._failures = 0
            self.ready.set()
            log.info("gateway ready (session %s)", (self.session.session_id or "?")[:8])
        elif name == "RESUMED":
            self._failures = 0
            self.ready.set()
            log.info("gateway resumed")
        self._session_changed()
        try:
            self._on_dispatch(name, data, seq if isinstance(seq, int) else None)
        except Exception:
            # A handler's bug must not take the connection down with it.
            log.exception("gateway: handling %s failed", name)

    def is_closing(self) -> bool:
        """Whether :meth:`close` was called (set from another task while :meth:`run` waits)."""
        return self._closing

    async def close(self) -> None:
        """Leave: close the connection (keeping the session resumable for a successor) and end
        :meth:`run` instead of reconnecting."""
        self._closing = True
        ws = self._ws
        if ws is not None:
            with contextlib.suppress(websockets.WebSocketException, OSError):
                await ws.close(HANDOVER_CLOSE_CODE, "handing over")
