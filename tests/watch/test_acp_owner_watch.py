"""discord-watch with an ACP agent (the scripted one, tests/support/fake_acp_agent.py) in
Discord (issue 34, seed 003): the watchdog ends a silent turn, tells the owners and archives
the thread; a daemon that stops tells the thread of each running turn that its agent stopped,
and why.

The watchdog's half hour passes on the daemon's injected clock, moved by the test.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.acp.agents import AgentRegistry
from discord_mcp.runs.contract import RunLimits
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.watch.app import run_daemon
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.slash import Slash
from tests.support.waiting import until
from tests.watch.conftest import COMMAND_COUNT
from tests.watch.test_acp_live_text import start_thread, texts

FAKE = Path(__file__).resolve().parents[1] / "support" / "fake_acp_agent.py"
LIMITS = dataclasses.replace(
    RunLimits(debounce=0.0), wait_check_interval=0.02, job_timeout=1_000_000.0
)


class MovableClock:
    """The daemon's clock: the real one, plus however far the test has moved it."""

    def __init__(self) -> None:
        self.offset = 0.0

    def time(self) -> float:
        return time.time() + self.offset

    def monotonic(self) -> float:
        return time.monotonic() + self.offset


@pytest.fixture
def acp_settings(discord: RunningEmulator, tmp_path: Path) -> Settings:
    (tmp_path / "app").mkdir()
    settings = settings_for(discord, tmp_path / "home")
    AgentRegistry(settings.home).add("fake", [sys.executable, str(FAKE)])
    ProjectRegistry(settings.home, allowed_roots=[tmp_path]).add(
        "app", tmp_path / "app", ["fake"], "fake"
    )
    return settings


@contextlib.asynccontextmanager
async def daemon(
    settings: Settings, discord: RunningEmulator, root: Path, **options: Any
) -> AsyncIterator[asyncio.Task[None]]:
    environ = {
        **os.environ,
        "DISCORD_WATCH_ROOTS": str(root),
        "FAKE_ACP_RELEASE": str(root / "never"),  # each turn says its first words, then hangs
    }
    task = asyncio.create_task(run_daemon(settings, environ=environ, limits=LIMITS, **options))
    try:
        ready = asyncio.create_task(Slash(discord).ready(COMMAND_COUNT))
        await asyncio.wait({ready, task}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            ready.cancel()
            task.result()
        ready.result()
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            async with asyncio.timeout(60):
                await task


def archived(people: People, thread: str) -> bool:
    found = [t for t in people.threads() if t["id"] == thread]
    return bool(found and (found[0].get("thread_metadata") or {}).get("archived"))


async def test_a_silent_agent_is_ended_the_owner_told_and_the_thread_archived(
    acp_settings: Settings, discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    clock = MovableClock()
    async with daemon(acp_settings, discord, tmp_path, clock=clock):
        thread = await start_thread(people, discord)
        people.say(thread, "a long one")
        await until(
            lambda: [m for m in people.messages(thread) if "first words" in m["content"]],
            what="the agent's first words",
            seconds=60,
        )
        assert not archived(people, thread)
        clock.offset += 31 * 60.0
        told = await until(
            lambda: [m for m in people.messages(thread) if "sent nothing for" in m["content"]],
            what="the watchdog's message",
            seconds=60,
        )
        await until(lambda: archived(people, thread), what="the archived thread", seconds=30)
    assert f"<@{discord.owner_user_id}>" in told[0]["content"]  # the owner is pinged
    assert "sent nothing for 30 minutes" in told[0]["content"]
    assert "E_AGENT_SILENT" in told[0]["content"]


async def test_a_stopping_daemon_tells_each_running_turns_thread_why(
    acp_settings: Settings, discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    why: Callable[[], str] = lambda: "discord-watch stopped (it received SIGTERM)"  # noqa: E731
    async with daemon(acp_settings, discord, tmp_path, stopping=why):
        threads = [await start_thread(people, discord) for _ in range(2)]
        for thread in threads:
            people.say(thread, "a long one")
        for thread in threads:
            await until(
                lambda t=thread: [m for m in people.messages(t) if "first words" in m["content"]],  # type: ignore[misc]
                what="the agent's first words",
                seconds=60,
            )
    for thread in threads:  # said while the daemon stopped, not found lost at its next start
        said = [t for t in texts(people, thread) if "discord-watch stopped (it received" in t]
        assert said, texts(people, thread)
        assert "SIGTERM" in said[0]
        assert "E_WATCH_STOPPED" in said[0]
