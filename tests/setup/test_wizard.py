"""`discord-mcp setup` refuses a forum (or media) channel with a sentence, and asks again."""

from __future__ import annotations

import io
from pathlib import Path

from discord_mcp.config import Secret
from discord_mcp.emulator import RunningEmulator
from discord_mcp.setup.wizard import run_setup
from tests.support.people import People


async def test_a_forum_channel_is_refused_and_another_asked_for(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    forum = people.new_channel(15, "questions")
    answers = iter([forum, discord.channel_id, discord.owner_user_id])

    async def accepted(_token: Secret, _api_base: str) -> str:
        return discord.application_id

    out = io.StringIO()
    env_file = tmp_path / "discord.env"
    answers_given = await run_setup(
        ask=lambda _prompt: next(answers),
        ask_secret=lambda _prompt: discord.token,
        out=out,
        env_file=env_file,
        api_base=discord.api_base,
        check=accepted,
    )
    assert answers_given.channel_id == discord.channel_id
    assert answers_given.owner_ids == (discord.owner_user_id,)
    assert "a forum channel holds only posts" in out.getvalue()
    assert f"DISCORD_CHANNEL_ID={discord.channel_id}" in env_file.read_text(encoding="utf-8")
