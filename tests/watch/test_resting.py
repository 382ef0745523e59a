"""A year of threads costs a pass nothing (issue 38): a thread Discord archived (or, when the
list of active threads cannot be had, one silent for a week) rests, out of ``cursors.json``,
which is written after every message; a pass reads it again when Discord lists it as active
(or, after a long downtime, among the threads archived meanwhile), and one resting for three
months is forgotten."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.cursors import FORGET_AFTER_S, Cursors, snowflake_seconds
from discord_mcp.watch.quiet import wake_resting
from discord_mcp.watch.recovery import snowflake_at
from tests.support.people import People
from tests.support.settings import settings_for

NOW = 1_790_000_000.0
DAY = 86400.0


def thread_at(seconds: float, n: int = 0) -> str:
    return str(int(snowflake_at(seconds)) + n)


def stored(path: Path) -> dict[str, object]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


async def test_an_idle_thread_rests_wakes_with_its_cursor_and_is_forgotten_later(
    tmp_path: Path,
) -> None:
    cursors = Cursors(tmp_path)
    main = "1000000000000000001"
    cursors.watch(main, start=thread_at(NOW - 30 * DAY))
    idle = thread_at(NOW - 20 * DAY, 1)
    cursors.watch(idle, parent_id=main, start=None)
    cursors.advance(idle, thread_at(NOW - 8 * DAY, 2))  # its last message, 8 days ago
    busy = thread_at(NOW - 20 * DAY, 3)
    cursors.watch(busy, parent_id=main, start=None)
    cursors.handled_live(busy, thread_at(NOW - DAY, 4))  # written in yesterday
    kept = thread_at(NOW - 20 * DAY, 5)  # idle, but a job of its run is still running
    cursors.watch(kept, parent_id=main, start=None)
    await cursors.load_resting()

    assert cursors.rest(NOW, active=None, keep=lambda t: t == kept) == 1
    await cursors.flush()

    assert set(cursors.channels()) == {main, busy, kept}  # a channel never rests
    assert set(stored(cursors.path)["channels"]) == {main, busy, kept}  # type: ignore[arg-type]
    assert list(stored(cursors.resting_path)["threads"]) == [idle]  # type: ignore[call-overload]
    again = Cursors(tmp_path)  # a restart
    assert idle not in again.channels()
    await again.load_resting()
    assert not again.watch(idle, parent_id=main, start=None)  # our own state: it rests on
    assert again.watch(idle, parent_id=main, start=None, revive=True)  # a live message wakes it
    assert again.channels()[idle].cursor == thread_at(NOW - 8 * DAY, 2)
    assert again.rest(NOW + FORGET_AFTER_S, active=None, keep=lambda t: False) == 3
    assert again.rest(NOW + FORGET_AFTER_S + 9 * DAY, active=None, keep=lambda t: False) == 0
    assert await again.load_resting() == {}  # forgotten after three months at rest
    assert snowflake_seconds(thread_at(NOW)) == NOW


async def test_an_archived_thread_rests_and_a_pass_reads_it_again_once_it_is_written_in(
    discord: RunningEmulator, tmp_path: Path, people: People
) -> None:
    settings: Settings = settings_for(discord, tmp_path / "home")
    async with RestClient(settings.token, api_base=settings.api_base) as rest:
        busy = (await rest.create_thread(settings.channel_id, "still going"))["id"]
        done = (await rest.create_thread(settings.channel_id, "answered"))["id"]
        await rest.archive_thread(done)  # as a question's own thread once it is done
        cursors = Cursors(settings.home)
        for thread in (busy, done):
            cursors.watch(thread, parent_id=settings.channel_id, start=None)

        async def a_pass(hours: float) -> set[str] | None:
            active, _ = await wake_resting(
                cursors, rest, settings.channel_id, down_since=None, guild_id=None
            )
            cursors.rest(
                snowflake_seconds(done) + hours * 3600, active=active, keep=lambda t: False
            )
            return active

        assert await a_pass(0.5) == {busy}
        assert set(cursors.channels()) == {busy, done}  # quiet for less than an hour yet
        await a_pass(2)
        assert list(cursors.channels()) == [busy]  # archived and quiet: it rests

        await asyncio.to_thread(people.say, done, "one more thing")  # unarchives it
        assert await a_pass(2) == {busy, done}
        assert set(cursors.channels()) == {busy, done}

        # Archived again: it rests again, and no pass reads it while it stays so.
        await rest.archive_thread(done)
        await a_pass(8 * 24)
        await a_pass(8 * 24)
        assert list(cursors.channels()) == [busy]


async def test_after_a_downtime_only_the_resting_threads_archived_meanwhile_are_read_again(
    discord: RunningEmulator, tmp_path: Path, people: People
) -> None:
    settings: Settings = settings_for(discord, tmp_path / "home")
    channel = settings.channel_id
    async with RestClient(settings.token, api_base=settings.api_base) as rest:
        threads = [(await rest.create_thread(channel, f"question {n}"))["id"] for n in range(3)]
        for thread in threads:
            await rest.archive_thread(thread)  # answered, their threads archived
        cursors = Cursors(settings.home)
        for thread in threads:
            cursors.watch(thread, parent_id=channel, start=None)
        await cursors.load_resting()
        archived_at = snowflake_seconds(threads[-1])
        cursors.rest(archived_at + 8 * DAY, active=set(), keep=lambda t: False)
        assert cursors.channels() == {}
        quiet, written, also_quiet = threads

        # The daemon was last alive an hour after; two hours later, while it is down, the
        # owner writes in one of the threads (which unarchives it) and it is archived again.
        down_since = archived_at + 3600
        await asyncio.to_thread(people.advance, 2 * 3600)
        await asyncio.to_thread(people.say, written, "one more thing, about the retry")
        await rest.archive_thread(written)
        active, _ = await wake_resting(cursors, rest, channel, down_since=down_since, guild_id=None)

        assert written not in (active or set())  # Discord no longer lists it as active
        assert list(cursors.channels()) == [written]  # read again; the others rest on
        assert set(await cursors.load_resting()) == {quiet, also_quiet}

        # When the archived threads cannot be listed, every resting thread is read: none missed.
        people.fault(
            route="GET /channels/{channel_id}/threads/archived/public",
            status=403,
            code=50001,
            count=1,
        )
        await wake_resting(cursors, rest, channel, down_since=down_since, guild_id=None)
        assert set(cursors.channels()) == set(threads)


async def test_the_threads_archived_since_a_moment_are_listed_page_after_page(
    discord: RunningEmulator, tmp_path: Path, people: People
) -> None:
    settings: Settings = settings_for(discord, tmp_path / "home")
    channel = settings.channel_id
    async with RestClient(settings.token, api_base=settings.api_base) as rest:
        older = [(await rest.create_thread(channel, f"old {n}"))["id"] for n in range(5)]
        for thread in older:
            await rest.archive_thread(thread)
        await asyncio.to_thread(people.advance, 3600)
        since = snowflake_seconds(older[-1]) + 1800
        newer = [(await rest.create_thread(channel, f"new {n}"))["id"] for n in range(230)]
        for thread in newer:
            await rest.archive_thread(thread)  # many in one millisecond: ties across pages

        found = await rest.public_threads_archived_since(channel, since)

        ids = [str(t["id"]) for t in found]
        assert sorted(ids) == sorted(newer)  # each once, none of the older, across 3+ pages
        assert await rest.public_threads_archived_since(channel, since + 7 * DAY) == []
