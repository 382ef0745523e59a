"""discord-watch answers clicks and commands within Discord's 3 seconds whatever else it is
doing: here it is stuck on an owner's ``!status`` whose reply is rate limited for 8 seconds
(the emulator's scripted 429), while a card's button is clicked and ``/status`` is run.

The emulator enforces the deadline and counts failed interactions; its gateway counters show
that the connection stayed up (no zombie close, no resume) through the long wait.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from discord_mcp.config import Settings
from discord_mcp.decisions.questions import Question
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from tests.support.fake_agents import FakeSpawner
from tests.support.people import People
from tests.support.slash import Slash
from tests.support.waiting import until
from tests.watch.conftest import live_daemon
from tests.watch.test_daemon import inbox_contents

HELD_S = 8.0


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    # Heartbeats every ~2 s: eight seconds stuck in a read loop would miss four ACKs. (Every
    # ~400 ms, a machine loaded by the rest of the suite delayed an ACK past the next beat, a
    # zombie close the counters below then blamed on the wait.)
    return make_emulator(rate_limit_scale=0.01, gateway_heartbeat_scale=0.05)


@contextlib.asynccontextmanager
async def asking(settings: Settings) -> AsyncIterator[DecisionService]:
    """An agent's server on the same state directory, whose cards get buttons (the daemon holds
    a live gateway)."""
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        Background() as background,
    ):
        yield DecisionService(
            settings=settings,
            rest=rest,
            store=DecisionStore(settings.home),
            background=background,
            live=lambda: True,
        )


async def until_off_loop(condition: Callable[[], Any], seconds: float = 15.0) -> Any:
    """Wait for a condition that asks the emulator over HTTP: asked in a worker thread, so the
    daemon on this event loop keeps its heartbeats while the test waits."""
    async with asyncio.timeout(seconds):
        while not (value := await asyncio.to_thread(condition)):
            await asyncio.sleep(0.05)
    return value


def replies_to(people: People, channel_id: str, message_id: str) -> list[dict[str, Any]]:
    return [
        m
        for m in people.messages(channel_id)
        if (m.get("message_reference") or {}).get("message_id") == message_id
    ]


def button(card: dict[str, Any], label: str) -> str:
    return next(
        str(c["custom_id"])
        for row in card["components"]
        for c in row["components"]
        if str(c.get("label", "")).startswith(label)
    )


async def test_a_click_and_a_command_are_answered_while_a_message_waits_out_a_rate_limit(
    live_settings: Settings,
    fake_spawner: FakeSpawner,
    discord: RunningEmulator,
    people: People,
    slash: Slash,
) -> None:
    channel = live_settings.channel_id
    async with (
        live_daemon(live_settings, fake_spawner, discord),
        asking(live_settings) as service,
    ):
        decision, _ = await service.ask(Question("Deploy to staging?", options=("Deploy", "Hold")))
        card = (await asyncio.to_thread(people.messages, decision.thread_id))[0]
        before = (await asyncio.to_thread(people.state))["stats"]

        # The daemon's reply to the owner's !status meets a 429 that says: retry in 8 s.
        await asyncio.to_thread(
            people.fault,
            route="POST /channels/{channel_id}/messages",
            status=429,
            retry_after=HELD_S,
            count=1,
        )
        asked = await asyncio.to_thread(people.say, channel, "!status")
        await until_off_loop(lambda: people.state()["stats"]["rest_429"] > before["rest_429"])

        clicked = await asyncio.to_thread(people.click, card["id"], button(card, "B."))
        command = await slash.run("status")
        answered = service.store.load(decision.id)
        # Another thread's messages are not held up behind the channel's: a note after the
        # answer reaches the inbox while the !status reply still waits.
        await asyncio.to_thread(people.say, decision.thread_id, "and tag the release after")
        await until(lambda: "and tag the release after" in inbox_contents(live_settings))
        replied_by_then = await asyncio.to_thread(replies_to, people, channel, asked["id"])
        # The !status reply arrives once its rate limit has passed, on the same connection.
        await until_off_loop(lambda: replies_to(people, channel, asked["id"]), seconds=HELD_S + 15)
        after = (await asyncio.to_thread(people.state))["stats"]

    assert clicked["acknowledged"] is True
    assert clicked["expired"] is False
    assert clicked["response_type"] == 7
    assert answered.status == "answered"
    assert answered.selected_option == "Hold"
    assert command["acknowledged"] is True
    assert command["expired"] is False
    assert replied_by_then == []
    assert after["interactions_failed"] == before["interactions_failed"]
    for counter in ("gateway_resumes", "gateway_identifies", "gateway_connections_total"):
        assert after[counter] == before[counter], counter
