"""Following the gateway: a follower sleeps until there is news, delivers it in order, and takes
over from a holder that dies, losing nothing and repeating nothing.

The followers here are given fallback intervals of an hour: whatever they do promptly, a file
event made them do it, and their loop counts its wakeups.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
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
from discord_mcp.relay.link import LiveLink
from discord_mcp.relay.spool import SpoolWriter
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.settings import env_for, settings_for
from tests.support.stdio_peer import StdioPeer
from tests.support.waiting import until as eventually

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

HOUR = 3600.0


class Recorder:
    """A live handler that remembers what it was given, and whether its link held the gateway."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any], bool]] = []
        self.link: LiveLink | None = None

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        holding = self.link is not None and self.link.holding.is_set()
        self.events.append((name, data, holding))

    async def on_interaction(self, data: dict[str, Any]) -> None:
        pass

    def contents(self) -> list[str]:
        return [d.get("content", "") for n, d, _ in self.events if n == "MESSAGE_CREATE"]

    def numbers(self) -> list[int]:
        return [d["n"] for _, d, _ in self.events if "n" in d]


@contextlib.asynccontextmanager
async def following(
    settings: Settings, recorder: Recorder, *, notified: bool = True, **options: Any
) -> AsyncIterator[tuple[LiveLink, FileChanges]]:
    """A link running in this test (as another process's would), with hour-long fallbacks
    (``notified=False``: no notifications, so it polls at the intervals given)."""
    intervals = {"follow_interval": HOUR, "lock_retry": HOUR, "safety": HOUR}
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        FileChanges(enabled=notified) as changes,
    ):
        link = LiveLink(
            settings=settings,
            rest=rest,
            handler=recorder,
            program="discord-mcp",
            changes=changes,
            **(intervals | options),
        )
        recorder.link = link
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


