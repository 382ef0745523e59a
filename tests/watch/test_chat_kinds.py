"""A chat channel is one where an agent can answer: ``/chat add`` and ``discord-watch chat add``
refuse forum and media channels, as ``setup`` refuses them for the bot's own channel (issue 33).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from discord_mcp.emulator import RunningEmulator
from discord_mcp.setup.channel_kinds import chat_kind_problem
from tests.support.fake_agents import FakeSpawner
from tests.support.people import People
from tests.support.slash import Slash
from tests.watch.conftest import live_daemon, watch_settings
from tests.watch.test_cli import watch

FORUM, MEDIA, CATEGORY = 15, 16, 4


async def chat_add(slash: Slash, channel: str) -> str:
    """``/chat add tool:claude channel:<channel>``, typed in the bot's own channel."""
    body = slash.body("chat add", tool="claude")
    body["options"][0]["options"].append({"name": "channel", "value": channel})
    response = await slash.post(body)
    assert response.status_code == 200, response.text
    return await slash.answer(dict(response.json()))


async def test_slash_chat_add_refuses_a_forum_channel_and_takes_a_text_one(
    discord: RunningEmulator,
    watch_env: Path,
    fake_spawner: FakeSpawner,
    slash: Slash,
    people: People,
) -> None:
    forum = people.new_channel(FORUM, "ideas")
    text = people.text_channel("companion")
    settings = await asyncio.to_thread(watch_settings, discord, watch_env)
    async with live_daemon(settings, fake_spawner, discord):
        on_forum = await chat_add(slash, forum)
        on_text = await chat_add(slash, text)
    assert "forum channel, which holds only posts" in on_forum
    assert "is a chat channel now" in on_text
    assert not (settings.home / "chat" / forum).exists()


def test_the_shell_refuses_a_forum_channel_when_it_can_ask_discord(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    forum = people.new_channel(FORUM, "ideas")
    text = people.text_channel("companion")
    (tmp_path / "code").mkdir()
    env = {
        "DISCORD_BOT_TOKEN": discord.token,
        "DISCORD_API_BASE": discord.api_base,
        "DISCORD_CHANNEL_ID": discord.channel_id,
        "DISCORD_OWNER_IDS": discord.owner_user_id,
    }
    refused = watch(
        "chat", "add", forum, "--tool", "claude", home=tmp_path, roots=tmp_path, env=env
    )
    added = watch("chat", "add", text, "--tool", "claude", home=tmp_path, roots=tmp_path, env=env)

    assert refused.returncode == 2
    assert "forum channel, which holds only posts" in refused.stderr
    assert added.returncode == 0, added.stderr
    assert "not checked" not in added.stdout


def test_media_channels_and_categories_are_refused_too() -> None:
    # (Discord's OpenAPI spec has no media channel response yet: judged here without a GET.)
    assert "media channel" in str(chat_kind_problem({"type": MEDIA, "name": "shots"}))
    assert "category" in str(chat_kind_problem({"type": CATEGORY, "name": "Projects"}))
    assert chat_kind_problem({"type": 5, "name": "news"}) is None
