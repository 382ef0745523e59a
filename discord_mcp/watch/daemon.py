"""The watch daemon: routes what the owner writes, runs agents, and holds the gateway.

Every message in the configured channel and its threads is handled once, whether it arrives
live (the daemon is the preferred gateway holder) or on catch-up after downtime (REST history
from each cursor); where it goes is :mod:`discord_mcp.watch.routing`'s table.

One channel that cannot be read never stops the others: the log names it, and a thread that is
gone (deleted: 10003 Unknown Channel or 404; or the bot was removed from it: 50001 Missing
Access while the channel itself is readable) is retired, no longer read until a message from it
arrives live. When the daemon's cursors or the inbox were lost to a
corrupt file, it re-reads from a safe point (:mod:`discord_mcp.watch.recovery`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

from discord_mcp.config import Settings
from discord_mcp.decisions.live import DecisionEvents
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import (
    DiscordError,
    RunError,
    StateError,
    Unauthorized,
)
from discord_mcp.files.store import OwnerFiles
from discord_mcp.inbox import Inbox
from discord_mcp.relay.link import LiveLink
from discord_mcp.state.files import off_loop
from discord_mcp.team.desk import TeamDesk
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.wire import Channel
from discord_mcp.watch.chat.desk import ChatDesk
from discord_mcp.watch.chat.watching import watch_chats
from discord_mcp.watch.control import Dispatcher, SlashCommands
from discord_mcp.watch.cursors import REST_AFTER_S, Cursors, snowflake_seconds
from discord_mcp.watch.landing.desk import LandingDesk
from discord_mcp.watch.quiet import (
    at_rest,
    known_threads,
    retire_done,
    wake_resting,
)
from discord_mcp.watch.recovery import (
    FALLBACK_WINDOW_S,
    INBOX_WINDOW_S,
    Alive,
    iso,
    last_snowflake_at,
    snowflake_at,
)
from discord_mcp.watch.rereading import rebuild_inbox, unreadable
from discord_mcp.watch.routed import Engine, MessageRoutes
from discord_mcp.watch.routing import (
    Route,
    destination,
)

log = logging.getLogger(__name__)

SAFETY_CATCH_UP_S = 30.0
"""With a live gateway, history is still read this often, for anything missed live (a handover
that had to start a new session); without one, it is read every poll interval."""
CLOCK_SKEW_S = 2.0
"""On a first start, messages from this long before the daemon started are acted on too: this
machine's clock may run ahead of Discord's."""
LONG_DOWNTIME_S = 3600.0
"""Down longer than this (Discord's shortest auto-archive), a thread may have been written in
and archived again while no daemon ran: the first pass also reads the resting threads Discord
archived since (:func:`~discord_mcp.watch.quiet.wake_resting`)."""
THREADS_READ_KEPT = 256
"""Threads under the channel kept as read (parent and owner), at most."""


class Watcher(MessageRoutes):
    """The daemon's Discord side.

    Args:
        settings: token, channel, owners, state directory, poll interval.
        rest: the REST client.
        engine: the run engine.
        decisions: the decision service (watching every pending decision).
        link: the gateway link (None: REST polling only); set before :meth:`run`.
        commands: the owner's commands (slash and ``!``); None: commands are not answered.
        chat: the chat channels (:mod:`discord_mcp.watch.chat`); None: there are none.
        team: the machines sharing the bot (:mod:`discord_mcp.team`): which commands and
            threads are this machine's; None: this machine alone.
    """

    def __init__(
        self,
        *,
        settings: Settings,
        rest: RestClient,
        engine: Engine,
        decisions: DecisionService,
        link: LiveLink | None,
        commands: Dispatcher | None = None,
        chat: ChatDesk | None = None,
        team: TeamDesk | None = None,
    ) -> None:
        self.commands = commands
        self.chat = chat
        self.team = team
        self.slash = SlashCommands(commands, team=team) if commands is not None else None
        self._settings = settings
        self._rest = rest
        self._engine = engine
        self._decisions = decisions
        self._interactions = DecisionEvents(
            decisions, rest, unheld=team.unheld_turn if team is not None else None
        )
        self.link = link
        self.landing: LandingDesk | None = None
        """Clicks on the runs' changes cards (:mod:`discord_mcp.watch.landing`)."""
        self._wall: Callable[[], float] = time.time
        self._started_at = self._wall()
        self._started_snowflake = last_snowflake_at(self._started_at)
        self._inbox = Inbox(settings.home)
        self._files = OwnerFiles(settings.home)
        self._store = DecisionStore(settings.home)
        self._cursors = Cursors(settings.home)
        self._alive = Alive(settings.home, self._wall)
        self._replay_until: int | None = None
        """Commands with an id up to this may have run before the cursors were lost."""
        self._parents: dict[str, str | None] = {}
        self._threads_read: dict[str, Channel] = {}
        """Threads as read from Discord or a THREAD_CREATE (their parent and owner never change):
        another machine's busy run thread is not asked for again at each of its messages."""
        self._refused_at: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        """One per channel: a message is handled once, live or on catch-up, and a channel's
        messages one at a time; a slow one never holds up another channel's."""
        self._wake = asyncio.Event()
        self._told_content_hidden = False
        self._history_discovered = False
        self._down_since: float | None = None
        """Down long enough for a thread to be written in and archived again: the first pass
        reads every resting thread (:mod:`.cursors`)."""
        self._guild_id: str | None = None
        self._retiring: asyncio.Task[None] | None = None
        self.caught_up_messages = 0
        """Messages by people handled on catch-up (not live) since the start."""
        self.caught_up = asyncio.Event()
        """Set after the first catch-up pass (tests and the status display wait on it)."""

    # ---- running ----------------------------------------------------------------------------

    async def run(self, *, first: Callable[[], Awaitable[None]] | None = None) -> None:
        """Catch up, then follow live events and read history as a safety net, until cancelled.

        ``first``: called and awaited before the first catch-up (the other machines' presence:
        whose commands are whose), once the daemon has looked whether this is its first start.
        """
        await self._watch_main_channel()
        if first is not None:
            await first()
        try:
            while True:
                began, complete = self._wall(), False
                try:
                    complete = await self.catch_up()
                    await self._rebuild_inbox()
                    await self._decisions.upgrade_cards()
                except Unauthorized:
                    raise
                except (DiscordError, StateError) as exc:
                    log.warning("catching up failed: %s", exc)
                with contextlib.suppress(StateError):
                    await self._alive.record(caught_up_at=began if complete else None)
                self.caught_up.set()
                if self._retiring is None or self._retiring.done():  # beside the loop: a first
                    # sweep after an upgrade moves the whole history, and must not hold it up
                    self._retiring = asyncio.create_task(retire_done(self._store), name="retire")
                live = self.link is not None and self.link.is_live()
                pause = (
                    max(SAFETY_CATCH_UP_S, self._settings.poll_interval)
                    if live
                    else self._settings.poll_interval
                )
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(pause):
                        await self._wake.wait()
        finally:
            if self._retiring is not None:
                self._retiring.cancel()

    def catch_up_soon(self, name: str = "", data: dict[str, Any] | None = None) -> None:
        """Read history at once rather than at the next pass: a live event could not be handled
        live (its channel's lane was full; :mod:`discord_mcp.relay.lanes`)."""
        self._wake.set()

    async def _watch_main_channel(self) -> None:
        channel = self._settings.channel_id
        caught_up_at, alive_at = await off_loop(self._alive.read)
        if alive_at is not None and self._wall() - alive_at > LONG_DOWNTIME_S:
            self._down_since = alive_at
        if channel in self._cursors.channels():
            return
        if self._cursors.lost is None and caught_up_at is None and alive_at is None:
            # First start: the channel's history before the daemon started is not ours to act
            # on. The cursor is the start time, not the newest message when we first look: a
            # message written in between (the gateway may already deliver it) is ours.
            self._cursors.watch(channel, start=snowflake_at(self._started_at - CLOCK_SKEW_S))
            await self._cursors.flush()
            return
        # The cursors were lost: re-read from a safe point rather than skip what was written.
        now = self._wall()
        since = caught_up_at if caught_up_at is not None else now - FALLBACK_WINDOW_S
        until = alive_at if caught_up_at is not None and alive_at is not None else now
        self._cursors.set_floor(snowflake_at(since))
        self._replay_until = last_snowflake_at(until)
        self._cursors.watch(channel, start=None)
        await self._cursors.flush()
        why = f"moved to {self._cursors.lost.moved_to}" if self._cursors.lost else "missing"
        how = "the last time every channel was read" if caught_up_at else "no record: 24 h"
        log.warning(
            "the watch cursors were lost (%s): re-reading every channel and thread since %s "
            "(%s). Jobs and inbox notes seen before are not repeated; commands written before "
            "%s are not re-run (they may have run already)",
            why,
            iso(since),
            how,
            iso(until),
        )

    async def _discover(self) -> None:
        """Watch the threads we know of from our own state: run sessions and decisions."""
        found = await known_threads(
            self._store,
            self._engine.sessions(),
            self._settings.channel_id,
            self._wall(),
            with_history=not self._history_discovered,
        )
        self._history_discovered = True
        for thread_id, parent_id, start in found:
            self._cursors.watch(thread_id, parent_id=parent_id, start=start)

    async def catch_up(self) -> bool:
        """Read every watched channel's history after its cursor and handle what is new.

        Returns whether every channel was read. A channel that fails is logged and tried
        again on the next pass; a thread that is gone is retired; neither stops the others.
        """
        await self._discover()
        await self._watch_chats()
        active = await self._wake_resting()
        complete = channel_readable = True
        for channel_id, cursor in self._cursors.channels().items():
            try:
                await self._catch_up_channel(channel_id, cursor.cursor)
            except Unauthorized:
                raise
            except DiscordError as exc:
                if channel_id == self._settings.channel_id:
                    channel_readable = False
                retired = await self._unreadable(channel_id, exc, channel_readable)
                complete = retired and complete
            except StateError as exc:
                complete = False
                log.warning("handling messages of channel %s failed: %s", channel_id, exc)
        self._cursors.rest(self._wall(), active=active, keep=self._busy_thread)
        await self._cursors.flush()
        return complete

    async def _wake_resting(self) -> set[str] | None:
        """Resting threads that may have news are read this pass (:mod:`.quiet`); the threads
        Discord lists as active (None: unknown)."""
        active, self._guild_id = await wake_resting(
            self._cursors,
            self._rest,
            self._settings.channel_id,
            down_since=self._down_since,
            guild_id=self._guild_id,
        )
        self._down_since = None
        return active

    def _busy_thread(self, thread_id: str) -> bool:
        """A run thread with a job running or queued never rests."""
        session = self._engine.session(thread_id)
        return session is not None and not at_rest(session)

    async def _watch_chats(self) -> None:
        if self.chat is not None:
            await watch_chats(self.chat, self._cursors, self._settings.channel_id, self._wall())

    async def _catch_up_channel(self, channel_id: str, after: str | None) -> None:
        while True:
            page = await self._rest.list_messages(channel_id, after=after, limit=100)
            ordered = sorted(page, key=lambda m: int(m["id"]))
            if not after:
                # A thread watched from its start: everything in it is new.
                ordered = [m for m in ordered if not self._cursors.seen(channel_id, m["id"])]
            for message in ordered:
                await self._handle(dict(message), live=False)
            if ordered:
                self._cursors.advance(channel_id, ordered[-1]["id"])
            await self._cursors.flush()
            if len(page) < 100 or not ordered:
                return
            after = ordered[-1]["id"]

    async def _unreadable(self, channel_id: str, exc: DiscordError, channel_readable: bool) -> bool:
        """Log a channel that could not be read; retire it if it is a thread that is gone
        (:func:`~discord_mcp.watch.rereading.unreadable`). True when it was retired."""
        return await unreadable(
            self._cursors, channel_id, exc, channel_readable, main=self._settings.channel_id
        )

    async def _rebuild_inbox(self) -> None:
        """After the inbox was lost to a corrupt file: put the owner's recent notes back."""
        await rebuild_inbox(
            self._inbox,
            channels=list(self._cursors.channels()),
            runs=self._engine.session,
            chats=self.chat.handles if self.chat is not None else lambda _channel: False,
            store=self._store,
            rest=self._rest,
            route=self._destination,
            channel=self._settings.channel_id,
            since=snowflake_at(self._wall() - INBOX_WINDOW_S),
        )

    # ---- live events (LiveHandler) ------------------------------------------------------------

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        if self.team is not None:
            self.team.on_event(name, data)  # another machine's presence record
        await self._decisions.on_event(name, data)
        if name == "MESSAGE_CREATE":
            try:
                await self._handle(data, live=True)
            except StateError as exc:  # not marked handled: catch-up tries it again
                log.warning("handling message %s failed: %s", data.get("id"), exc)
        elif name == "THREAD_DELETE" and self._cursors.retire(str(data.get("id"))):
            log.warning("thread %s was deleted: no longer watching it", data.get("id"))
            await self._cursors.flush()
        elif name == "THREAD_CREATE" and data.get("parent_id") == self._settings.channel_id:
            if self.team is not None and self.team.foreign_thread(data, mine=False):
                self._thread_read(cast(Channel, data))
                return  # another machine's (or the presence thread): its own messages say
            self._parents[str(data["id"])] = self._settings.channel_id
            self._cursors.watch(str(data["id"]), parent_id=self._settings.channel_id, start=None)
            await self._cursors.flush()

    async def on_interaction(self, data: dict[str, Any]) -> None:
        if self.slash is not None and self.slash.handles(data):
            await self.slash.on_interaction(data)  # slash commands and autocomplete
        elif self.landing is not None and self.landing.handles(data):
            await self.landing.on_interaction(data)  # a run's Show diff / Merge / ... buttons
        else:
            await self._interactions.on_interaction(data)  # clicks on decision cards

    # ---- routing ------------------------------------------------------------------------------

    async def _handle(self, message: dict[str, Any], *, live: bool) -> None:
        channel_id = str(message.get("channel_id") or "")
        message_id = str(message.get("id") or "")
        if not channel_id or not message_id.isdigit():
            return
        if not await self._is_watched(channel_id, message_id):
            return
        async with self._locks.setdefault(channel_id, asyncio.Lock()):
            if self._cursors.seen(channel_id, message_id):
                return
            replay = not live and self._replay_until is not None
            try:
                await self._route(message, channel_id, replay=replay)
            except RunError as exc:
                if exc.code == "E_DUPLICATE_MESSAGE":
                    log.info("message %s ran as a job before: %s", message_id, exc.message)
                else:
                    await self._reply(channel_id, message_id, f"**{exc.code}**: {exc.message}")
            except DiscordError as exc:
                log.warning("handling message %s failed: %s", message_id, exc)
            if live:
                self._cursors.handled_live(channel_id, message_id)
            else:
                self._cursors.advance(channel_id, message_id)
            if int(message_id) <= self._started_snowflake and not (message.get("author") or {}).get(
                "bot"
            ):
                # Written while the daemon was down, whether history or a resumed gateway
                # session brought it: said once after downtime (issue 11).
                self.caught_up_messages += 1
            await self._cursors.flush()

    async def _is_watched(self, channel_id: str, message_id: str) -> bool:
        if channel_id == self._settings.channel_id or channel_id in self._cursors.channels():
            return True
        if self.chat is not None and self.chat.handles(channel_id):
            await self._watch_chats()  # its cursor first: a live message must not read it all
            return True
        channel = self._threads_read.get(channel_id)
        if channel_id not in self._parents:
            if channel is None:
                try:
                    channel = await self._rest.get_channel(channel_id)
                except DiscordError:
                    return False
                self._thread_read(channel)
            self._parents[channel_id] = channel.get("parent_id")
        if self._parents[channel_id] != self._settings.channel_id:
            return False
        if self.team is not None and not await self._ours(channel_id, channel):
            return False
        # A live message proves the thread exists, even one retired earlier. A thread older
        # than a resting one that is not watched was forgotten (cursors): what came before this
        # message was handled then, and is not read again.
        old = self._wall() - snowflake_seconds(channel_id) > REST_AFTER_S
        start = str(int(message_id) - 1) if old else None
        self._cursors.watch(
            channel_id, parent_id=self._settings.channel_id, start=start, revive=True
        )
        return True

    def _thread_read(self, thread: Channel) -> None:
        if len(self._threads_read) >= THREADS_READ_KEPT:
            del self._threads_read[next(iter(self._threads_read))]
        self._threads_read[str(thread.get("id"))] = thread

    async def _ours(self, thread_id: str, thread: Channel | None = None) -> bool:
        """With other machines sharing the bot: whether a thread not watched yet is this
        machine's to watch (:meth:`~discord_mcp.team.desk.TeamDesk.our_thread`; ``thread``:
        the thread as just read, not asked again: every machine reads a new thread at once)."""
        assert self.team is not None
        mine = self._engine.session(thread_id) is not None
        return await self.team.our_thread(thread_id, mine or self._store.in_thread, thread)

    def _destination(
        self, message: dict[str, Any], channel_id: str, decisions: list[Decision]
    ) -> Route:
        return destination(
            message,
            channel_id,
            decisions,
            channel=self._settings.channel_id,
            owners=self._settings.owner_ids,
            run_thread=self._engine.session(channel_id) is not None,
        )

    # ---- commands -----------------------------------------------------------------------------

    async def watch_thread(self, thread_id: str) -> None:
        """Watch a thread a command just created under the channel (a new run thread)."""
        self._parents[thread_id] = self._settings.channel_id
        self._cursors.watch(thread_id, parent_id=self._settings.channel_id, start=None)
        await self._cursors.flush()
