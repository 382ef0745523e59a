"""discord-watch against the emulator: the inbox, run threads, commands, catch-up after downtime.

The agent CLIs are the scripted fake (tests/support/fake_cli.py replaying recorded real output);
the real CLIs run in tests/e2e and tests/runs. Everything Discord-side is real: the emulator,
our REST client, the daemon's routing and its messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from discord_mcp.config import Settings
from discord_mcp.decisions.questions import Question
from discord_mcp.emulator import RunningEmulator
from discord_mcp.inbox import Inbox, InboxItem
from discord_mcp.watch.app import run_daemon
from discord_mcp.watch.cursors import Cursors
from tests.decisions.test_service import running_service
from tests.support.fake_agents import FakeSpawner, Scenario
from tests.support.people import People
from tests.support.waiting import until


@contextlib.asynccontextmanager
async def daemon(
    settings: Settings, spawner: FakeSpawner, *, environ: dict[str, str] | None = None
) -> AsyncIterator[None]:
    task = asyncio.create_task(run_daemon(settings, spawner=spawner, environ=environ))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            async with asyncio.timeout(15):
                await task


def texts(people: People, channel_id: str) -> list[str]:
    """The channel's messages; none while a thread does not exist yet."""
    try:
        return [m["content"] for m in people.messages(channel_id)]
    except httpx.HTTPStatusError:
        return []


