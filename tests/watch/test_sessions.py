"""Sessions that behave, seen from Discord: quick messages become one job, a temporary failure
is retried once and a usage limit is held until its reset (and the thread says so), failures
mention the owner, no "Running" message outlives its job, and a restart after downtime says so
once. The agent CLIs are the scripted fake; the engine's wall clock is injected."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from tests.support.fake_agents import FakeSpawner, Scenario
from tests.support.people import People
from tests.support.waiting import until
from tests.watch.conftest import live_daemon
from tests.watch.test_daemon import texts

RESET = 1_900_000_000.0  # resetsAt in synthetic/claude-usage-limit.jsonl
DONE = "Reply in this thread"


class MovableClock:
    """Real time plus an offset the test moves (the wall clock only)."""

    def __init__(self, start: float | None = None) -> None:
        self.offset = 0.0 if start is None else start - time.time()

    def time(self) -> float:
        return time.time() + self.offset

    def monotonic(self) -> float:
        return time.monotonic()

    def jump(self, seconds: float) -> None:
        self.offset += seconds


async def open_thread(people: People, discord: RunningEmulator) -> str:
    thread_id = str(people.say(discord.channel_id, "!start app")["id"])
    await until(lambda: any("Session started" in t for t in texts(people, thread_id)))
    return thread_id


async def test_quick_messages_in_a_thread_become_one_job(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    people: People,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DISCORD_WATCH_DEBOUNCE_SECONDS", "30")
    clock = MovableClock()
    async with live_daemon(live_settings, fake_spawner, discord, clock=clock):
        thread_id = await open_thread(people, discord)
        for part in ("rename the module", "and update the imports", "then run the tests"):
            people.say(thread_id, part)
        await until(lambda: "then run the tests" in _queued_prompt(live_settings))
        clock.jump(31)
        await until(lambda: any(DONE in t for t in texts(people, thread_id)))
    [run] = fake_spawner.runs()
    assert run["prompt"] == "rename the module\n\nand update the imports\n\nthen run the tests"


def _queued_prompt(settings: Settings) -> str:
    from discord_mcp.runs.journal.journal import load

    state = load(settings.home / "runs").state
    return " ".join(j.prompt for j in state.jobs.values() if j.state == "queued")


async def test_a_usage_limit_is_held_until_the_reset_and_the_thread_says_when(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    people: People,
) -> None:
    clock = MovableClock(start=RESET - 3600)
    fake_spawner.script("migrate", Scenario(sample="synthetic/claude-usage-limit.jsonl"))
    async with live_daemon(live_settings, fake_spawner, discord, clock=clock):
        thread_id = await open_thread(people, discord)
        people.say(thread_id, "migrate")
        held = await until(
            lambda: [t for t in texts(people, thread_id) if "reached its usage limit" in t]
        )
        fake_spawner.script("migrate", Scenario())  # the quota is back after the reset
        clock.jump(3600 + 11)
        await until(lambda: any(DONE in t for t in texts(people, thread_id)))
    assert "continues on its own" in held[0]
    assert "2030-03-17 17:46 UTC" in held[0]
    assert f"<t:{int(RESET)}:R>" in held[0]
    assert not held[0].startswith("<@")  # a hold needs nobody yet
    assert [r["prompt"] for r in fake_spawner.runs()] == ["migrate", "migrate"]
    statuses = [t for t in texts(people, thread_id) if "· job `" in t]
    assert any("**Usage limit**: held" in t for t in statuses)
    assert not any("**Running**" in t for t in statuses)


async def test_a_temporary_failure_is_retried_once_and_the_thread_says_so(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    people: People,
) -> None:
    clock = MovableClock()
    fake_spawner.script("deploy", Scenario(sample="codex-fail-500.jsonl"))
    async with live_daemon(live_settings, fake_spawner, discord, clock=clock):
        thread_id = await open_thread(people, discord)
        people.say(thread_id, "!tool codex")
        await until(lambda: any("uses `codex`" in t for t in texts(people, thread_id)))
        people.say(thread_id, "deploy")
        retrying = await until(
            lambda: [t for t in texts(people, thread_id) if "trying once more" in t]
        )
        fake_spawner.script("deploy", Scenario())
        clock.jump(10)  # past the pause before the second attempt
        await until(lambda: any(DONE in t for t in texts(people, thread_id)))
    assert "temporary error" in retrying[0]
    assert "high demand" in retrying[0]
    assert len(fake_spawner.runs()) == 2


async def test_a_failed_job_mentions_the_owner(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    people: People,
) -> None:
    fake_spawner.script("deploy", Scenario(sample="claude-fail-401-noretry.jsonl"))
    async with live_daemon(live_settings, fake_spawner, discord):
        thread_id = await open_thread(people, discord)
        people.say(thread_id, "deploy")
        await until(lambda: [m for m in people.messages(thread_id) if "failed:" in m["content"]])
    [failure] = [m for m in people.messages(thread_id) if "failed:" in m["content"]]
    assert failure["content"].startswith(f"<@{discord.owner_user_id}> ")
    assert [u["id"] for u in failure["mentions"]] == [discord.owner_user_id]


async def test_no_running_message_outlives_a_job_lost_while_the_daemon_was_down(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    people: People,
) -> None:
    fake_spawner.script("long job", Scenario(hang=True))
    async with live_daemon(live_settings, fake_spawner, discord):
        thread_id = await open_thread(people, discord)
        people.say(thread_id, "long job")
        await until(lambda: any("**Running**" in t for t in texts(people, thread_id)))
        await until(lambda: fake_spawner.runs())
    # The daemon is down; the job's whole process group dies without a word (a reboot, OOM).
    os.killpg(fake_spawner.runs()[0]["pgid"], signal.SIGKILL)
    async with live_daemon(live_settings, fake_spawner, discord):
        await until(lambda: any("Unknown after a crash" in t for t in texts(people, thread_id)))
        await until(
            lambda: any(
                "was running when discord-watch stopped" in t for t in texts(people, thread_id)
            )
        )
    statuses = [t for t in texts(people, thread_id) if "· job `" in t]
    assert len(statuses) == 1  # the same message, edited
    assert "**Running**" not in statuses[0]


async def test_after_downtime_the_channel_is_told_once_how_long_and_what_was_caught_up(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    people: People,
) -> None:
    clock = MovableClock()
    async with live_daemon(live_settings, fake_spawner, discord, clock=clock):
        await until(lambda: (live_settings.home / "watch" / "alive.json").exists())
    people.say(discord.channel_id, "a note while you were away")
    people.say(discord.channel_id, "and another")
    clock.jump(2 * 3600)
    async with live_daemon(live_settings, fake_spawner, discord, clock=clock):
        notice = await until(
            lambda: [t for t in texts(people, discord.channel_id) if "was down" in t]
        )
        people.say(discord.channel_id, "back to work")  # later passes find nothing more to say
        await until(lambda: len(_inbox_notes(live_settings)) == 3)
    notices = [t for t in texts(people, discord.channel_id) if "was down" in t]
    assert notices == notice
    assert len(notice) == 1
    assert "(2h00m)" in notice[0]
    assert "caught up on 2 messages" in notice[0]
    assert f"discord-watch on `{live_settings.machine}` was down" in notice[0]


def _inbox_notes(settings: Settings) -> list[str]:
    """What the inbox file holds, peeked at without its lock (never taken on the event loop)."""
    try:
        document = json.loads((settings.home / "inbox" / "items.json").read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return []
    return [str(item["content"]) for item in document["items"]]