async def test_a_follower_sleeps_until_the_holder_appends_and_delivers_in_order(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    gateway = home / "gateway"
    held = HolderLock(gateway / "holder.lock", presence=gateway / "holder.alive")
    assert held.try_acquire()  # the test is the holder
    writer = SpoolWriter(gateway / "spool.ndjson")
    recorder = Recorder()
    try:
        async with following(offline_settings(home), recorder) as (link, _changes):
            await eventually(link.following.is_set)
            for n in range(5):
                writer.append("MESSAGE_CREATE", {"n": n}, n + 1, session="s1")
                await eventually(lambda n=n: len(recorder.numbers()) == n + 1)
            assert recorder.numbers() == [0, 1, 2, 3, 4]
            # Each append woke it at most once (the writer keeps the spool open, so an append
            # is one write; the first also created the file), nothing else did.
            assert link.wakeups <= 5 + 1
            before = link.wakeups
            # The holder's status, rewritten beside the spool, is not news for a follower.
            for _ in range(3):
                write_status(
                    gateway / "status.json",
                    HolderStatus(pid=os.getpid(), program="test", state="ready", alive_at=0.0),
                )
            writer.append("MESSAGE_CREATE", {"n": 5}, 6, session="s1")
            await eventually(lambda: len(recorder.numbers()) == 6)
            assert link.wakeups - before <= 1
            assert not link.holding.is_set()
    finally:
        writer.close()
        held.release()


async def test_without_notifications_a_follower_polls_the_spool_and_the_lock(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    gateway = home / "gateway"
    held = HolderLock(gateway / "holder.lock", presence=gateway / "holder.alive")
    assert held.try_acquire()
    writer = SpoolWriter(gateway / "spool.ndjson")
    recorder = Recorder()
    polls = {"follow_interval": 0.02, "lock_retry": 0.05}
    try:
        async with following(settings_for(discord, home), recorder, notified=False, **polls) as (
            link,
            _changes,
        ):
            await eventually(link.following.is_set)
            for n in range(3):
                writer.append("MESSAGE_CREATE", {"n": n}, n + 1, session="s1")
            await eventually(lambda: recorder.numbers() == [0, 1, 2])
            held.release()
            await eventually(link.holding.is_set)
    finally:
        writer.close()
        held.release()


async def test_an_idle_follower_leaves_the_lock_alone_while_a_live_holder_says_it_holds(
    tmp_path: Path,
) -> None:
    """Its unprompted looks read the status instead: a lock attempt would wake every other
    follower's watch (the lock file is opened and closed)."""
    home = tmp_path / "home"
    gateway = home / "gateway"
    held = HolderLock(gateway / "holder.lock")
    assert held.try_acquire()
    elsewhere = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    status = HolderStatus(
        pid=elsewhere.pid, program="discord-mcp", state="ready", alive_at=time.time()
    )
    write_status(gateway / "status.json", status)
    recorder = Recorder()
    try:
        async with (
            FileChanges() as watching,
            following(offline_settings(home), recorder, safety=0.01) as (link, _),
        ):
            attempts = watching.subscribe(gateway, {"holder.lock"})
            await eventually(lambda: link.wakeups >= 20)
            assert attempts.take() == set()
            # Once the status is stale, it tries again (and its attempt is seen).
            write_status(gateway / "status.json", replace(status, alive_at=0.0))
            assert await attempts.wait(30)
            assert not link.holding.is_set()
    finally:
        held.release()
        elsewhere.kill()
        elsewhere.wait(timeout=10)


HOLD_THEN_DIE = """
import os, signal, sys
from pathlib import Path
from discord_mcp.relay.holder import HolderLock
from discord_mcp.relay.spool import SpoolWriter
gateway = Path(sys.argv[1])
lock = HolderLock(gateway / "holder.lock", presence=gateway / "holder.alive")
assert lock.try_acquire()
print("held", flush=True)
sys.stdin.readline()
writer = SpoolWriter(gateway / "spool.ndjson")
for n in range(3):
    writer.append("MESSAGE_CREATE", {"n": n}, n + 1, session="s1")
os.kill(os.getpid(), signal.SIGKILL)
"""


async def test_a_follower_takes_over_at_once_from_a_killed_holder_after_its_last_events(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    gateway = home / "gateway"
    gateway.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THEN_DIE, str(gateway)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    recorder = Recorder()
    try:
        assert holder.stdout is not None
        assert holder.stdin is not None
        assert await asyncio.to_thread(holder.stdout.readline) == "held\n"
        async with following(settings_for(discord, home), recorder) as (link, _changes):
            await eventually(link.following.is_set)
            holder.stdin.write("go\n")
            holder.stdin.flush()
            # No lock attempt is due for an hour: the dead holder's closed presence file is what
            # sends this follower to the lock.
            await eventually(link.holding.is_set)
            # Relayed before it held; handled in their lane (in order, once) as the handler's
            # pace allows, which may be after the gateway was taken.
            await eventually(lambda: len(recorder.numbers()) == 3)
            assert recorder.numbers() == [0, 1, 2]
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=10)
        for stream in (holder.stdin, holder.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def slow_discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05, gateway_heartbeat_scale=0.01)


async def test_a_handover_after_a_killed_holder_loses_nothing_and_repeats_nothing(
    slow_discord: RunningEmulator, tmp_path: Path
) -> None:
    """The successor resumes after the last event in the spool, even when the dead holder's
    status is older than that (the replay would repeat what the spool already has)."""
    discord = slow_discord
    people = People(discord)
    home = tmp_path / "home"
    status_path = home / "gateway" / "status.json"
    server = StdioPeer(env_for(discord, home, DISCORD_MCP_GATEWAY="auto"), tmp_path)
    watcher, successor = Recorder(), Recorder()
    settings = settings_for(discord, home)
    try:
        server.handshake()

        def live_holder() -> HolderStatus | None:
            status = read_status(status_path)
            return status if status is not None and status.connected(time.time()) else None

        before = await eventually(live_holder)
        assert before.pid == server.process.pid
        async with following(replace(settings, gateway="follow"), watcher, may_hold=False) as (
            watching,
            _,
        ):
            await eventually(watching.following.is_set)
            for n in range(3):
                await asyncio.to_thread(people.say, discord.channel_id, f"m{n}")
            await eventually(lambda: len(watcher.contents()) == 3)
            os.kill(server.process.pid, signal.SIGKILL)
            server.process.wait(timeout=10)
            # As if the holder had last written its status before those three messages.
            last = read_status(status_path)
            assert last is not None
            write_status(status_path, replace(last, seq=before.seq))
            for n in range(3, 5):
                await asyncio.to_thread(people.say, discord.channel_id, f"m{n}")
            async with following(settings, successor) as (link, _):
                await eventually(link.holding.is_set)
                await eventually(lambda: len(watcher.contents()) >= 5)
                await eventually(lambda: len(successor.contents()) >= 2)
                stats = people.state()["stats"]
        assert watcher.contents() == ["m0", "m1", "m2", "m3", "m4"]
        assert successor.contents() == ["m3", "m4"]
        assert stats["gateway_identifies"] == 1  # resumed, not a new session
        assert stats["gateway_resumes"] >= 1
    finally:
        server.close()
        people.close()
