"""Each machine's presence record, kept in Discord: written once a minute, read by every machine.

Theory. There is no server of ours and no shared disk: the machines sharing a bot meet in a
thread of the configured channel, ``discord-mcp machines``, which the first machine to need it
opens (public, archived after 7 days without a new message, since edits are not activity; a
machine that knew it reopens it by writing, and one that did not looks for it among the
channel's archived threads and reopens it there: never a second thread). Each machine keeps one
message there, its record (:mod:`~discord_mcp.team.records`), and edits it at most once every
:data:`WRITE_EVERY_S`. Every minute it also lists the guild's active threads (to find the
thread, and any duplicate two machines opened at the same moment) and reads the records there;
between reads, the gateway brings every other machine's edit as a MESSAGE_UPDATE. Three requests
a minute per machine, whatever happens. Only the second read comes sooner, :data:`SECOND_READ_S`
after the first: machines started at the same moment write their first records (and may open a
thread each) before their gateways are connected to bring them each other's, and would otherwise
each think itself alone for a minute, answering the same commands.

Two machines that opened a thread each at the same moment both see both at their next read:
the one with the lowest id is *the* thread, a record in another one is written again there and
deleted where it was. Records are read from every such thread until then, so no machine is
missed meanwhile.

Records are signed (:mod:`~discord_mcp.team.signing`): one without a valid signature is not a
machine (an agent made the bot post it, or a discord-watch older than signing wrote it), and is
logged once per machine name and reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from discord_mcp import __version__
from discord_mcp.errors import DiscordError, DiscordMCPError, NotFound, StateError, Unauthorized
from discord_mcp.state.files import off_loop, write_json
from discord_mcp.team.records import MachineRecord, Rejected, parse, read, render
from discord_mcp.team.roster import Roster
from discord_mcp.team.signing import RecordKey
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)

THREAD_NAME = "discord-mcp machines"
WRITE_EVERY_S = 60.0
"""A machine edits its record at most this often (and reads the others' as often)."""
ARCHIVE_AFTER_MIN = 10080
"""The thread's ``auto_archive_duration``: a week, the longest Discord allows."""
SECOND_READ_S = 10.0
"""The second read comes this soon after the first (module doc)."""
THREADS_READ_MAX = 3
"""Presence threads read at most (more exist only after repeated simultaneous starts)."""
SNAPSHOT = "machines.json"

REJECTED_KEPT = 256
"""Rejected records (by machine name and reason) already logged, kept at most."""
WHY_REJECTED = {
    "unsigned": "it carries no signature: written by a discord-watch older than signed records "
    "(upgrade every machine that shares the bot), or posted by something else",
    "bad": "its signature is wrong: not written by a discord-watch with this bot's token, or "
    "changed on the way",
    "stale": "it was signed long before Discord stored it: a copy of an older record (or that "
    "machine's clock is off by more than ten minutes)",
}

Describe = Callable[[], Awaitable[MachineRecord]]
"""What this machine has right now: its projects, running jobs, waiting questions, gateway."""


class Presence:
    """This machine's presence record, and everyone's as read from Discord.

    Args:
        rest: the REST client.
        channel_id: the configured channel (the thread is opened under it).
        roster: where the records read go.
        key: signs this machine's record and checks the others' (from the bot token).
        describe: this machine's current record (name, instance and times are filled in here).
        home: the state directory (``team/machines.json``: the last roster, for
            ``discord-watch status``).
        every: seconds between writes (and reads).
        sharers: told after each read how many machines are live (this one included): the
            rate limiter's share of a bucket they spend together.
    """

    def __init__(
        self,
        *,
        rest: RestClient,
        channel_id: str,
        roster: Roster,
        key: RecordKey,
        describe: Describe,
        home: Path | None = None,
        every: float = WRITE_EVERY_S,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        sharers: Callable[[int], Awaitable[None]] | None = None,
    ) -> None:
        self._rest = rest
        self._channel_id = channel_id
        self.roster = roster
        self._key = key
        self._rejected: set[tuple[str, str]] = set()
        self._own_unread = False
        self._describe = describe
        self._home = home
        self._every = every
        self._sleep = sleep
        self._monotonic = monotonic
        self._sharers = sharers
        self._told_sharers = 0
        self._telling: set[asyncio.Task[None]] = set()
        self.bot_id: str | None = None
        self._guild_id: str | None = None
        self.threads: list[str] = []
        """The presence threads known, lowest id (the one written to) first."""
        self._written_at: float | None = None
        self._reads = 0
        self.read_once = asyncio.Event()
        """Set once the presence thread was read (or could not be: the machine goes on)."""

    # ---- running ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Write and read now, then once every ``every`` seconds, until cancelled."""
        while True:
            try:
                await self.tick()
            except Unauthorized:
                raise
            except DiscordMCPError as exc:  # Discord, the state directory, the run engine
                log.warning("the presence record could not be kept up to date: %s", exc)
            finally:
                self.read_once.set()
            await self._sleep(self._wait())

    @property
    def reads(self) -> int:
        """How many times the presence threads were read."""
        return self._reads

    def _wait(self) -> float:
        if self._reads == 1:
            return min(SECOND_READ_S, self._every)
        if self._written_at is None:
            return self._every
        return max(1.0, self._written_at + self._every - self._monotonic())

    async def tick(self) -> None:
        """Find the thread, read every record, and write this machine's (at most once a
        ``every``)."""
        if self.bot_id is None:
            self.bot_id = str((await self._rest.get_current_user())["id"])
        if self._guild_id is None:
            guild = await self._rest.guild_of(self._channel_id)
            if not guild:
                raise DiscordError(f"channel {self._channel_id} is in no server")
            self._guild_id = guild
        await self._find_threads()
        own = await self._read()
        self._reads += 1
        if self._written_at is None or self._monotonic() - self._written_at >= self._every * 0.999:
            await self._write(own)
        await self._tell_sharers()
        await self._save_snapshot()

    async def _find_threads(self) -> None:
        assert self._guild_id is not None
        active = await self._rest.list_active_threads(self._guild_id)
        found = sorted((str(t["id"]) for t in active if self.is_presence_thread(t)), key=int)
        for lost in [t for t in self.threads if t not in found]:
            # Archived (a week without a new message) or deleted: the next write reopens it.
            with contextlib.suppress(NotFound):
                thread = await self._rest.get_channel(lost)
                if self.is_presence_thread(thread):
                    found.append(lost)
        if not found:
            # Edits are not activity: a week after its last new message the thread archived
            # itself. A machine that never knew it finds it there and reopens it, never a second.
            found = await self._reopen_archived()
        if not found:
            thread = await self._rest.create_thread(
                self._channel_id, THREAD_NAME, auto_archive_duration=ARCHIVE_AFTER_MIN
            )
            log.info("opened the presence thread %s (%s)", thread["id"], THREAD_NAME)
            found = [str(thread["id"])]
        self.threads = sorted(set(found), key=int)[:THREADS_READ_MAX]

    async def _reopen_archived(self) -> list[str]:
        """The archived presence threads, the oldest (lowest id) reopened; [] if none."""
        archived = await self._rest.list_public_archived_threads(self._channel_id)
        found = sorted((str(t["id"]) for t in archived if self.is_presence_thread(t)), key=int)
        if found:
            await self._rest.unarchive_thread(found[0])
            log.info("reopened the archived presence thread %s", found[0])
        return found

    async def _read(self) -> list[MachineRecord]:
        """Read every presence thread; returns this machine's records found there."""
        own: list[MachineRecord] = []
        for thread_id in self.threads:
            try:
                messages = await self._rest.list_messages(thread_id, limit=100)
            except NotFound:
                continue
            for message in messages:
                record = self._record(message)
                if record is None:
                    continue
                if record.name == self.roster.me:
                    own.append(record)
                self.roster.saw(record)
        return own

    def _record(self, message: Mapping[str, Any]) -> MachineRecord | None:
        """The machine record ``message`` holds, if it is one signed with the bot's key; a
        rejected one is logged (once per machine name and reason)."""
        found = read(message, key=self._key, bot_id=self.bot_id)
        if isinstance(found, Rejected):
            self._say_rejected(found)
            return None
        return found

    def _say_rejected(self, rejected: Rejected) -> None:
        seen = (rejected.name, rejected.verdict)
        if seen in self._rejected:
            return
        if len(self._rejected) >= REJECTED_KEPT:
            self._rejected.clear()
        self._rejected.add(seen)
        log.warning(
            "ignored a presence record in the name of machine %r (message %s): %s",
            rejected.name,
            rejected.message_id,
            WHY_REJECTED[rejected.verdict],
        )

    async def _write(self, found: list[MachineRecord]) -> None:
        home = self.threads[0]
        current = await self._describe()
        record = replace(
            current,
            # As they will leave (redacted), so that what is signed is what Discord stores.
            waiting=tuple(
                replace(w, question=self._rest.as_sent("presence record", w.question))
                for w in current.waiting
            ),
            name=self.roster.me,
            instance=self.roster.instance,
            up_since=self.roster.up_since,
            version=__version__,
            knows=self.roster.knows(),
        )
        content = render(record, now=time.time(), key=self._key)
        mine = self.roster.own
        target = mine if mine is not None and mine.thread_id == home else None
        if target is None:
            # After a restart: the record this machine's name already has there, if any.
            here = [r for r in found if r.thread_id == home]
            target = min(here, key=lambda r: int(r.message_id)) if here else None
        message: Mapping[str, Any] | None = None
        if target is not None:
            try:
                message = await self._rest.edit_message(home, target.message_id, content=content)
            except NotFound:
                message = None
        if message is None:
            [message] = await self._rest.send_text(home, content, allowed_mentions={"parse": []})
        self._written_at = self._monotonic()
        written = parse(message, key=self._key, bot_id=self.bot_id)
        if written is None and not self._own_unread:
            self._own_unread = True
            log.warning(
                "this machine's presence record no longer reads as signed once in Discord "
                "(changed on the way, or this machine's clock is more than ten minutes off "
                "Discord's?): the other machines will not see it"
            )
        if written is None:
            written = record
        self.roster.wrote(
            replace(
                record,
                message_id=str(message["id"]),
                thread_id=home,
                seen_at=written.seen_at or time.time(),
            )
        )
        for stale in found:  # this machine's records elsewhere (a duplicate thread's)
            if stale.message_id != str(message["id"]):
                with contextlib.suppress(DiscordError):
                    await self._rest.delete_message(stale.thread_id, stale.message_id)

    async def _tell_sharers(self) -> None:
        """Tell the rate limiter how many machines are live, when that changed."""
        count = len(self.roster.live_names())
        if self._sharers is not None and count != self._told_sharers:
            self._told_sharers = count
            await self._sharers(count)

    async def _save_snapshot(self) -> None:
        if self._home is None:
            return
        roster = self.roster
        machines = []
        for machine in roster.machines():
            record = machine.record
            machines.append(
                {
                    "name": machine.name,
                    "this": machine.this,
                    "live": machine.live,
                    "seen_at": record.seen_at if record else None,
                    "projects": list(record.projects) if record else [],
                    "jobs": record.jobs_total if record else 0,
                    "waiting": record.waiting_total if record else 0,
                }
            )
        document = {
            "version": 1,
            "machine": roster.me,
            "instance": roster.instance,
            "conflict": roster.conflict,
        }
        document["machines"] = machines
        path = self._home / "team" / SNAPSHOT
        try:
            await off_loop(write_json, path, document)
        except (OSError, StateError) as exc:
            log.warning("could not save the machines' snapshot: %s", exc)

    # ---- what the gateway brings --------------------------------------------------------------

    def is_presence_thread(self, channel: Mapping[str, Any]) -> bool:
        """Whether a thread (a channel object or a THREAD_CREATE) is a presence thread."""
        return (
            str(channel.get("parent_id") or "") == self._channel_id
            and channel.get("name") == THREAD_NAME
            and (self.bot_id is None or str(channel.get("owner_id") or "") == self.bot_id)
        )

    def on_event(self, name: str, data: Mapping[str, Any]) -> None:
        """A live event: another machine's record written, or a presence thread opened."""
        if name in ("MESSAGE_CREATE", "MESSAGE_UPDATE"):
            if str(data.get("channel_id") or "") not in self.threads:
                return
            record = self._record(data)
            if record is not None:
                self.roster.saw(record)
                if len(self.roster.live_names()) != self._told_sharers:
                    # A machine joined: take a share of shared buckets from now on.
                    task = asyncio.get_running_loop().create_task(self._tell_sharers())
                    self._telling.add(task)
                    task.add_done_callback(self._telling.discard)
        elif name == "THREAD_CREATE" and self.is_presence_thread(data):
            thread_id = str(data.get("id") or "")
            if thread_id and thread_id not in self.threads:
                self.threads = sorted({*self.threads, thread_id}, key=int)[:THREADS_READ_MAX]


async def read_records(
    rest: RestClient, *, channel_id: str, guild_id: str, bot_id: str, key: RecordKey
) -> list[MachineRecord]:
    """Every machine's signed record, read from Discord alone and changing nothing
    (``doctor``)."""
    found: dict[str, MachineRecord] = {}
    threads = [
        t
        for t in await rest.list_active_threads(guild_id)
        if str(t.get("parent_id") or "") == channel_id
        and t.get("name") == THREAD_NAME
        and str(t.get("owner_id") or "") == bot_id
    ]
    for thread in sorted(threads, key=lambda t: int(t["id"]))[:THREADS_READ_MAX]:
        for message in await rest.list_messages(str(thread["id"]), limit=100):
            record = parse(message, key=key, bot_id=bot_id)
            if record is not None and record.seen_at >= found.get(record.name, record).seen_at:
                found[record.name] = record
    return [found[name] for name in sorted(found)]


def read_snapshot(home: Path) -> dict[str, Any] | None:
    """The machines as the daemon last saw them (``discord-watch status``), or None."""
    from discord_mcp.state.files import read_json

    try:
        return read_json(home / "team" / SNAPSHOT, max_version=1)
    except StateError:
        return None
