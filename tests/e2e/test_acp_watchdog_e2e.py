"""Seed 003's watchdog and graceful stop with the REAL ``gemini --acp`` against the scripted
model server (issue 34): the model holds its answer, so the agent's turn sends no
``session/update``; with ``DISCORD_WATCH_ACP_IDLE_MINUTES`` small the watchdog ends it, tells
the owner and archives the thread; a daemon stopped during such a turn tells the thread why.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.e2e.test_acp_owner_e2e import _setup, discord, texts
from tests.support.model_server import ModelRequest, ModelServer, Reply, Text
from tests.support.people import People
from tests.support.waiting import until
from tests.support.watch_world import watching
from tests.watch.test_acp_owner_watch import archived

pytestmark = pytest.mark.e2e
__all__ = ["discord"]  # the fixture, shared


@pytest.fixture
def held() -> Iterator[threading.Event]:
    released = threading.Event()
    yield released
    released.set()  # the model server's handler thread goes on


@pytest.fixture
def model_server(held: threading.Event) -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server
        held.set()
        assert not server.outbound_attempts, server.outbound_attempts


def holding(released: threading.Event) -> Callable[[ModelRequest], Reply]:
    def brain(request: ModelRequest) -> Reply:
        said = request.user_texts()
        if said and "think it over" in said[-1]:
            released.wait(120)  # the model "thinks": nothing streams meanwhile
            return Text("Thought it over.")
        return Text("A short title")

    return brain


async def test_a_silent_gemini_turn_is_ended_the_owner_told_and_the_thread_archived(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    held: threading.Event,
    tmp_path: Path,
) -> None:
    settings, environ, tool_env, _ = await _setup("gemini", discord, model_server, tmp_path)
    environ["DISCORD_WATCH_ACP_IDLE_MINUTES"] = "0.05"  # 3 seconds
    model_server.script(holding(held), repeat=True)
    async with watching(settings, environ, tool_env):
        await until(lambda: people.state()["stats"]["gateway_connections_open"] == 1, 90.0)
        thread = people.say(discord.channel_id, "!start app")["id"]
        await until(lambda: any("Session started" in t for t in texts(people, thread)), 90.0)
        people.say(thread, "think it over")
        said = await until(
            lambda: [t for t in texts(people, thread) if "sent nothing for" in t],
            what="the watchdog's message",
            seconds=90.0,
        )
        assert "E_AGENT_SILENT" in " ".join(texts(people, thread)), said
        assert any(f"<@{o}>" in t for t in said for o in settings.owner_ids)  # told
        await until(
            lambda: archived(people, thread),
            what="the thread archived",
            seconds=30.0,
        )
    assert not any("Thought it over." in t for t in texts(people, thread))


async def test_a_stopping_daemon_tells_a_live_gemini_turns_thread_why(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    held: threading.Event,
    tmp_path: Path,
) -> None:
    settings, environ, tool_env, _ = await _setup("gemini", discord, model_server, tmp_path)
    model_server.script(holding(held), repeat=True)
    async with watching(
        settings, environ, tool_env, stopping=lambda: "discord-watch stopped (it received SIGTERM)"
    ):
        await until(lambda: people.state()["stats"]["gateway_connections_open"] == 1, 90.0)
        thread = people.say(discord.channel_id, "!start app")["id"]
        await until(lambda: any("Session started" in t for t in texts(people, thread)), 90.0)
        people.say(thread, "think it over")
        await until(
            lambda: any(r.contains("think it over") for r in model_server.turn_requests()),
            what="the model asked",
            seconds=90.0,
        )
    said = [t for t in texts(people, thread) if "discord-watch stopped (it received SIGTERM)" in t]
    assert said, texts(people, thread)
    assert any("E_WATCH_STOPPED" in t for t in texts(people, thread))
