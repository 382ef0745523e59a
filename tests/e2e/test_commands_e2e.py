"""Slash commands with a real agent CLI: the owner starts a run with ``/start`` and schedules a
prompt in its thread with ``/schedule``; the real ``claude`` answers from the scripted model.

Everything is real but Discord (the emulator) and the model (the scripted server): the daemon,
its gateway, the slash commands, the run engine, claude and its discord-mcp server. Only the
daemon's wall clock is moved, so the schedule comes due without waiting ten minutes.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.support.agent_clis import CLAUDE_MODEL, ClaudeCli
from tests.support.model_server import ModelServer, Text
from tests.support.people import People
from tests.support.slash import Slash
from tests.support.waiting import until
from tests.support.watch_world import FAST_DISCORD, WatchWorld, texts
from tests.watch.test_sessions import MovableClock

pytestmark = pytest.mark.e2e


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(**FAST_DISCORD)


async def test_start_and_a_schedule_run_the_real_cli_in_one_thread(
    people: People, model_server: ModelServer, watch_world: Callable[..., WatchWorld]
) -> None:
    world = watch_world()
    world.environ["DISCORD_WATCH_DEBOUNCE_SECONDS"] = "0"
    await world.add_project(["claude"], "claude", {"claude": ["--model", CLAUDE_MODEL]})
    claude = world.cli(ClaudeCli)
    model_server.script(Text("Started from a slash command."), Text("The nightly check is green."))
    slash = Slash(world.discord)
    clock = MovableClock()
    async with world.watching({"claude": claude.env()}, schedule_tick=0.1, clock=clock):
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
