"""What the owner wrote, even when the message itself shows no text: a forwarded message is read
from its snapshot, and a message whose text Discord withholds (the Message Content intent is
off) is said out loud once, in the channel and the log, instead of being silently ignored.

discord-watch polls here (no gateway), as it does when Discord refuses the intent.
"""

from __future__ import annotations

import logging

import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from tests.support.fake_agents import FakeSpawner
from tests.support.people import People
from tests.support.waiting import until
from tests.watch.test_daemon import daemon, first_look, inbox, inbox_contents, texts

INTENT_HINT = "Message Content intent"


async def test_with_the_intent_off_the_owner_is_told_once_that_their_words_are_not_seen(
    settings: Settings,
    spawner: FakeSpawner,
    people: People,
    discord: RunningEmulator,
    caplog: pytest.LogCaptureFixture,
) -> None:
    people.fault(message_content_intent_enabled=False)
    with caplog.at_level(logging.WARNING, logger="discord_mcp.watch"):
        async with daemon(settings, spawner):
            await first_look(settings)
            people.say(discord.channel_id, "!start app fix the failing tests")
            await until(lambda: any(INTENT_HINT in t for t in texts(people, discord.channel_id)))
            people.say(discord.channel_id, "please also update the changelog")
            last = people.say(discord.channel_id, "hello?")
            # Handled in order: once the last one is seen (its cursor moved), so were the rest.
            await until(
                lambda: (
                    settings.home.joinpath("watch", "cursors.json").exists()
                    and last["id"]
                    in settings.home.joinpath("watch", "cursors.json").read_text(encoding="utf-8")
                )
            )
    notices = [t for t in texts(people, discord.channel_id) if INTENT_HINT in t]
    assert len(notices) == 1
    assert "developer portal" in notices[0]
    assert sum(INTENT_HINT in r.getMessage() for r in caplog.records) == 1
    assert spawner.runs() == []
    assert await inbox(settings) == []


async def test_a_forwarded_note_reaches_the_inbox_with_the_forwarded_text(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    # Someone else's words (not a note of the owner's), which the owner forwards.
    colleague = people.new_user("colleague")
    elsewhere = people.say(discord.channel_id, "the release is on Friday", author=colleague)
    async with daemon(settings, spawner):
        await first_look(settings)
        people.forward(discord.channel_id, elsewhere["id"])
        await until(lambda: inbox_contents(settings))
    [note] = await inbox(settings)
    assert note.content == "the release is on Friday"
    assert not any(INTENT_HINT in t for t in texts(people, discord.channel_id))


async def test_a_forwarded_message_in_a_run_thread_is_the_next_job(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    colleague = people.new_user("colleague")
    spec = people.say(discord.channel_id, "make the button blue", author=colleague)
    async with daemon(settings, spawner):
        await first_look(settings)
        command = people.say(discord.channel_id, "!start app look around")
        thread_id = command["id"]
        await until(lambda: any("Reply in this thread" in t for t in texts(people, thread_id)))
        people.forward(thread_id, spec["id"])
        await until(lambda: len(spawner.runs()) == 2)
    assert [r["prompt"] for r in spawner.runs()] == ["look around", "make the button blue"]
