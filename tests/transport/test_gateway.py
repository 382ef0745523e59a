"""The gateway client against the emulator's gateway: every fault, and nothing lost after it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Secret
from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import GatewayError
from discord_mcp.relay.budget import IdentifyBudget
from discord_mcp.transport.gateway import MESSAGE_CONTENT, Gateway
from tests.support.people import People


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.01, gateway_heartbeat_scale=0.005)


@dataclass
class Seen:
    events: list[tuple[str, dict[str, Any], int | None]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def __call__(self, name: str, data: dict[str, Any], seq: int | None) -> None:
        self.events.append((name, data, seq))
        self.changed.set()

    def contents(self) -> list[str]:
        return [d.get("content", "") for n, d, _ in self.events if n == "MESSAGE_CREATE"]

    async def until(self, condition: Callable[[], bool], seconds: float = 10.0) -> None:
        async with asyncio.timeout(seconds):
            while not condition():
                self.changed.clear()
                await self.changed.wait()


@contextlib.asynccontextmanager
async def connected(
    discord: RunningEmulator, tmp_path: Path, token: str | None = None
) -> AsyncIterator[tuple[Gateway, Seen, asyncio.Task[None]]]:
    seen = Seen()
    gateway = Gateway(
        Secret(token or discord.token),
        url=discord.gateway_url,
        on_dispatch=seen,
        identify_guard=IdentifyBudget(tmp_path / "identifies.json", spacing=0.06),
    )
    task = asyncio.create_task(gateway.run())
    try:
        yield gateway, seen, task
    finally:
        await gateway.close()
        task.cancel()
        await asyncio.wait({task}, timeout=5)


async def ready(gateway: Gateway) -> None:
    async with asyncio.timeout(10):
        await gateway.ready.wait()


def stats(people: People) -> dict[str, int]:
    return dict(people.state()["stats"])


async def test_identify_ready_and_live_messages(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    async with connected(discord, tmp_path) as (gateway, seen, _task):
        await ready(gateway)
        people.say(discord.channel_id, "hello live")
        await seen.until(lambda: "hello live" in seen.contents())
        assert gateway.session.session_id
        assert gateway.session.resume_url
        assert stats(people)["gateway_identifies"] == 1
        assert stats(people)["gateway_connections_open"] == 1


FAULTS = {
    "dropped connection (1006)": {"drop": True},
    "close 4000": {"close": 4000},
    "reconnect (op 7)": {"reconnect": True},
    "resumable invalid session (op 9 true)": {"invalid_session": True},
    "zombie (no heartbeat ACKs)": {"stop_acks": True},
}


@pytest.mark.parametrize("fault", list(FAULTS), ids=list(FAULTS))
async def test_after_a_resumable_fault_every_event_arrives_once_in_sequence(
    fault: str, discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    async with connected(discord, tmp_path) as (gateway, seen, _task):
        await ready(gateway)
        people.say(discord.channel_id, "before")
        await seen.until(lambda: "before" in seen.contents())
        gateway.ready.clear()
        people.fault(gateway=FAULTS[fault])
        people.say(discord.channel_id, "during")  # while reconnecting, or just after
        await ready(gateway)
        people.say(discord.channel_id, "after")
        await seen.until(lambda: "after" in seen.contents())
        assert seen.contents() == ["before", "during", "after"]
        sequence = [s for _, _, s in seen.events if s is not None]
        assert sequence == list(range(sequence[0], sequence[0] + len(sequence)))
        counters = stats(people)
        assert counters["gateway_identifies"] == 1
        assert counters["gateway_resumes"] >= 1
        assert counters["gateway_connections_open"] == 1


async def test_a_non_resumable_invalid_session_identifies_anew(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    async with connected(discord, tmp_path) as (gateway, seen, _task):
        await ready(gateway)
        first_session = gateway.session.session_id
        gateway.ready.clear()
        people.fault(gateway={"invalid_session": False})
        await ready(gateway)
        people.say(discord.channel_id, "new session")
        await seen.until(lambda: "new session" in seen.contents())
        assert gateway.session.session_id != first_session
        assert stats(people)["gateway_identifies"] == 2


async def test_a_rejected_token_stops_with_what_to_fix(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    async with connected(discord, tmp_path, token="not-the-token") as (_gateway, _seen, task):
        with pytest.raises(GatewayError, match="DISCORD_BOT_TOKEN") as caught:
            async with asyncio.timeout(10):
                await task
    assert caught.value.close_code == 4004
    assert "not-the-token" not in str(caught.value)


async def test_a_refused_message_content_intent_logs_in_without_it_and_says_which_toggle(
    discord: RunningEmulator, people: People, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 33: a 4014 once stopped the gateway for good, and every click with it.
    people.fault(message_content_intent_enabled=False)
    async with connected(discord, tmp_path) as (gateway, seen, task):
        await ready(gateway)
        people.say(discord.channel_id, "words the bot may not read")
        await seen.until(lambda: len(seen.contents()) == 1)
        assert not task.done()
    assert gateway.content is False
    assert seen.contents() == [""]  # the message came, its text withheld
    [session] = people.state()["gateway_sessions"]
    assert not int(session["intents"]) & MESSAGE_CONTENT
    said = [r.getMessage() for r in caplog.records if "4014" in r.getMessage()]
    assert said
    assert "Privileged Gateway Intents > Message Content Intent" in said[0]
    assert "slash commands keep working" in said[0]


async def test_close_keeps_the_session_resumable_for_a_successor(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    async with connected(discord, tmp_path) as (gateway, seen, task):
        await ready(gateway)
        people.say(discord.channel_id, "seen by the first")
        await seen.until(lambda: "seen by the first" in seen.contents())
        session = gateway.session
        await gateway.close()
        async with asyncio.timeout(5):
            await task  # the loop ends instead of resuming
    people.say(discord.channel_id, "missed by both")
    successor_seen = Seen()
    successor = Gateway(
        Secret(discord.token),
        url=discord.gateway_url,
        on_dispatch=successor_seen,
        identify_guard=IdentifyBudget(tmp_path / "identifies.json", spacing=0.06),
        session=session,
    )
    running = asyncio.create_task(successor.run())
    try:
        await successor_seen.until(lambda: "missed by both" in successor_seen.contents())
        assert stats(people)["gateway_identifies"] == 1  # resumed, no new identify
    finally:
        await successor.close()
        await asyncio.wait({running}, timeout=5)
