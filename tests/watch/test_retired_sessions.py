"""A thread whose session retired (at rest for a week, issue 38) takes the owner's command and
message as before: discord-watch brings the session back first, and the CLI session resumes."""

from __future__ import annotations

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.engine.retiring import RETIRE_AFTER_S
from discord_mcp.runs.journal.retired import retired_path
from tests.runs.test_controls import MovableClock
from tests.support.fake_agents import FakeSpawner
from tests.support.people import People
from tests.support.slash import Slash
from tests.support.waiting import until
from tests.watch.conftest import live_daemon
from tests.watch.test_daemon import texts


async def test_a_retired_sessions_thread_takes_a_command_and_a_message_and_resumes(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    slash: Slash,
    people: People,
) -> None:
    clock = MovableClock()
    threads = []
    async with live_daemon(live_settings, fake_spawner, discord, clock=clock):
        for prompt in ("first", "second"):
            started = await slash.text("start", project="app", prompt=prompt)
            thread_id = started.split("<#")[1].split(">")[0]
            await until(lambda: any("Reply in this thread" in t for t in texts(people, thread_id)))  # noqa: B023
            threads.append(thread_id)
    written_in, commanded = threads

    clock.offset += RETIRE_AFTER_S + 86400.0  # a week and a day later
    async with live_daemon(live_settings, fake_spawner, discord, clock=clock):
        assert all(retired_path(live_settings.home / "runs", t).exists() for t in threads)
        status = await slash.text("status", channel=commanded)
        people.say(written_in, "one more thing")
        await until(lambda: len(fake_spawner.runs()) == 3)

    assert "project: app" in status  # the session's status, not "not a run thread"
    first, _, again = fake_spawner.runs()
    assert again["prompt"] == "one more thing"
    assert again["resume"] is not None  # the first run's CLI session, resumed
    assert first["resume"] is None
