"""The gateway: Discord's websocket protocol at ``/gateway``, on the emulator's own port.

Theory (Discord's docs, ``developers/events/gateway.mdx``). Every frame is a JSON payload
``{"op", "d", "s", "t"}``. The server opens with HELLO (op 10, ``heartbeat_interval`` in ms).
The client heartbeats (op 1, ``d`` = the last ``s`` it saw) at that interval and gets
HEARTBEAT_ACK (op 11); the server may ask for a beat at once (op 1). The client then either
IDENTIFYs (op 2: token, intents) and gets READY and GUILD_CREATE, or RESUMEs (op 6: token,
session_id, seq) a session it had and gets every dispatch after ``seq`` again, then RESUMED.
Dispatches (op 0) carry a name ``t`` and a per-session sequence ``s`` that grows by one. Op 7
asks the client to reconnect and resume; op 9 says the session is invalid (``d``: whether it
may still be resumed).

Close codes the emulator sends: 4000 (missed heartbeats; scripted), 4001 unknown opcode, 4002
undecodable or oversized (> 4096 bytes) payload, 4003 payload before IDENTIFY, 4004 wrong or
reset token, 4005 a second IDENTIFY or RESUME, 4007 RESUME with a seq never sent, 4008 more
than 120 payloads per 60 s, 4010 invalid shard, 4012 a ``v`` other than 10, 4013 unknown
intent bits, 4014 MESSAGE_CONTENT while the portal toggle is off; 1003 for an encoding or a
compression the emulator does not speak (``etf``, ``zstd-stream``).

Choices where the docs leave room:

- Missed heartbeats: no op 1 for 1.5 intervals (from HELLO, then from each beat) closes with
  4000; the session stays resumable.
- Op 7 (a fault): the session is detached at once (what follows is kept for the resume) and
  the server closes with 4000 after min(5 s, one interval) unless the client did.
- Op 9 (a fault, a refused RESUME, an identify faster than ``max_concurrency``): the
  connection stays open and unauthenticated; the client may IDENTIFY or RESUME on it, or leave.
- A RESUME of a session still attached elsewhere takes it over; the old connection is closed
  with 4000.
- Server closes 4004, 4007, 4009-4014 end the session; any other server close, a dropped
  connection or a client close other than 1000/1001 leaves it resumable.
- ``session_start_limit``: every session start uses one identify; an IDENTIFY with none left
  closes every connection with a session, and this one, with 4004 and resets the token (REST
  answers 401) until the control API sets a new ``identify_limit``.
- Payload compression (``compress: true`` in IDENTIFY, without ``compress=zlib-stream``): each
  later payload is a zlib-compressed binary frame. Transport compression is one zlib stream per
  connection, each payload flushed with ``Z_SYNC_FLUSH`` into one binary frame.

A connection is one reader loop (payloads in, handled synchronously) and one writer task that
drains a queue, so frames leave in the order they were produced; dispatches are produced by the
state's event listener (``sessions.py``), which never waits.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from discord_mcp.emulator import json_body
from discord_mcp.emulator.config import EmulatorConfig
from discord_mcp.emulator.guild import guild_create
from discord_mcp.emulator.intents import GUILDS, KNOWN_INTENTS, MESSAGE_CONTENT
from discord_mcp.emulator.ready import ready
from discord_mcp.emulator.sessions import IDENTIFY_INTERVAL, Session, SessionRegistry
from discord_mcp.emulator.state import State

__all__ = ["GATEWAY_PATH", "HEARTBEAT_INTERVAL_MS", "Connection", "Gateway"]

GATEWAY_PATH = "/gateway"
HEARTBEAT_INTERVAL_MS = 41_250
MISSED_BEATS = 1.5
SEND_LIMIT = 120
SEND_WINDOW = 60.0
MAX_PAYLOAD = 4096
RECONNECT_GRACE = 5.0

_SESSION_ENDING = frozenset({4004, 4007, 4009, 4010, 4011, 4012, 4013, 4014})
_CLIENT_ENDING = frozenset({1000, 1001})
_AFTER_IDENTIFY = frozenset({3, 4, 8, 31, 43})

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


@dataclass(frozen=True)
class _Close:
    code: int
    reason: str


class _Drop:
    """End the connection without a close frame."""


_DROP = _Drop()


def _payload(op: int, d: Any = None) -> dict[str, Any]:
    return {"op": op, "d": d, "s": None, "t": None}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class Gateway:
    """The ASGI websocket app behind ``/gateway`` and the connections it has open."""

    def __init__(
        self,
        state: State,
        registry: SessionRegistry,
        config: EmulatorConfig,
        rate_limit_scale: Callable[[], float],
    ) -> None:
        self.state = state
        self.registry = registry
        self.stats = registry.stats
        self.config = config
        self.rate_limit_scale = rate_limit_scale
        self.connections: list[Connection] = []

    @property
    def heartbeat_interval_ms(self) -> int:
        return max(1, round(HEARTBEAT_INTERVAL_MS * self.config.gateway_heartbeat_scale))

    def targets(self, session_id: str | None) -> list[Connection]:
        """Open connections (not already closing), or the one attached to ``session_id``."""
        live = [c for c in self.connections if not c.ending]
        if session_id is None:
            return live
        return [c for c in live if c.session is not None and c.session.id == session_id]

    def to_json(self) -> list[dict[str, Any]]:
        return [connection.to_json() for connection in self.targets(None)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            return
        connection = Connection(self, scope, receive, send)
        try:
            await connection.run()
        except asyncio.CancelledError:
            # At shutdown uvicorn closes every websocket, then cancels the handlers still
            # finishing; one whose socket is already gone has nothing left to do, and uvicorn
            # would log the cancellation as an application error.
            if not connection.over:
                raise


class Connection:
    """One client's websocket: its protocol state, its session, its outbound queue."""

    def __init__(self, gateway: Gateway, scope: Scope, receive: Receive, send: Send) -> None:
        self._gateway = gateway
        self._receive = receive
        self._send = send
        self._query = {
            k: v[-1] for k, v in parse_qs(scope.get("query_string", b"").decode()).items()
        }
        headers = dict(scope.get("headers") or [])
        self._host = headers.get(b"host", b"127.0.0.1").decode("latin-1")
        self._queue: asyncio.Queue[dict[str, Any] | _Close | _Drop] = asyncio.Queue()
        self._interval = gateway.heartbeat_interval_ms / 1000
        self._deadline = 0.0
        self._sends: deque[float] = deque()
        self._compressor: zlib._Compress | None = None
        self._compress_payloads = False
        self._client_code: int | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.session: Session | None = None
        self.acks_stopped = False
        self.ending = False
        # The websocket is finished (the client left, or the server closed or dropped it).
        self.over = False

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": None if self.session is None else self.session.id,
            "acks_stopped": self.acks_stopped,
        }

    # -- what faults and sessions call (synchronous, never waits) ----------------------------

    def send(self, payload: dict[str, Any]) -> None:
        if not self.ending:
            self._queue.put_nowait(payload)

    def close(self, code: int, reason: str = "") -> None:
        if self.ending:
            return
        self._end(resumable=code not in _SESSION_ENDING)
        self._queue.put_nowait(_Close(code, reason))

    def drop(self) -> None:
        """Cut the TCP connection without a close frame (the client sees 1006)."""
        if not self.ending:
            self._end(resumable=True)
            self._queue.put_nowait(_DROP)

    def reconnect(self) -> None:
        """Op 7; the session detaches now and the server closes after a grace period."""
        if self.ending:
            return
        self.send(_payload(7))
        self._release(resumable=True)
        grace = min(RECONNECT_GRACE, self._interval)
        self._timer = asyncio.get_running_loop().call_later(
            grace, self.close, 4000, "Reconnect requested."
        )

    def invalidate(self, resumable: bool) -> None:
        """Op 9 with ``d``; without resume the session ends."""
        self.send(_payload(9, resumable))
        self._release(resumable=resumable)

    def request_heartbeat(self) -> None:
        self.send(_payload(1))

    def _end(self, *, resumable: bool) -> None:
        self.ending = True
        if self._timer is not None:
            self._timer.cancel()
        self._release(resumable=resumable)

    def _release(self, *, resumable: bool) -> None:
        session, self.session = self.session, None
        if session is not None and session.outlet is self:
            self._gateway.registry.detach(session, resumable=resumable)

    # -- the connection's life -----------------------------------------------------------------

    async def run(self) -> None:
        if (await self._receive())["type"] != "websocket.connect":
            return
        await self._send({"type": "websocket.accept"})
        gateway = self._gateway
        gateway.connections.append(self)
        gateway.stats.gateway_connections_open += 1
        gateway.stats.gateway_connections_total += 1
        refusal = self._negotiate()
        if refusal is not None:
            self.close(*refusal)
        else:
            self._deadline = asyncio.get_running_loop().time() + MISSED_BEATS * self._interval
            self.send(_payload(10, {"heartbeat_interval": gateway.heartbeat_interval_ms}))
        reader = asyncio.create_task(self._read())
        writer = asyncio.create_task(self._write())
        try:
            await asyncio.wait({reader, writer}, return_when=asyncio.FIRST_COMPLETED)
            self.over = True
        finally:
            # Bookkeeping first and without awaiting, so a cancellation cannot skip it.
            if not self.ending:
                self._end(resumable=self._client_code not in _CLIENT_ENDING)
            gateway.connections.remove(self)
            gateway.stats.gateway_connections_open -= 1
            for task in (reader, writer):
                task.cancel()
        await asyncio.wait({reader, writer})
        for task in (reader, writer):
            failure = None if task.cancelled() else task.exception()
            if failure is not None:
                raise failure

    def _negotiate(self) -> tuple[int, str] | None:
        query = self._query
        if query.get("v", "10") != "10":
            return 4012, "Invalid API version."
        if query.get("encoding", "json") != "json":
            return 1003, "The emulator speaks only encoding=json."
        compress = query.get("compress")
        if compress == "zlib-stream":
            self._compressor = zlib.compressobj()
        elif compress is not None:
            return 1003, "The emulator offers only compress=zlib-stream."
        return None

    async def _read(self) -> None:
        while True:
            try:
                async with asyncio.timeout_at(None if self.ending else self._deadline):
                    message = await self._receive()
            except TimeoutError:
                self.close(4000, "Heartbeat timed out.")
                continue
            if message["type"] == "websocket.disconnect":
                if not self.ending:
                    self._client_code = int(message.get("code", 1005))
                return
            if not self.ending:
                self._on_frame(message)

    async def _write(self) -> None:
        while True:
            item = await self._queue.get()
            if isinstance(item, _Drop):
                return
            try:
                if isinstance(item, _Close):
                    await self._send(
                        {"type": "websocket.close", "code": item.code, "reason": item.reason}
                    )
                    return
                await self._send(self._frame(item))
            except OSError:  # uvicorn's ClientDisconnected: the client is gone
                return

    def _frame(self, payload: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        if self._compressor is not None:
            data = self._compressor.compress(text.encode()) + self._compressor.flush(
                zlib.Z_SYNC_FLUSH
            )
            return {"type": "websocket.send", "bytes": data}
        if self._compress_payloads:
            return {"type": "websocket.send", "bytes": zlib.compress(text.encode())}
        return {"type": "websocket.send", "text": text}

    # -- payloads from the client ------------------------------------------------------------

    def _on_frame(self, message: Message) -> None:
        text, data = message.get("text"), message.get("bytes")
        raw: bytes = text.encode() if text is not None else (data or b"")
        if len(raw) > MAX_PAYLOAD:
            self.close(4002, "Payload too large.")
            return
        if self._over_send_limit():
            self.close(4008, "Rate limited.")
            return
        try:
            payload = json_body.loads(raw)
        except ValueError:
            payload = None
        if not isinstance(payload, dict) or not _is_int(payload.get("op")):
            self.close(4002, "Decode error.")
            return
        op, d = payload["op"], payload.get("d")
        if op == 1:
            self._heartbeat(d)
        elif op == 2:
            self._identify(d)
        elif op == 6:
            self._resume(d)
        elif op not in _AFTER_IDENTIFY:
            self.close(4001, "Unknown opcode.")
        elif self.session is None:
            self.close(4003, "Not authenticated.")
        # Presence, voice state and member requests change nothing in the emulated guild.

    def _over_send_limit(self) -> bool:
        now = asyncio.get_running_loop().time()
        window = SEND_WINDOW * self._gateway.config.gateway_heartbeat_scale
        sends = self._sends
        while sends and now - sends[0] >= window:
            sends.popleft()
        sends.append(now)
        return len(sends) > SEND_LIMIT

    def _token_ok(self, token: Any) -> bool:
        gateway = self._gateway
        return token == gateway.config.token and not gateway.registry.budget.token_reset

    def _heartbeat(self, d: Any) -> None:
        if d is not None and not _is_int(d):
            self.close(4002, "Decode error.")
            return
        self._gateway.stats.gateway_heartbeats += 1
        self._deadline = asyncio.get_running_loop().time() + MISSED_BEATS * self._interval
        if not self.acks_stopped:
            self.send(_payload(11))

    def _identify(self, d: Any) -> None:
        gateway = self._gateway
        gateway.stats.gateway_identifies += 1
        if self.session is not None:
            self.close(4005, "Already authenticated.")
            return
        if not isinstance(d, dict) or not isinstance(d.get("properties"), dict):
            self.close(4002, "Decode error.")
            return
        intents: Any = d.get("intents")
        shard_valid, shard = _shard(d.get("shard"))
        if not isinstance(d.get("token"), str) or not _is_int(intents):
            self.close(4002, "Decode error.")
        elif not self._token_ok(d["token"]):
            self.close(4004, "Authentication failed.")
        elif intents < 0 or intents & ~KNOWN_INTENTS:
            self.close(4013, "Invalid intent(s).")
        elif intents & MESSAGE_CONTENT and not gateway.state.message_content_intent_enabled:
            self.close(4014, "Disallowed intent(s).")
        elif not shard_valid:
            self.close(4010, "Invalid shard.")
        elif gateway.registry.budget.too_soon(IDENTIFY_INTERVAL * gateway.rate_limit_scale()):
            self.send(_payload(9, False))
        elif gateway.registry.budget.remaining() == 0:
            gateway.registry.reset_token()
            self.close(4004, "Authentication failed.")
        else:
            self._compress_payloads = d.get("compress") is True and self._compressor is None
            self._start(intents, shard)

    def _start(self, intents: int, shard: tuple[int, int] | None) -> None:
        registry, state = self._gateway.registry, self._gateway.state
        session = registry.start(intents, shard, self)
        self.session = session
        resume_url = f"ws://{self._host}{GATEWAY_PATH}"
        registry.dispatch(session, "READY", ready(state, session, resume_url))
        if intents & GUILDS and session.owns_guild(state.guild.id) and state.bot_in_guild:
            registry.dispatch(session, "GUILD_CREATE", guild_create(state))

    def _resume(self, d: Any) -> None:
        gateway = self._gateway
        registry = gateway.registry
        gateway.stats.gateway_resumes += 1
        if self.session is not None:
            self.close(4005, "Already authenticated.")
            return
        valid = (
            isinstance(d, dict)
            and isinstance(d.get("token"), str)
            and isinstance(d.get("session_id"), str)
            and (d.get("seq") is None or _is_int(d.get("seq")))
        )
        if not valid:
            self.close(4002, "Decode error.")
            return
        if not self._token_ok(d["token"]):
            self.close(4004, "Authentication failed.")
            return
        session = registry.resumable(d["session_id"])
        if session is None:
            self.send(_payload(9, False))
            return
        old = session.outlet
        if old is not None and old is not self:
            registry.detach(session, resumable=True)
            old.close(4000, "Session resumed on another connection.")
        seq = d.get("seq") or 0
        if not 0 <= seq <= session.seq:
            registry.detach(session, resumable=False)
            self.close(4007, "Invalid seq.")
            return
        missed = session.replay_after(seq)
        if missed is None:
            registry.detach(session, resumable=False)
            self.send(_payload(9, False))
            return
        registry.attach(session, self)
        self.session = session
        for entry in missed:
            self.send(entry.payload())
        registry.dispatch(session, "RESUMED", {})


def _shard(value: Any) -> tuple[bool, tuple[int, int] | None]:
    """IDENTIFY's ``shard``: whether it is valid, and ``(shard_id, num_shards)`` if given."""
    if value is None:
        return True, None
    if not isinstance(value, list) or len(value) != 2 or not all(_is_int(v) for v in value):
        return False, None
    shard_id, count = value
    return 0 <= shard_id < count, (shard_id, count)
