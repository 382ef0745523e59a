"""discord-watch and the owner's files: a screenshot or a voice note from the phone lands in
the inbox as a local file, also without any text."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.inbox import Inbox
from tests.support.fake_agents import FakeSpawner
from tests.support.people import People
from tests.support.waiting import until
from tests.watch.test_daemon import daemon

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
OGG = b"OggS" + bytes(300)


def watching(settings: Settings, channel_id: str) -> bool:
    """The daemon has set its cursor on the channel: what is posted now is new to it."""
    path = settings.home / "watch" / "cursors.json"
    return path.is_file() and channel_id in path.read_text(encoding="utf-8")


async def test_an_owners_file_without_text_reaches_the_inbox_as_a_local_file(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    inbox = Inbox(settings.home)
    async with daemon(settings, spawner):
        await until(lambda: watching(settings, discord.channel_id))
        people.send_files(discord.channel_id, [("bug.png", PNG, "image/png")])
        people.send_files(
            discord.channel_id, [("voice-message.ogg", OGG, "audio/ogg")], voice_message=True
        )
        async with asyncio.timeout(15):
            while len(items := await asyncio.to_thread(inbox.read, project=None)) < 2:
                await asyncio.sleep(0.05)
    shot, voice = items
    assert shot.content == ""
    [kept] = shot.attachments
    assert Path(kept["path"]).read_bytes() == PNG
    assert kept["content_type"] == "image/png"
    [audio] = voice.attachments
    assert audio["voice_message"] is True
    assert Path(audio["path"]).read_bytes() == OGG


def test_inbox_items_written_before_attachments_existed_still_read(tmp_path: Path) -> None:
    path = tmp_path / "inbox" / "items.json"
    path.parent.mkdir()
    old = {
        "message_id": "1",
        "channel_id": "2",
        "thread_id": None,
        "author_id": "3",
        "author": "owner",
        "content": "hi",
        "timestamp": "2026-11-22T00:00:00+00:00",
    }
    path.write_text(json.dumps({"version": 1, "items": [old]}), encoding="utf-8")
    inbox = Inbox(tmp_path)
    [item] = inbox.read(project=None)
    assert item.attachments == ()
    inbox.add([dataclasses.replace(item, message_id="4")])  # written back in the new format
    stored = json.loads(path.read_text(encoding="utf-8"))["items"]
    assert [i["message_id"] for i in stored] == ["1", "4"]
    assert all("attachments" not in i for i in stored)  # an optional field, absent when empty


async def test_a_start_command_with_a_screenshot_gives_the_first_job_the_file(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    async with daemon(settings, spawner):
        await until(lambda: watching(settings, discord.channel_id))
        command = people.send_files(
            discord.channel_id, [("bug.png", PNG, "image/png")], content="!start app what is this"
        )
        await until(lambda: len(spawner.runs()) == 1)
    [run] = spawner.runs()
    prompt = run["argv"][-1]
    assert prompt.startswith("what is this")
    [kept] = [Path(word) for word in prompt.split() if word.endswith("bug.png")]
    assert kept.read_bytes() == PNG
    assert str(settings.home) in str(kept)  # downloaded into the state directory
    assert command["id"] in [t["id"] for t in people.threads()]