def inbox_contents(settings: Settings) -> list[str]:
    """What the inbox file holds, peeked at without its lock (never taken on the event loop)."""
    try:
        document = json.loads((settings.home / "inbox" / "items.json").read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return []  # none yet, or torn on purpose by a test
    return [str(item["content"]) for item in document["items"]]


async def inbox(settings: Settings, project: str | None = None) -> list[InboxItem]:
    """The inbox as ``project`` (None: everyone) reads it, off the event loop."""
    return await asyncio.to_thread(Inbox(settings.home).read, project=project)


async def started(people: People) -> None:
    """The daemon has made its first Discord request."""
    await until(lambda: people.state()["stats"]["rest_requests"] > 0)


async def first_look(settings: Settings) -> None:
    """The daemon has looked at the channel once: its cursor is saved, so what the owner
    writes from now on is new to it (earlier history is not its to act on)."""
    await until(lambda: settings.channel_id in Cursors(settings.home).channels())


async def test_owner_notes_reach_the_inbox_and_others_do_not(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    stranger = people.new_user("stranger")
    async with daemon(settings, spawner):
        await first_look(settings)
        # The stranger writes first: the daemon handles a channel's messages in order, so
        # once the owner's note is in, the stranger's message has been judged too.
        people.say(discord.channel_id, "I am not the owner", author=stranger)
        people.say(discord.channel_id, "please also update the changelog")
        await until(lambda: inbox_contents(settings))
    items = await inbox(settings)
    assert [i.content for i in items] == ["please also update the changelog"]
    assert items[0].author_id == discord.owner_user_id
    assert items[0].thread_id is None


async def test_start_runs_the_first_prompt_and_a_reply_resumes_the_session(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    async with daemon(settings, spawner):
        await first_look(settings)
        command = people.say(discord.channel_id, "!start app fix the failing tests")
        thread_id = command["id"]  # a thread started from the command message
        await until(lambda: any("Reply in this thread" in t for t in texts(people, thread_id)))
        people.say(thread_id, "now the docs")
        await until(lambda: sum("Reply in this thread" in t for t in texts(people, thread_id)) == 2)
    runs = spawner.runs()
    assert [r["prompt"] for r in runs] == ["fix the failing tests", "now the docs"]
    first, second = (r["argv"] for r in runs)
    assert "--resume" not in first
    assert "--resume" in second  # the second job resumed the first one's claude session
    messages = texts(people, thread_id)
    assert any(t.startswith("Session started for **app** with `claude`") for t in messages)
    assert any("Done" in t for t in messages)
    assert any("pong" in t for t in messages)  # the agent's answer from the recorded sample
    assert await inbox(settings) == []


async def test_a_command_written_as_the_daemon_first_starts_is_not_lost(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    # Written a moment before the first start: the owner typed it as the daemon came up (the
    # gateway may already have delivered it before the daemon first looked at the channel).
    command = people.say(discord.channel_id, "!start app run the tests")
    async with daemon(settings, spawner):
        await until(lambda: any("Reply in this thread" in t for t in texts(people, command["id"])))
    assert [r["prompt"] for r in spawner.runs()] == ["run the tests"]


async def test_thread_commands_status_tool_and_a_failed_jobs_retry(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    from tests.support.fake_agents import Scenario

    spawner.script("break please", Scenario(sample="claude-fail-401-noretry.jsonl"))
    async with daemon(settings, spawner):
        await first_look(settings)
        thread_id = people.say(discord.channel_id, "!start app")["id"]
        await until(lambda: any("Session started" in t for t in texts(people, thread_id)))
        people.say(thread_id, "break please")
        failed = await until(
            lambda: [t for t in texts(people, thread_id) if "failed" in t and "!retry" in t]
        )
        job_id = failed[0].split("`")[1]
        spawner.script("break please", Scenario())  # the retry will work
        people.say(thread_id, "!status")
        await until(lambda: any("**Session status**" in t for t in texts(people, thread_id)))
        people.say(thread_id, "!tool codex")
        await until(lambda: any("uses `codex`" in t for t in texts(people, thread_id)))
        people.say(thread_id, f"!retry {job_id}")
        await until(lambda: any("Retrying as job" in t for t in texts(people, thread_id)))
        await until(lambda: len(spawner.runs()) == 2)
        await until(lambda: any("Reply in this thread" in t for t in texts(people, thread_id)))
    status = next(t for t in texts(people, thread_id) if "**Session status**" in t)
    for field in ("project: app", "tool: claude", "state: failed", f"`!retry {job_id}`"):
        assert field in status
    assert [r["tool"] for r in spawner.runs()] == ["claude", "codex"]


async def test_a_strangers_commands_are_refused(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    stranger = people.new_user("mallory")
    async with daemon(settings, spawner):
        await first_look(settings)
        people.say(discord.channel_id, "!start app rm -rf /", author=stranger)
        await until(lambda: any("E_OWNER_ONLY" in t for t in texts(people, discord.channel_id)))
    assert people.threads() == []
    assert spawner.runs() == []


async def test_what_was_written_while_the_daemon_was_down_is_handled_once(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    async with daemon(settings, spawner):
        await first_look(settings)
        thread_id = people.say(discord.channel_id, "!start app")["id"]
        await until(lambda: any("Session started" in t for t in texts(people, thread_id)))
    # Down: the owner keeps writing.
    people.say(discord.channel_id, "note written while you were down")
    people.say(thread_id, "job written while you were down")

    def notes() -> list[str]:
        return inbox_contents(settings)

    def finished_jobs() -> int:
        return sum("Reply in this thread" in t for t in texts(people, thread_id))

    for restart in (1, 2):  # two restarts: neither may repeat anything
        async with daemon(settings, spawner):
            # Something new after the old messages, in the channel and in the thread: the
            # daemon handles each in order, so once the new ones are handled it has read past
            # the old ones, and a repeat of them would have happened already.
            people.say(discord.channel_id, f"note after restart {restart}")
            people.say(thread_id, f"job after restart {restart}")
            await until(lambda restart=restart: len(notes()) == 1 + restart)
            await until(lambda restart=restart: finished_jobs() == 1 + restart)
    assert [r["prompt"] for r in spawner.runs()] == [
        "job written while you were down",
        "job after restart 1",
        "job after restart 2",
    ]
    assert notes() == [
        "note written while you were down",
        "note after restart 1",
        "note after restart 2",
    ]


async def test_decision_threads_feed_the_inbox_only_after_the_answer(
    settings: Settings, spawner: FakeSpawner, people: People
) -> None:
    async with running_service(settings) as service:
        decision, _ = await service.ask(Question("Merge now?", options=("Yes", "No")))
    async with daemon(settings, spawner):
        await started(people)
        people.say(decision.thread_id, "yes")
        await until(lambda: service.store.load(decision.id).status == "answered")
        people.say(decision.thread_id, "and after merging, tag a release")
        await until(lambda: inbox_contents(settings))
    [note] = await inbox(settings)
    assert note.content == "and after merging, tag a release"
    assert note.project == "proj"
    assert note.thread_id == decision.thread_id


async def test_a_failing_typing_indicator_is_logged_and_the_job_still_finishes(
    tmp_path: Path,
    settings: Settings,
    spawner: FakeSpawner,
    people: People,
    discord: RunningEmulator,
    caplog: pytest.LogCaptureFixture,
) -> None:
    people.fault(route="POST /channels/{channel_id}/typing", status=500, count=50)
    gate = tmp_path / "gate"  # the job runs until the failure was logged
    spawner.script("say hi", Scenario(gate=gate))
    with caplog.at_level("INFO", logger="discord_mcp.watch.notifier"):
        async with daemon(settings, spawner):
            await first_look(settings)
            thread_id = people.say(discord.channel_id, "!start app say hi")["id"]
            await until(lambda: any("typing indicator" in r.getMessage() for r in caplog.records))
            gate.touch()
            await until(lambda: any("Reply in this thread" in t for t in texts(people, thread_id)))
