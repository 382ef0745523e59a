"""Presence records kept in Discord: one message per machine in one thread, edited at most once a
minute, read by every machine from Discord alone."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from discord_mcp.config import Secret
from discord_mcp.emulator import Exchange, RunningEmulator
from discord_mcp.outbound.sending import SendRedaction
from discord_mcp.team.presence import (
    SECOND_READ_S,
    THREAD_NAME,
    WRITE_EVERY_S,
    Presence,
    read_snapshot,
)
from discord_mcp.team.records import MachineRecord, Waiting, parse
from discord_mcp.team.roster import Roster
from discord_mcp.team.signing import RecordKey
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.display import render_status
from tests.support.people import People


class Ticks:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def describing(*projects: str, waiting: tuple[Waiting, ...] = ()) -> Callable[[], object]:
    async def describe() -> MachineRecord:
        return MachineRecord(name="", instance="", up_since=0, projects=projects, waiting=waiting)

    return describe


def presence_threads(people: People) -> list[dict[str, object]]:
    return [c for c in people.state()["channels"] if c.get("name") == THREAD_NAME]


def records(people: People, thread_id: str) -> list[MachineRecord]:
    key = RecordKey(Secret(people.emulator.token))
    found = [parse(m, key=key) for m in people.messages(thread_id)]
    return [r for r in found if r is not None]


async def test_each_machine_keeps_one_record_and_reads_the_others_from_discord(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    async with RestClient(Secret(discord.token), api_base=discord.api_base) as rest:
        laptop, server = Roster("laptop"), Roster("server")
        first = Presence(
            rest=rest,
            channel_id=discord.channel_id,
            roster=laptop,
            key=RecordKey(Secret(discord.token)),
            describe=describing("app"),  # type: ignore[arg-type]
            home=tmp_path / "laptop",
        )
        second = Presence(
            rest=rest,
            channel_id=discord.channel_id,
            roster=server,
            key=RecordKey(Secret(discord.token)),
            describe=describing("api"),  # type: ignore[arg-type]
        )
        await first.tick()
        await second.tick()  # finds laptop's thread, reads its record, writes its own
        [thread] = presence_threads(people)
        assert {r.name for r in records(people, str(thread["id"]))} == {"laptop", "server"}
        assert [r.name for r in server.live_others()] == ["laptop"]
        assert server.live_others()[0].projects == ("app",)
        [written] = [r for r in records(people, str(thread["id"])) if r.name == "server"]
        assert laptop.signature in written.knows  # so laptop knows server has read it
        # laptop learns of server from the gateway's MESSAGE_CREATE, here handed over by hand
        message = next(m for m in people.messages(str(thread["id"])) if "`server`" in m["content"])
        first.on_event("MESSAGE_CREATE", message)
        assert [r.name for r in laptop.live_others()] == ["server"]
        assert laptop.hosts("api") == ["server"]
        await first.tick()  # within the minute: reads, keeps its snapshot, writes nothing
    status = await asyncio.to_thread(render_status, tmp_path / "laptop")
    assert "machine: laptop; sharing the bot with server (live)" in status  # discord-watch status
    snapshot = read_snapshot(tmp_path / "laptop")
    assert snapshot is not None
    assert snapshot["machine"] == "laptop"


async def test_a_record_is_edited_at_most_once_a_minute(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    edits: list[str] = []

    def seen(exchange: Exchange) -> None:
        if exchange.method == "PATCH" and "/messages/" in exchange.path:
            edits.append(exchange.path)

    discord = make_emulator(rate_limit_scale=0.01, exchange_hook=seen)
    ticks = Ticks()
    async with RestClient(Secret(discord.token), api_base=discord.api_base) as rest:
        presence = Presence(
            rest=rest,
            channel_id=discord.channel_id,
            roster=Roster("laptop"),
            key=RecordKey(Secret(discord.token)),
            describe=describing("app"),  # type: ignore[arg-type]
            monotonic=ticks,
        )
        await presence.tick()  # posts the record
        for _ in range(5):
            ticks.now += 10
            await presence.tick()  # reads, but the minute is not over: no edit
        assert edits == []
        ticks.now += WRITE_EVERY_S - 50
        await presence.tick()
        assert len(edits) == 1


class ListedTooEarly:
    """The REST client of a machine that listed the threads just before another opened one:
    its first list comes back empty (a narrow scripted race; everything else is the client)."""

    def __init__(self, rest: RestClient) -> None:
        self._rest = rest
        self._lists = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self._rest, name)

    async def list_active_threads(self, guild_id: str) -> list[object]:
        self._lists += 1
        if self._lists == 1:
            return []
        return list(await self._rest.list_active_threads(guild_id))


async def test_two_machines_that_open_the_thread_at_once_end_up_in_one(
    discord: RunningEmulator, people: People
) -> None:
    ticks = Ticks()
    async with RestClient(Secret(discord.token), api_base=discord.api_base) as rest:
        laptop, server = (
            Presence(
                rest=client,  # type: ignore[arg-type]
                channel_id=discord.channel_id,
                roster=Roster(name),
                key=RecordKey(Secret(discord.token)),
                describe=describing(),  # type: ignore[arg-type]
                monotonic=ticks,
            )
            for name, client in (("laptop", rest), ("server", ListedTooEarly(rest)))
        )
        await laptop.tick()
        await server.tick()  # it did not see laptop's thread: it opens a second one
        assert len(presence_threads(people)) == 2
        assert laptop.roster.live_others() == []
        ticks.now += WRITE_EVERY_S
        await laptop.tick()  # now both threads are listed, and read
        assert [r.name for r in laptop.roster.live_others()] == ["server"]
        await server.tick()  # its record moves to the thread with the lowest id
    lowest, other = sorted((str(t["id"]) for t in presence_threads(people)), key=int)
    assert {r.name for r in records(people, lowest)} == {"laptop", "server"}
    assert records(people, other) == []


class Stopped(Exception):
    """Ends a presence loop in a test."""


async def test_machines_started_at_the_same_moment_know_each_other_seconds_later_not_a_minute(
    discord: RunningEmulator, people: People
) -> None:
    # Both write their first record before either gateway is up to bring the other's: the
    # second read, seconds later, finds the other thread and record (issue 33's bench: three
    # machines each answering commands as if alone for a minute, every command run twice).
    ticks = Ticks()
    waits: list[float] = []
    server_started = asyncio.Event()

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:
            raise Stopped
        await server_started.wait()
        ticks.now += seconds

    async with RestClient(Secret(discord.token), api_base=discord.api_base) as rest:
        laptop, server = (
            Presence(
                rest=client,  # type: ignore[arg-type]
                channel_id=discord.channel_id,
                roster=Roster(name),
                key=RecordKey(Secret(discord.token)),
                describe=describing(),  # type: ignore[arg-type]
                monotonic=ticks,
                sleep=sleep,
            )
            for name, client in (("laptop", rest), ("server", ListedTooEarly(rest)))
        )
        running = asyncio.create_task(laptop.run())
        await asyncio.wait_for(laptop.read_once.wait(), 30)
        await server.tick()  # it did not see laptop's thread: it opens a second one
        assert laptop.roster.live_others() == []
        server_started.set()
        with pytest.raises(Stopped):
            await asyncio.wait_for(running, 30)
    assert waits[0] == SECOND_READ_S < WRITE_EVERY_S
    assert [r.name for r in laptop.roster.live_others()] == ["server"]


async def test_a_record_carries_no_secret(discord: RunningEmulator, people: People) -> None:
    token = discord.token
    leak = Waiting("app", "question", f"use {token} to deploy?", "900000000000000040", "", "")
    async with RestClient(
        Secret(token), api_base=discord.api_base, outbound=SendRedaction([token])
    ) as rest:
        presence = Presence(
            rest=rest,
            channel_id=discord.channel_id,
            roster=Roster("laptop"),
            key=RecordKey(Secret(discord.token)),
            describe=describing("app", waiting=(leak,)),  # type: ignore[arg-type]
        )
        await presence.tick()
    [thread] = presence_threads(people)
    [message] = people.messages(str(thread["id"]))
    assert token not in message["content"]
    [record] = records(people, str(thread["id"]))
    assert record.waiting_total == 1


async def test_a_machine_starting_after_the_thread_archived_reopens_it_rather_than_open_another(
    discord: RunningEmulator, people: People
) -> None:
    # Issue 33: edits are not activity, so the thread archives a week after its last new
    # message; a machine starting then used to open a second one.
    async with RestClient(Secret(discord.token), api_base=discord.api_base) as rest:
        first = Presence(
            rest=rest,
            channel_id=discord.channel_id,
            roster=Roster("laptop"),
            key=RecordKey(Secret(discord.token)),
            describe=describing("app"),  # type: ignore[arg-type]
        )
        await first.tick()
        [thread] = presence_threads(people)
        for _ in range(3):  # three weeks of edits, no new message
            people.advance(7 * 24 * 3600 / 3 + 60)
            await first.tick()
        people.advance(8 * 24 * 3600)
        assert presence_threads(people)[0]["thread_metadata"]["archived"] is True
        later = Presence(
            rest=rest,
            channel_id=discord.channel_id,
            roster=Roster("server"),
            key=RecordKey(Secret(discord.token)),
            describe=describing("api"),  # type: ignore[arg-type]
        )
        await later.tick()
    [still] = presence_threads(people)
    assert still["id"] == thread["id"]
    assert still["thread_metadata"]["archived"] is False
    assert later.threads == [str(thread["id"])]
    # (The records' signatures are not checked here: Discord's clock was moved weeks ahead.)
