"""Lanes: handing live events over never waits; a channel's events keep their order; a full lane
is said out loud and left to the catch-up, never dropped silently."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from discord_mcp.relay.lanes import Lanes, lane_of


class Handler:
    """Records events; events whose data says ``hold`` wait until released."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.events: list[tuple[str, Any]] = []
        self.interactions: list[Any] = []

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        if data.get("hold"):
            await self.release.wait()
        self.events.append((data.get("channel_id") or data.get("id"), data.get("n")))

    async def on_interaction(self, data: dict[str, Any]) -> None:
        self.interactions.append(data["id"])

    def of(self, channel: str) -> list[Any]:
        return [n for c, n in self.events if c == channel]


async def settled(lanes: Lanes) -> None:
    async with asyncio.timeout(5):
        await lanes.idle()


def test_events_go_to_their_channels_lane() -> None:
    assert lane_of("MESSAGE_CREATE", {"channel_id": "1"}) == "1"
    assert lane_of("MESSAGE_REACTION_ADD", {"channel_id": "1", "message_id": "2"}) == "1"
    assert lane_of("THREAD_CREATE", {"id": "3", "parent_id": "1"}) == "3"
    assert lane_of("GUILD_CREATE", {"id": "9"}) == ""


async def test_a_stuck_channel_holds_up_only_itself_and_keeps_its_order() -> None:
    handler = Handler()
    lanes = Lanes(handler)
    lanes.submit("MESSAGE_CREATE", {"channel_id": "a", "n": 0, "hold": True})
    for n in range(1, 4):
        lanes.submit("MESSAGE_CREATE", {"channel_id": "a", "n": n})
    for n in range(3):
        lanes.submit("MESSAGE_CREATE", {"channel_id": "b", "n": n})
    lanes.submit("INTERACTION_CREATE", {"id": "click"})
    async with asyncio.timeout(5):
        while handler.of("b") != [0, 1, 2] or handler.interactions != ["click"]:
            await asyncio.sleep(0)
    assert handler.of("a") == []
    assert lanes.waiting() == 3
    handler.release.set()
    await settled(lanes)
    assert handler.of("a") == [0, 1, 2, 3]
    await lanes.aclose()


async def test_a_full_lane_is_logged_and_handed_to_the_catch_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    handler = Handler()
    overflowed: list[Any] = []
    lanes = Lanes(handler, lane_size=2, on_overflow=lambda name, data: overflowed.append(data["n"]))
    with caplog.at_level(logging.WARNING, logger="discord_mcp.relay.lanes"):
        lanes.submit("MESSAGE_CREATE", {"channel_id": "a", "n": 0, "hold": True})
        await asyncio.sleep(0)  # the worker takes the first one
        for n in range(1, 5):
            lanes.submit("MESSAGE_CREATE", {"channel_id": "a", "n": n})
    assert overflowed == [3, 4]
    assert lanes.overflows == 2
    assert "left to the catch-up" in caplog.text
    handler.release.set()
    await settled(lanes)
    assert handler.of("a") == [0, 1, 2]
    await lanes.aclose()


async def test_no_more_lanes_run_at_once_than_allowed() -> None:
    handler = Handler()
    lanes = Lanes(handler, working=2)
    for channel in "abc":
        lanes.submit("MESSAGE_CREATE", {"channel_id": channel, "n": 0, "hold": True})
    lanes.submit("INTERACTION_CREATE", {"id": "click"})
    async with asyncio.timeout(5):
        while handler.interactions != ["click"]:
            await asyncio.sleep(0)
    assert lanes.waiting() == 1  # two lanes are being handled, the third waits for a worker
    handler.release.set()
    await settled(lanes)
    assert sorted(c for c, _ in handler.events) == ["a", "b", "c"]
    await lanes.aclose()


async def test_closing_cancels_what_still_runs() -> None:
    handler = Handler()
    lanes = Lanes(handler)
    lanes.submit("MESSAGE_CREATE", {"channel_id": "a", "n": 0, "hold": True})
    await asyncio.sleep(0)
    async with asyncio.timeout(5):
        await lanes.aclose()
    assert lanes.waiting() == 0
    assert handler.events == []
