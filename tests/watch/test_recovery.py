"""discord-watch never skips in silence: a thread that is gone does not stop the others, lost
cursors and a lost inbox are rebuilt by re-reading Discord, a corrupt project list is an answer,
and no agent CLI ever sees the bot token.

The daemon runs against the emulator with the scripted fake CLIs (tests/support/fake_cli.py).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.state.quarantine import find_quarantined
from tests.support.fake_agents import FakeSpawner, Scenario
from tests.support.people import People
from tests.support.waiting import until
from tests.watch.test_daemon import daemon, inbox, inbox_contents, started, texts


def bot(discord: RunningEmulator) -> httpx.Client:
    return httpx.Client(
        base_url=discord.api_base,
        headers={"Authorization": f"Bot {discord.token}"},
        timeout=10,
    )


def new_thread(discord: RunningEmulator, name: str) -> str:
    with bot(discord) as api:
        response = api.post(
            f"/channels/{discord.channel_id}/threads", json={"name": name, "type": 11}
        )
    response.raise_for_status()
    return str(response.json()["id"])


def delete_thread(discord: RunningEmulator, thread_id: str) -> None:
    with bot(discord) as api:
        api.delete(f"/channels/{thread_id}").raise_for_status()


def cursors(settings: Settings) -> dict[str, Any]:
    path = settings.home / "watch" / "cursors.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))


def count(items: list[str], text: str) -> int:
    return sum(1 for item in items if item == text)


def replies(people: People, channel_id: str, contains: str) -> Callable[[], int]:
    return lambda: sum(contains in t for t in texts(people, channel_id))


async def test_a_deleted_thread_is_retired_and_the_threads_after_it_are_still_read(
    settings: Settings,
    spawner: FakeSpawner,
    people: People,
    discord: RunningEmulator,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with daemon(settings, spawner):
        await started(people)
        await until(lambda: (settings.home / "watch" / "alive.json").exists())  # first look done
        doomed = new_thread(discord, "doomed")
        kept = new_thread(discord, "kept")
        people.say(doomed, "note in the doomed thread")
        people.say(kept, "note in the kept thread")
        await until(lambda: len(inbox_contents(settings)) == 2)
    watched = list(cursors(settings)["channels"])
    assert watched.index(doomed) < watched.index(kept)  # read first: it must not stop the other
    delete_thread(discord, doomed)  # while the daemon is down
    people.say(kept, "written while the daemon was down")
    caplog.set_level(logging.WARNING, logger="discord_mcp.watch.daemon")
    async with daemon(settings, spawner):
        await until(lambda: "written while the daemon was down" in inbox_contents(settings))
        await until(lambda: doomed in cursors(settings).get("retired", []))
    assert doomed not in cursors(settings)["channels"]
    assert kept in cursors(settings)["channels"]
    gone = [r.getMessage() for r in caplog.records if "is gone" in r.getMessage()]
    assert gone
    assert doomed in gone[0]
    assert "10003" in gone[0]


async def test_lost_cursors_are_rebuilt_by_re_reading_and_nothing_runs_twice(
    settings: Settings,
    spawner: FakeSpawner,
    people: People,
    discord: RunningEmulator,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with daemon(settings, spawner):
        await started(people)
        await until(lambda: (settings.home / "watch" / "alive.json").exists())
        thread_id = people.say(discord.channel_id, "!start app first job")["id"]
        await until(replies(people, thread_id, "Reply in this thread"))
        people.say(discord.channel_id, "a note before the crash")
        people.say(thread_id, "!status")
        await until(lambda: inbox_contents(settings))
        await until(replies(people, thread_id, "**Session status**"))
    # Down, and the cursors file is torn; the owner keeps writing.
    (settings.home / "watch" / "cursors.json").write_text('{"version": 1, "chan', "utf-8")
    people.say(discord.channel_id, "a note while it was down")
    people.say(thread_id, "a job while it was down")
    people.say(thread_id, "!help")
    caplog.set_level(logging.WARNING, logger="discord_mcp.watch.daemon")
    async with daemon(settings, spawner):
        await until(lambda: len(spawner.runs()) == 2)
        await until(lambda: "a note while it was down" in inbox_contents(settings))
        await until(
            replies(people, thread_id, "**discord-watch commands**")
        )  # !help, written while down
        await until(lambda: replies(people, thread_id, "Reply in this thread")() == 2)
    assert [r["prompt"] for r in spawner.runs()] == ["first job", "a job while it was down"]
    notes = inbox_contents(settings)
    assert count(notes, "a note before the crash") == 1
    assert count(notes, "a note while it was down") == 1
    # A command that ran before the loss is not run again; the log says why.
    assert replies(people, thread_id, "**Session status**")() == 1
    assert replies(people, thread_id, "Session started")() == 1
    [moved] = [p for p in find_quarantined(settings.home) if "cursors" in p.name]
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert f"moved to {moved}" in logged
    assert "not re-running !status" in logged


async def test_a_corrupt_inbox_is_rebuilt_from_discord_with_the_owners_notes(
    settings: Settings,
    spawner: FakeSpawner,
    people: People,
    discord: RunningEmulator,
    caplog: pytest.LogCaptureFixture,
) -> None:
    stranger = people.new_user("stranger")
    async with daemon(settings, spawner):
        await started(people)
        await until(lambda: (settings.home / "watch" / "alive.json").exists())
        thread_id = people.say(discord.channel_id, "!start app a job")["id"]
        await until(replies(people, thread_id, "Reply in this thread"))
        people.say(discord.channel_id, "first note")
        people.say(discord.channel_id, "a stranger's words", author=stranger)
        people.say(discord.channel_id, "second note")
        await until(lambda: len(inbox_contents(settings)) == 2)
    inbox_file = settings.home / "inbox" / "items.json"
    inbox_file.write_text('{"version": 2, "items": [{"mess', encoding="utf-8")
    caplog.set_level(logging.WARNING, logger="discord_mcp.watch.daemon")
    async with daemon(settings, spawner):
        await until(lambda: len(inbox_contents(settings)) == 2)
        # the catch-up of what was missed while down may put a note back first: both count
        await until(lambda: "notes back, unread" in caplog.text)
    notes = await inbox(settings)
    # both back, unread (the order is the re-readers': whichever put a note back first)
    assert sorted((n.content, n.read) for n in notes) == [
        ("first note", False),
        ("second note", False),
    ]
    [moved] = [p for p in find_quarantined(settings.home) if "items.json" in p.name]
    assert str(moved) in caplog.text
    assert [r["prompt"] for r in spawner.runs()] == ["a job"]  # run-thread words are jobs, once
    document = json.loads(inbox_file.read_text(encoding="utf-8"))
    assert document["quarantined"][0]["rebuilt"] is True


async def test_a_corrupt_project_list_is_an_answer_in_discord_and_the_daemon_carries_on(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    config = settings.home / "runs" / "config.json"
    config.write_text("{ torn", encoding="utf-8")
    async with daemon(settings, spawner):
        await started(people)
        await until(lambda: (settings.home / "watch" / "alive.json").exists())
        people.say(discord.channel_id, "!start app hello")
        await until(replies(people, discord.channel_id, "E_CONFIG_CORRUPT"))
        people.say(discord.channel_id, "still listening?")
        await until(lambda: "still listening?" in inbox_contents(settings))
    [answer] = [t for t in texts(people, discord.channel_id) if "E_CONFIG_CORRUPT" in t]
    [moved] = [p for p in find_quarantined(settings.home) if "config.json" in p.name]
    assert str(moved) in answer
    assert spawner.runs() == []


async def test_no_agent_cli_gets_the_token_and_its_server_still_finds_it(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    token = settings.token.reveal()
    spawner.default = Scenario(
        secret=token, env_names=("DISCORD_BOT_TOKEN", "DISCORD_MCP_ENV_FILE")
    )
    # The daemon's own environment holds the token, by name and inside another variable.
    environ = {**os.environ, "DISCORD_BOT_TOKEN": token, "SOME_URL": f"https://x/?t={token}"}
    async with daemon(settings, spawner, environ=environ):
        await started(people)
        await until(lambda: (settings.home / "watch" / "alive.json").exists())
        thread_id = people.say(discord.channel_id, "!start app hello")["id"]
        await until(replies(people, thread_id, "Reply in this thread"))
    [run] = spawner.runs()
    assert run["secret_in"] == []
    assert run["env"]["DISCORD_BOT_TOKEN"] is None
    [spec] = spawner.specs
    config_path = Path(spec.argv[spec.argv.index("--mcp-config") + 1])
    assert not config_path.exists()  # per-job files go with the job
    server_env = settings.home / "runs" / "server.env"
    assert oct(server_env.stat().st_mode & 0o777) == "0o600"
    # What the run's server gets: a reference it can follow to the token.
    from discord_mcp.watch.app import server_environment

    reference = server_environment(settings)
    assert token not in json.dumps(reference)
    server = Settings.from_env(
        {**reference, "DISCORD_OWNER_IDS": discord.owner_user_id}, cwd=settings.home
    )
    assert server.token.reveal() == token
