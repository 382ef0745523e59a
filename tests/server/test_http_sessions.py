"""The HTTP transport keeps a bounded number of MCP sessions: past the cap a new one is refused
with 503 and a sentence (nothing is allocated for it), an idle session is ended and freed, and
a session in use is never ended. The idle time is measured on an injected clock."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.server.streamable_http import StreamableHTTPServerTransport
from starlette.types import Message, Receive, Scope, Send

from discord_mcp.cli import main
from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import ConfigError
from discord_mcp.server.app import http_app
from discord_mcp.server.http_guard import HttpAccess
from discord_mcp.server.http_sessions import SessionCap, SessionLimits, limits_from
from tests.server.test_http import serving
from tests.server.test_serve_http import INITIALIZE, MCP_HEADERS
from tests.support.clock import FakeClock
from tests.support.settings import settings_for
from tests.support.waiting import until

VERSION = INITIALIZE["params"]["protocolVersion"]  # type: ignore[index]


async def initialize(client: httpx.AsyncClient, url: str) -> httpx.Response:
    return await client.post(url, json=INITIALIZE)


async def list_tools(client: httpx.AsyncClient, url: str, session: str) -> httpx.Response:
    headers = {"mcp-session-id": session, "mcp-protocol-version": str(VERSION)}
    await client.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    return await client.post(
        url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers
    )


def limited(
    settings: Settings, limits: SessionLimits, clock: FakeClock
) -> Callable[[HttpAccess], Any]:
    return lambda access: http_app(settings, access, limits=limits, clock=clock)


def live_transports() -> int:
    """Session transports still in memory (what 9,000 initializes used to pile up)."""
    gc.collect()
    return sum(isinstance(o, StreamableHTTPServerTransport) for o in gc.get_objects())


async def test_past_the_cap_a_new_session_is_refused_with_a_sentence_and_idle_ones_are_freed(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    clock = FakeClock()
    settings = settings_for(discord, tmp_path / "home")
    limits = SessionLimits(max_sessions=3, idle_seconds=60)

    async with (
        serving(limited(settings, limits, clock)) as url,
        httpx.AsyncClient(headers=MCP_HEADERS) as client,
    ):
        opened = [await initialize(client, url) for _ in range(3)]
        assert [r.status_code for r in opened] == [200, 200, 200]
        first, second, third = (r.headers["mcp-session-id"] for r in opened)

        refused = await initialize(client, url)
        assert refused.status_code == 503
        sentence = refused.json()["error"]
        assert "already has 3 MCP sessions open" in sentence
        assert "--max-sessions" in sentence
        assert "1 minutes" in sentence

        clock.now += 40
        assert (await list_tools(client, url, third)).status_code == 200  # third is in use
        assert (await initialize(client, url)).status_code == 503  # nobody idle 60 s yet

        clock.now += 30  # first and second idle 70 s, third 30 s
        fourth = await initialize(client, url)
        assert fourth.status_code == 200
        for gone in (first, second):
            assert (await list_tools(client, url, gone)).status_code == 404  # freed in the SDK
        assert (await list_tools(client, url, third)).status_code == 200
        assert (await initialize(client, url)).status_code == 200  # room for one more


async def test_a_session_with_a_request_in_flight_is_never_ended_as_idle(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    clock = FakeClock()
    settings = settings_for(discord, tmp_path / "home")
    limits = SessionLimits(max_sessions=2, idle_seconds=60)

    async with (
        serving(limited(settings, limits, clock)) as url,
        httpx.AsyncClient(headers=MCP_HEADERS) as client,
    ):
        session = (await initialize(client, url)).headers["mcp-session-id"]
        await list_tools(client, url, session)
        listening = {
            "mcp-session-id": session,
            "mcp-protocol-version": str(VERSION),
            "Accept": "text/event-stream",
        }
        async with client.stream("GET", url, headers=listening) as stream:
            assert stream.status_code == 200  # the server's own stream to the client, held open
            clock.now += 3600
            assert (await initialize(client, url)).status_code == 200  # a sweep runs
            assert (await list_tools(client, url, session)).status_code == 200
        deleted = await client.delete(url, headers={"mcp-session-id": session})
        assert deleted.status_code == 200
        # The client ended it: its place is free at once.
        assert (await initialize(client, url)).status_code == 200


async def test_thousands_of_initializes_keep_no_more_sessions_than_the_cap(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    clock = FakeClock()
    settings = settings_for(discord, tmp_path / "home")
    limits = SessionLimits(max_sessions=8, idle_seconds=60)

    before = live_transports()
    async with (
        serving(limited(settings, limits, clock)) as url,
        httpx.AsyncClient(headers=MCP_HEADERS) as client,
    ):
        statuses = [(await initialize(client, url)).status_code for _ in range(1000)]
        assert statuses.count(200) == 8
        assert statuses.count(503) == 992
        assert live_transports() - before <= 8
        clock.now += 61
        statuses = [(await initialize(client, url)).status_code for _ in range(100)]
        assert statuses.count(200) == 8  # the idle ones were ended, eight new ones fit
        assert live_transports() - before <= 8


async def test_sessions_still_being_opened_count_against_the_cap() -> None:
    """Initializes that arrive together, before any has been answered, never open more than
    the cap: a session being opened holds its place from the moment it is let through."""
    release = asyncio.Event()
    reached: list[int] = []

    async def slow_sdk(scope: Scope, receive: Receive, send: Send) -> None:
        reached.append(len(reached))
        session_id = f"s{len(reached)}".encode()
        await release.wait()  # the SDK still setting the session up
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"mcp-session-id", session_id)],
            }
        )
        await send({"type": "http.response.body", "body": b"{}"})

    cap = SessionCap(slow_sdk, SessionLimits(max_sessions=2, idle_seconds=60), clock=FakeClock())
    statuses: list[int] = []

    async def initialize_one() -> None:
        async def receive() -> Message:
            return {"type": "http.request", "body": b"{}", "more_body": False}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                statuses.append(int(message["status"]))

        await cap({"type": "http", "method": "POST", "headers": []}, receive, send)

    calls = [asyncio.create_task(initialize_one()) for _ in range(5)]
    # Each call is let through to the SDK or refused at once, before any is answered.
    await until(lambda: len(reached) + len(statuses) == 5)
    assert statuses == [503, 503, 503]
    assert len(reached) == 2
    release.set()
    await asyncio.gather(*calls)
    assert sorted(statuses) == [200, 200, 503, 503, 503]
    assert cap.open_sessions == 2


def test_the_limits_come_from_the_flags_else_the_environment() -> None:
    assert limits_from({}, max_sessions=None, idle_seconds=None) == SessionLimits(64, 1800.0)
    environ = {
        "DISCORD_MCP_HTTP_MAX_SESSIONS": "5",
        "DISCORD_MCP_HTTP_SESSION_IDLE_SECONDS": "90",
    }
    assert limits_from(environ, max_sessions=None, idle_seconds=None) == SessionLimits(5, 90.0)
    assert limits_from(environ, max_sessions=7, idle_seconds=None) == SessionLimits(7, 90.0)
    for bad in (
        {"DISCORD_MCP_HTTP_MAX_SESSIONS": "many"},
        {"DISCORD_MCP_HTTP_MAX_SESSIONS": "0"},
        {"DISCORD_MCP_HTTP_SESSION_IDLE_SECONDS": "soon"},
        {"DISCORD_MCP_HTTP_SESSION_IDLE_SECONDS": "-1"},
        {"DISCORD_MCP_HTTP_SESSION_IDLE_SECONDS": "inf"},
    ):
        with pytest.raises(ConfigError):
            limits_from(bad, max_sessions=None, idle_seconds=None)


def test_serve_http_refuses_to_start_with_a_cap_of_zero(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--http", "--port", "1", "--max-sessions", "0"]) == 2
    err = capsys.readouterr().err
    assert "--max-sessions" in err
    assert "Traceback" not in err
