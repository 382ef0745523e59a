"""A follower with interests reads its mailbox: it is woken by the events of the threads it
wants and by nothing else, and keeps getting them across a holder that is killed and replaced,
including threads it asked for while no holder ran.

The followers here are given fallback intervals of an hour: whatever they do promptly, a file
event made them do it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.relay.fswatch import FileChanges
from discord_mcp.relay.holder import HolderLock, HolderStatus, read_status, write_status
from discord_mcp.relay.interest import Interests, Router
from discord_mcp.relay.link import LiveLink
from discord_mcp.relay.spool import SpoolWriter, encode
from discord_mcp.state.leases import ProcessLease
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.settings import env_for, settings_for
from tests.support.stdio_peer import StdioPeer
from tests.support.waiting import until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

HOUR = 3600.0
WANTED, OTHER = "1200000000000000001", "1200000000000000002"


class Recorder:
    """A live handler that remembers the messages it was given."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        self.events.append((name, data))

    async def on_interaction(self, data: dict[str, Any]) -> None:
        pass

    def contents(self) -> list[str]:
        return [d.get("content", "") for n, d in self.events if n == "MESSAGE_CREATE"]


@contextlib.asynccontextmanager
async def linked(
    settings: Settings, recorder: Recorder, **options: Any
) -> AsyncIterator[tuple[LiveLink, FileChanges]]:
    """A link running in this test (as another process's would), with hour-long fallbacks."""
    intervals = {"follow_interval": HOUR, "lock_retry": HOUR, "safety": HOUR}
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        FileChanges() as changes,
    ):
        link = LiveLink(
            settings=settings,
            rest=rest,
            handler=recorder,
            program="discord-mcp",
            changes=changes,
            **(intervals | options),
        )
        task = asyncio.create_task(link.run())
        try:
            yield link, changes
        finally:
            await cancel_and_wait(task, within=10)


def offline_settings(home: Path) -> Settings:
    return Settings.from_env(
        {
            "DISCORD_BOT_TOKEN": "test.token.value",
            "DISCORD_CHANNEL_ID": "123456789012345678",
            "DISCORD_OWNER_IDS": "223456789012345678",
            "DISCORD_MCP_HOME": str(home),
            "DISCORD_API_BASE": "http://127.0.0.1:9/api/v10",
        },
        read_dotenv=False,
    )


async def test_a_follower_is_woken_only_by_the_events_of_the_threads_it_wants(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    gateway = home / "gateway"
    held = HolderLock(gateway / "holder.lock", presence=gateway / "holder.alive")
    assert held.try_acquire()  # the test is the holder: it routes, then spools, as one does
    lease = ProcessLease(home)
    interests = Interests(home, lease.name)
    router = Router(home)
    recorder = Recorder()

    def relay(thread_id: str, content: str, seq: int) -> None:
        data = {"channel_id": thread_id, "content": content}
        line = encode("MESSAGE_CREATE", data, seq, session="s1")
        router.route(thread_id, line)
        writer.write(line)

    try:
        with SpoolWriter(gateway / "spool.ndjson") as writer:
            async with linked(offline_settings(home), recorder, interests=interests) as (
                link,
                changes,
            ):
                await until(link.following.is_set, 30)
                assert interests.want(WANTED)
                woken, kernel = link.wakeups, changes.wakeups
                for n in range(40):  # a busy holder: other threads, the main channel
                    relay(OTHER if n % 2 else "123456789012345678", f"other {n}", n + 1)
                for _ in range(3):  # the holder's status, rewritten beside the spool
                    write_status(
                        gateway / "status.json",
                        HolderStatus(pid=os.getpid(), program="t", state="ready", alive_at=0.0),
                    )
                relay(WANTED, "mine", 41)
                await until(lambda: recorder.contents() == ["mine"], 30)
                assert link.wakeups - woken <= 1
                assert changes.wakeups - kernel <= 1
                relay(WANTED, "mine again", 42)
                await until(lambda: recorder.contents() == ["mine", "mine again"], 30)
                assert not link.holding.is_set()
    finally:
        held.release()
        interests.close()
        lease.close()


@pytest.fixture
def slow_discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05, gateway_heartbeat_scale=0.01)


async def test_a_follower_keeps_its_threads_across_a_killed_holder_and_one_that_came_later(
    slow_discord: RunningEmulator, tmp_path: Path
) -> None:
    """A server holds, a follower (which never holds) asks for a thread, the holder is killed;
    the follower asks for a second thread while nobody holds; a new holder takes over. Every
    message of both threads reaches the follower once, and nothing else does."""
    discord = slow_discord
    people = People(discord)
    home = tmp_path / "home"
    settings = settings_for(discord, home)
    server = StdioPeer(env_for(discord, home, DISCORD_MCP_GATEWAY="auto"), tmp_path)
    lease = ProcessLease(home)
    interests = Interests(home, lease.name)
    follower, successor = Recorder(), Recorder()

    def holder() -> int | None:
        status = read_status(home / "gateway" / "status.json")
        return status.pid if status is not None and status.connected(time.time()) else None

    try:
        server.handshake()
        await until(lambda: holder() == server.process.pid, 30)
        async with RestClient(settings.token, api_base=settings.api_base) as rest:
            first = (await rest.create_thread(settings.channel_id, "first"))["id"]
            second = (await rest.create_thread(settings.channel_id, "second"))["id"]
        async with linked(
            replace(settings, gateway="follow"), follower, may_hold=False, interests=interests
        ) as (link, _):
            await until(link.following.is_set, 30)
            assert interests.want(first)
            await asyncio.to_thread(people.say, first, "a")
            await asyncio.to_thread(people.say, discord.channel_id, "not for it")
            await until(lambda: follower.contents() == ["a"], 30)
            os.kill(server.process.pid, signal.SIGKILL)
            server.process.wait(timeout=10)
            assert interests.want(second)  # nobody holds the gateway now
            async with linked(settings, successor) as (taken, _):
                await until(taken.holding.is_set, 30)
                for thread, content in ((second, "b"), (discord.channel_id, "no"), (first, "c")):
                    await asyncio.to_thread(people.say, thread, content)
                await until(lambda: len(follower.contents()) >= 3, 30)
                await until(lambda: "c" in successor.contents(), 30)
        assert follower.contents() == ["a", "b", "c"]
    finally:
        server.close()
        people.close()
        interests.close()
        lease.close()
