"""A streamed answer in Discord: edits coalesced and paced, split past 2000 characters without
breaking a code fence, removed when the job ends."""

from __future__ import annotations

import asyncio

from discord_mcp.config import Secret
from discord_mcp.emulator import RunningEmulator
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.live_text import LiveText
from tests.support.people import People
from tests.support.waiting import until


async def test_a_burst_of_chunks_costs_few_edits_and_ends_as_the_whole_text(
    discord: RunningEmulator, people: People
) -> None:
    async with RestClient(Secret(discord.token), api_base=discord.api_base) as rest:
        live = LiveText(rest, discord.channel_id, interval=0.3)
        text = ""
        for number in range(40):
            text += f"word{number} "
            live.update(text)
            await asyncio.sleep(0)
        await until(
            lambda: [m for m in people.messages(discord.channel_id) if "word39" in m["content"]]
        )
        assert live.edits <= 3  # the first text at once, then at most one edit per interval
        [shown] = people.messages(discord.channel_id)
        assert shown["content"] == text
        await live.finish()
        assert people.messages(discord.channel_id) == []


async def test_a_long_answer_grows_into_more_messages_with_fences_intact(
    discord: RunningEmulator, people: People
) -> None:
    text = "Here:\n```python\n" + "print('x')\n" * 300 + "```\ndone"
    async with RestClient(Secret(discord.token), api_base=discord.api_base) as rest:
        live = LiveText(rest, discord.channel_id, interval=0.05)
        live.update(text[:500])
        live.update(text)
        shown = await until(
            lambda: (
                [m["content"] for m in people.messages(discord.channel_id)]
                if any("done" in m["content"] for m in people.messages(discord.channel_id))
                else None
            )
        )
    assert len(shown) >= 2
    assert all(len(part) <= 2000 for part in shown)
    assert all(part.count("```") % 2 == 0 for part in shown)
