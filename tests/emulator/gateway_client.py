"""A small raw gateway client for tests: websockets and JSON, nothing from discord_mcp.

Every wait is bounded (``TIMEOUT``); nothing sleeps. ``received`` records every dispatch in
order, so tests can check sequence numbers across connections.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from discord_mcp.emulator import RunningEmulator

TIMEOUT = 5.0
GUILDS = 1 << 0
GUILD_MESSAGES = 1 << 9
GUILD_MESSAGE_REACTIONS = 1 << 10
MESSAGE_CONTENT = 1 << 15
OUR_INTENTS = GUILDS | GUILD_MESSAGES | GUILD_MESSAGE_REACTIONS | MESSAGE_CONTENT  # 34305
QUERY = "?v=10&encoding=json"


def properties() -> dict[str, str]:
    return {"os": "linux", "browser": "tests", "device": "tests"}


class Closed(Exception):
    """The server ended the connection; ``code`` is None when it sent no close frame."""

    def __init__(self, code: int | None, reason: str) -> None:
        super().__init__(f"closed with {code} {reason!r}")
        self.code = code
        self.reason = reason


class GatewayClient:
    """One websocket connection to the emulator's gateway."""

    def __init__(self, running: RunningEmulator, ws: ClientConnection, zlib_stream: bool) -> None:
        self.running = running
        self.ws = ws
        self.received: list[dict[str, Any]] = []
        self.seq: int | None = None
        self.session_id: str | None = None
        self._inflate = zlib.decompressobj() if zlib_stream else None

    async def send(self, op: int, d: Any = None) -> None:
        await self.ws.send(json.dumps({"op": op, "d": d}))

    async def send_raw(self, data: str | bytes) -> None:
        await self.ws.send(data)

    async def receive(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next payload; raises :class:`Closed` when the server ended the connection."""
        try:
            async with asyncio.timeout(timeout):
                frame = await self.ws.recv()
        except ConnectionClosed as exc:
            rcvd = exc.rcvd
            code, reason = (None, "") if rcvd is None else (rcvd.code, rcvd.reason)
            raise Closed(code, reason) from None
        if isinstance(frame, bytes):
            frame = self.inflate(frame)
        payload: dict[str, Any] = json.loads(frame)
        if payload["op"] == 0:
            self.received.append(payload)
            self.seq = payload["s"]
        return payload

    def inflate(self, frame: bytes) -> str:
        """A zlib-stream frame as text (one stream per connection)."""
        assert self._inflate is not None, "binary frame without zlib-stream"
        return self._inflate.decompress(frame).decode()

    async def next_op(self, op: int, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next payload with this opcode, skipping heartbeat ACKs only."""
        while True:
            payload = await self.receive(timeout)
            if payload["op"] == op:
                return payload
            assert payload["op"] == 11, f"expected op {op}, got {payload}"

    async def dispatch(self, name: str | None = None, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next dispatch; with ``name``, it must be that one."""
        payload = await self.next_op(0, timeout)
        if name is not None:
            assert payload["t"] == name, f"expected {name}, got {payload['t']}: {payload['d']}"
        return payload

    async def hello(self) -> int:
        return int((await self.next_op(10))["d"]["heartbeat_interval"])

    async def identify(
        self, intents: int = OUR_INTENTS, token: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        """IDENTIFY and return READY's ``d`` (GUILD_CREATE, if any, is left to read)."""
        await self.send(
            2,
            {
                "token": self.running.token if token is None else token,
                "intents": intents,
                "properties": properties(),
                **extra,
            },
        )
        ready = (await self.dispatch("READY"))["d"]
        self.session_id = ready["session_id"]
        return dict(ready)

    async def resume(self, session_id: str, seq: int | None) -> None:
        await self.send(6, {"token": self.running.token, "session_id": session_id, "seq": seq})

    async def closed(self, timeout: float = TIMEOUT) -> Closed:
        """Read until the server ends the connection; every payload read must be an ACK or a
        dispatch (kept in ``received``)."""
        while True:
            try:
                payload = await self.receive(timeout)
            except Closed as closed:
                return closed
            assert payload["op"] in (0, 11), payload


@asynccontextmanager
async def gateway(
    running: RunningEmulator, query: str = QUERY, url: str | None = None
) -> AsyncIterator[GatewayClient]:
    """A connection to ``url`` (default: the emulator's gateway) with ``query``."""
    target = (url or running.gateway_url) + query
    async with connect(target, open_timeout=TIMEOUT, close_timeout=1) as ws:
        yield GatewayClient(running, ws, zlib_stream="zlib-stream" in query)


@asynccontextmanager
async def identified(
    running: RunningEmulator, intents: int = OUR_INTENTS
) -> AsyncIterator[GatewayClient]:
    """A connection past HELLO, IDENTIFY, READY and (with GUILDS) GUILD_CREATE."""
    async with gateway(running) as client:
        await client.hello()
        await client.identify(intents)
        if intents & GUILDS:
            await client.dispatch("GUILD_CREATE")
        yield client


def control(running: RunningEmulator) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=running.base_url + "/_emulator", timeout=10.0)


def bot_api(running: RunningEmulator) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=running.api_base,
        headers={"Authorization": f"Bot {running.token}"},
        timeout=10.0,
    )


async def post_as(running: RunningEmulator, author_id: str, content: str) -> dict[str, Any]:
    """Post a message in #agents as a user, through the control API."""
    async with control(running) as client:
        response = await client.post(
            f"/channels/{running.channel_id}/messages",
            json={"author_id": author_id, "content": content},
        )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def faults(running: RunningEmulator, body: dict[str, Any]) -> httpx.Response:
    async with control(running) as client:
        return await client.post("/faults", json=body)


async def stats(running: RunningEmulator) -> dict[str, Any]:
    async with control(running) as client:
        return dict((await client.get("/state")).json()["stats"])
