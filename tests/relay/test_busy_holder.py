"""The gateway holder never makes Discord wait on its handlers: a click is acknowledged within
Discord's 3 seconds while a message's handling is stuck, the connection keeps its heartbeats
(no zombie close, no resume), and a channel's messages stay in order while another channel's
flow past the stuck one.

A real :class:`~discord_mcp.relay.link.LiveLink` holds the emulator's gateway in this test, as a
``discord-mcp`` server would; its handler is the test's, blocked on purpose. The emulator's
counters (failed interactions, resumes, connections) are the evidence, never the wall clock.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.relay.link import LiveLink
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.waiting import until


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    # Heartbeats every ~1.2 s: a read loop stuck for seconds would miss several ACKs. (At ~400 ms
    # a loaded machine's scheduling alone delayed one ACK past the next beat, and the client
    # rightly resumed: the test must measure the handler, not the machine's load.)
    return make_emulator(rate_limit_scale=0.01, gateway_heartbeat_scale=0.03)


async def heartbeats_past(people: People, count: int, seconds: float = 30.0) -> None:
    """Wait until the emulator has received ``count`` heartbeats, asking it off the event loop
    (a blocking call on the loop would delay the client's own heartbeats)."""
    async with asyncio.timeout(seconds):
        while (await asyncio.to_thread(people.state))["stats"]["gateway_heartbeats"] < count:
            await asyncio.sleep(0.05)


class StuckOnSlow:
    """Handles live events as a server would, except that a message saying ``slow`` keeps its
    handler busy until the test releases it. Clicks are answered at once (a deferred update)."""

    def __init__(self, rest: RestClient) -> None:
        self._rest = rest
        self.stuck = asyncio.Event()
        self.release = asyncio.Event()
        self.seen: list[tuple[str, str]] = []

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        if name != "MESSAGE_CREATE" or (data.get("author") or {}).get("bot"):
            return
        if data.get("content") == "slow":
            self.stuck.set()
            await self.release.wait()
        self.seen.append((str(data["channel_id"]), str(data.get("content"))))

    async def on_interaction(self, data: dict[str, Any]) -> None:
        await self._rest.create_interaction_response(str(data["id"]), str(data["token"]), 6)

    def said(self, channel_id: str) -> list[str]:
        return [content for channel, content in self.seen if channel == channel_id]


@contextlib.asynccontextmanager
async def holding(settings: Settings) -> AsyncIterator[tuple[LiveLink, StuckOnSlow, RestClient]]:
    async with RestClient(settings.token, api_base=settings.api_base) as rest:
        handler = StuckOnSlow(rest)
        link = LiveLink(settings=settings, rest=rest, handler=handler, program="discord-mcp")
        task = asyncio.create_task(link.run())
        try:
            await until(link.is_live)
            yield link, handler, rest
        finally:
            handler.release.set()
            await cancel_and_wait(task, within=10)


async def test_a_click_is_answered_in_time_while_a_message_handler_is_stuck(
    discord: RunningEmulator, people: People, tmp_path: Any
) -> None:
    settings = settings_for(discord, tmp_path / "home")
    channel = discord.channel_id
    async with holding(settings) as (link, handler, rest):
        card = await rest.create_message(
            channel,
            "Pick one",
            components=[
                {
                    "type": 1,
                    "components": [{"type": 2, "style": 1, "label": "Go", "custom_id": "go"}],
                }
            ],
        )
        thread = await rest.create_thread(channel, "elsewhere")
        before = await asyncio.to_thread(people.state)

        await asyncio.to_thread(people.say, channel, "slow")
        await until(handler.stuck.is_set)
        await asyncio.to_thread(people.say, channel, "after the slow one")
        clicked = await asyncio.to_thread(people.click, card["id"], "go")
        # Another channel's messages are handled, in order, while the first one waits.
        for text in ("one", "two", "three"):
            await asyncio.to_thread(people.say, thread["id"], text)
        await until(lambda: handler.said(thread["id"]) == ["one", "two", "three"])
        # Stay stuck for several heartbeat intervals: the connection must not look like a zombie.
        beats = before["stats"]["gateway_heartbeats"]
        await heartbeats_past(people, beats + 4)
        assert handler.said(channel) == []
        handler.release.set()
        await until(lambda: handler.said(channel) == ["slow", "after the slow one"])
        after = await asyncio.to_thread(people.state)
        assert link.is_live()

    assert clicked["acknowledged"] is True
    assert clicked["expired"] is False
    assert after["stats"]["interactions_failed"] == before["stats"]["interactions_failed"]
    for counter in ("gateway_resumes", "gateway_identifies", "gateway_connections_total"):
        assert after["stats"][counter] == before["stats"][counter], counter
