"""Slash commands with a real agent CLI: the owner starts a run with ``/start`` and schedules a
prompt in its thread with ``/schedule``; the real ``claude`` answers from the scripted model.

Everything is real but Discord (the emulator) and the model (the scripted server): the daemon,
its gateway, the slash commands, the run engine, claude and its discord-mcp server. Only the
daemon's wall clock is moved, so the schedule comes due without waiting ten minutes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs import ProjectRegistry, Tool
from discord_mcp.state.files import off_loop
from discord_mcp.watch.app import run_daemon
from tests.e2e.test_watch_e2e import texts
from tests.support.agent_clis import CLAUDE_MODEL, ClaudeCli
from tests.support.model_server import ModelServer, Text
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.slash import Slash
from tests.support.waiting import until
from tests.watch.test_sessions import MovableClock

pytestmark = pytest.mark.e2e


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05, gateway_heartbeat_scale=0.01)


@contextlib.asynccontextmanager
async def watching(
    settings: Settings, environ: dict[str, str], tool_env: dict[Tool, dict[str, str]], **kw: Any
) -> AsyncIterator[None]:
    task = asyncio.create_task(
        run_daemon(settings, environ=environ, tool_env=tool_env, schedule_tick=0.1, **kw)
    )
    try:
        yield
    finally:
        task.cancel()
        await asyncio.wait({task}, timeout=20)


async def test_start_and_a_schedule_run_the_real_cli_in_one_thread(
    discord: RunningEmulator, people: People, model_server: ModelServer, tmp_path: Path
) -> None:
    workdir = tmp_path / "app"
    workdir.mkdir()
    settings = settings_for(discord, tmp_path / "home", POLL_INTERVAL_SECONDS="0.2")
    await off_loop(
        ProjectRegistry(settings.home, allowed_roots=[tmp_path]).add,
        "app",
        workdir,
        ["claude"],
        "claude",
        {"claude": ["--model", CLAUDE_MODEL]},
    )
    claude = ClaudeCli(
        root=tmp_path / "clis", model_url=model_server.base_url, proxy_url=model_server.proxy_url
    )
    environ = {
        **os.environ,
        "DISCORD_WATCH_ROOTS": str(tmp_path),
        "DISCORD_WATCH_DEBOUNCE_SECONDS": "0",
    }
    model_server.script(Text("Started from a slash command."), Text("The nightly check is green."))
    slash = Slash(discord)
    clock = MovableClock()
    async with watching(settings, environ, {"claude": claude.env()}, clock=clock):
        await slash.ready(14)
        started = await slash.text("start", project="app", prompt="say something")
        thread_id = started.split("<#")[1].split(">")[0]
        await until(
            lambda: any(
                "Started from a slash command." in t and "Reply in this thread" in t
                for t in texts(people, thread_id)
            ),
            what="the first answer",
        )
        scheduled = await slash.text(
            "schedule add", channel=thread_id, when="every 10m", prompt="run the nightly check"
        )
        clock.jump(601)
        await until(
            lambda: any(  # the final answer, not its streamed preview
                "The nightly check is green." in t and "Reply in this thread" in t
                for t in texts(people, thread_id)
            ),
            what="the scheduled answer",
        )
    assert started.startswith("Started <#")
    assert scheduled.startswith(f"Scheduled `sch_1` (every 10m) in <#{thread_id}>")
    prompts = [t for r in model_server.turn_requests() for t in r.user_texts()]
    assert "say something" in prompts
    assert "run the nightly check" in prompts
    assert len(people.threads()) == 1
    finals = [t for t in texts(people, thread_id) if "Reply in this thread" in t]
    assert len(finals) == 2
