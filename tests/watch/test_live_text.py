"""A streamed answer in Discord: edits coalesced and paced, split past 2000 characters without
breaking a code fence, removed when the job ends, even one whose post was on its way."""

from __future__ import annotations

import asyncio

import httpx
import pytest

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


class _HeldPosts(httpx.AsyncHTTPTransport):
    """Discord has the message, its answer is held back: a post on its way when the job ends."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived = asyncio.Event()
        self.release = asyncio.Event()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        if request.method == "POST" and request.url.path.endswith("/messages"):
            self.arrived.set()
            await self.release.wait()
        return response


@pytest.mark.parametrize("end", ["stop", "finish"])
async def test_a_preview_whose_post_is_on_its_way_when_the_job_ends_is_not_left_behind(
    discord: RunningEmulator, people: People, end: str
) -> None:
    held = _HeldPosts()
    async with RestClient(Secret(discord.token), api_base=discord.api_base, transport=held) as rest:
        live = LiveText(rest, discord.channel_id, interval=0.05)
        live.update("Hello from the ")
        await asyncio.wait_for(held.arrived.wait(), 10)
        [posted] = people.messages(discord.channel_id)  # in Discord, its id not back yet
        ending = asyncio.create_task(live.stop() if end == "stop" else live.finish())
        await asyncio.sleep(0.2)  # the job's end has cancelled the flush by now
        assert not ending.done()  # it waits for the post it found on its way
        held.release.set()
        kept = await asyncio.wait_for(ending, 10)
    if end == "stop":  # the preview handed to the final delivery, which deletes it
        assert kept == (str(posted["id"]),)
    else:
        assert people.messages(discord.channel_id) == []
