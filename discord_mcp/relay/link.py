"""This process's link to the machine's one gateway: hold it, or follow whoever does.

:meth:`LiveLink.run` loops between two roles. As the *holder* it runs the gateway, answers
interactions (they must be acknowledged within 3 s, whoever waits for the decision), appends
events to the spool and hands them to this process's handler. As a *follower* it reads the spool
and hands the same events to its handler. A follower sleeps until there is news: the holder
appended to the spool, or let the gateway go (its presence file, ``gateway/holder.alive``, which
it keeps open for writing while it holds, was closed: the kernel closes it when the holder
dies, however it dies), and then tries the holder lock at once. Where the kernel cannot tell
(:mod:`~discord_mcp.relay.fswatch`), a follower reads the spool every :data:`FOLLOW_POLL_S` and
tries the lock every :data:`LOCK_RETRY_S`. A successor first relays the spool to its end, then
resumes the session from the last event the spool holds, so nothing is lost or repeated across
a handover. A non-preferred holder hands over to the watch daemon when it asks. When Discord
refuses the gateway for good (bad token, Message Content intent off), the gateway is marked
disabled for a while and everyone keeps working by polling.

A follower given :class:`~.interest.Interests` (a server) reads its own mailbox instead of the
spool: the holder routes to it the events of the threads it waits on, and nothing else
(:mod:`~.interest`). It then watches two single files, its mailbox and the holder's presence
file: the writes of other sessions wake it no more.

Whether holding or following, events reach the handler through :class:`~.lanes.Lanes`: the
gateway's read loop (and the follower's spool loop) only hand them over, an interaction is
handled at once in a task of its own, and each channel's events in order in its own lane.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from discord_mcp.config import Settings
from discord_mcp.errors import DiscordError, GatewayError
from discord_mcp.relay.budget import IdentifyBudget
from discord_mcp.relay.fswatch import CLOSED, MODIFIED, FileChanges, Subscription, Watches
from discord_mcp.relay.holder import (
    HolderLock,
    HolderStatus,
    clear_preference,
    preferred_pid,
    read_status,
    write_preference,
    write_status,
)
from discord_mcp.relay.interest import Interests, Router
from discord_mcp.relay.lanes import Lanes, LiveHandler, Overflow, lane_of
from discord_mcp.relay.spool import SpoolReader, SpoolWriter, encode, last_seq
from discord_mcp.state.files import FILE_MODE, ensure_dir, off_loop
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.transport.gateway import DEFAULT_INTENTS, Gateway, SessionInfo
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.wire import GatewayBot

log = logging.getLogger(__name__)

RELAYED = frozenset(
    {
        "MESSAGE_CREATE",
        "MESSAGE_UPDATE",
        "MESSAGE_REACTION_ADD",
        "MESSAGE_REACTION_REMOVE",
        "THREAD_CREATE",
        "THREAD_UPDATE",
        "INTERACTION_CREATE",
    }
)
"""The events other processes need (interactions only for the record: the holder answers)."""
FOLLOW_POLL_S = 0.1
"""Without change notifications, how often a follower reads the spool: a reply through the spool
stays within its 150 ms budget, at ten wakeups a second."""
LOCK_RETRY_S = 1.0
"""Without change notifications, how often a follower tries the holder lock (one non-blocking
flock), so a dead holder is replaced within seconds."""
FOLLOW_SAFETY_S = 10.0
"""With change notifications, a follower still reads the spool and tries the lock this often,
for what no file event announces: a disabled gateway's pause running out, or a holder of an
older version that keeps no presence file."""
HANDOVER_RETRIES_S = (0.05, 0.25, 1.0)
"""When the holder's presence file closes, its lock may be released a moment later (a dying
process closes its files one by one): a follower tries the lock again after these pauses."""
STATUS_EVERY_S = 5.0
"""How often the holder republishes its status: a third of ``ALIVE_WITHIN_S``, so a status is
trusted across two missed writes. Without change notifications a holder also looks for the watch
daemon's wish to hold at this pace; with them it hands over as soon as the wish is written."""
SPOOL = "spool.ndjson"
PRESENCE = "holder.alive"
"""The holder keeps this file open for writing while it holds; nobody else writes to it."""
PREFER = "prefer.json"
DISABLED_FOR_S = 600.0
"""After a fatal refusal, nobody on this machine retries the gateway for this long."""
GATEWAY_BOT_FRESH_S = 60.0
"""``GET /gateway/bot``'s answer is used again for this long (by the URL lookup and each
identify's check of the session starts left, minus the identifies since): several machines
starting at once share that route's small per-bot bucket, and an identify refused for
concurrency (op 9) is followed by another a few seconds later."""


__all__ = ["LiveHandler", "LiveLink", "spool_path"]


class LiveLink:
    """Holds or follows the machine's gateway for one process.

    Args:
        settings: token, state directory, gateway URL.
        rest: the REST client (for ``GET /gateway/bot``).
        handler: receives events (and, while holding, interactions).
        program: who we are, for the status file (``discord-mcp`` or ``discord-watch``).
        preferred: the watch daemon; other holders hand the gateway over to it.
        may_hold: False to only ever follow another process's gateway.
        changes: file change notifications (None: poll the spool and the lock).
        follow_interval, lock_retry: without notifications, seconds between spool reads and
            between lock attempts.
        safety: with notifications, seconds between unprompted looks at the spool and the lock.
        on_overflow: told about a live event its channel's lane had no room for
            (:mod:`~.lanes`); it should make sure the event is read from history instead.
        interests: this process's interests (a server): as a follower it reads its mailbox
            rather than the spool. None: follow the whole spool (the watch daemon).
    """

    def __init__(
        self,
        *,
        settings: Settings,
        rest: RestClient,
        handler: LiveHandler,
        program: str,
        preferred: bool = False,
        may_hold: bool = True,
        intents: int = DEFAULT_INTENTS,
        wall: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        changes: FileChanges | None = None,
        follow_interval: float = FOLLOW_POLL_S,
        lock_retry: float = LOCK_RETRY_S,
        safety: float = FOLLOW_SAFETY_S,
        on_overflow: Overflow | None = None,
        interests: Interests | None = None,
    ) -> None:
        self._settings = settings
        self._interests = interests
        self._rest = rest
        self._handler = handler
        self._on_overflow = on_overflow
        self._lanes: Lanes | None = None
        self._program = program
        self._preferred = preferred
        self._may_hold_at_all = may_hold
        self._intents = intents
        self._wall = wall
        self._sleep = sleep
        self._changes = changes
        self._follow_interval = follow_interval
        self._lock_retry = lock_retry
        self._safety = safety
        self._directory = directory = settings.home / "gateway"
        self._lock = HolderLock(directory / "holder.lock", presence=directory / PRESENCE)
        self._status_path = directory / "status.json"
        self._prefer_path = directory / PREFER
        self._spool_path = directory / SPOOL
        self._budget = IdentifyBudget(directory / "identifies.json", remaining=self._remaining)
        self._gateway: Gateway | None = None
        self._gateway_bot: tuple[float, GatewayBot] | None = None
        """The last ``GET /gateway/bot`` answer, and when (on ``wall``)."""
        self._starts_since = 0
        """Identifies asked for since that answer."""
        self._retries: list[float] = []
        self.holding = asyncio.Event()
        """Set while this process holds the gateway lock."""
        self.following = asyncio.Event()
        """Set while this process follows the spool (its reader is open)."""
        self.wakeups = 0
        """How many times the follower loop woke (tests count them: an idle follower sleeps)."""

    # ---- what others ask --------------------------------------------------------------------

    def is_live(self) -> bool:
        """Whether some process on this machine has a ready gateway session right now."""
        if self._gateway is not None:
            return self._gateway.ready.is_set()
        status = read_status(self._status_path)
        return status is not None and status.connected(self._wall())

    def status(self) -> HolderStatus | None:
        """The holder's last published status."""
        return read_status(self._status_path)

    # ---- the loop ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Hold or follow until cancelled."""
        ensure_dir(self._directory)
        if self._preferred:
            write_preference(self._prefer_path, self._program)
        mailbox = self._interests.mailbox if self._interests is not None else None
        # A mailbox is this process's alone: read from its top, and kept across roles.
        reader = SpoolReader(mailbox or self._spool_path, at_end=mailbox is None)
        self._lanes = Lanes(self._handler, on_overflow=self._on_overflow)
        news = self._watch(mailbox)
        try:
            while True:
                if self._may_hold(news) and self._lock.try_acquire():
                    self.following.clear()
                    self._retries.clear()
                    await self._relay(reader)  # the last holder's events come before ours
                    if mailbox is None:
                        reader.close()
                    try:
                        self.holding.set()
                        await self._hold()
                    finally:
                        self.holding.clear()
                        if mailbox is None:
                            # From the end as it is now, while nobody else can append.
                            reader = SpoolReader(self._spool_path)
                        self._lock.release()
                    news.take()
                else:
                    await self._follow(reader, news)
        finally:
            news.close()
            self.following.clear()
            reader.close()
            if self._preferred:
                clear_preference(self._prefer_path)
            lanes, self._lanes = self._lanes, None
            if lanes is not None:
                await lanes.aclose()

    def _watch(self, mailbox: Path | None) -> Watches:
        """What wakes a follower: the spool, the holder's presence file and the daemon's wish.

        With a mailbox: that file instead of the spool, and the presence file, each watched by
        itself, so nothing another session writes wakes this one. The daemon's wish is left out:
        it matters to the holder (which watches it) and to a follower only once the holder lets
        go, which the presence file tells (then the wish is read afresh).
        """
        news = Watches(self._changes)
        if mailbox is None:
            news.add(self._directory, {SPOOL, PRESENCE, PREFER})
            return news
        # The presence file must exist to be watched by itself; opening it to read (creating it)
        # is no news for anyone: only a close after writing is.
        with contextlib.suppress(OSError):
            os.close(os.open(self._directory / PRESENCE, os.O_RDONLY | os.O_CREAT, FILE_MODE))
        news.add(mailbox.parent, {mailbox.name}, writes=MODIFIED)
        news.add(self._directory, {PRESENCE}, writes=CLOSED)
        return news

    def _may_hold(self, news: Watches) -> bool:
        """Whether to try the holder lock now."""
        if not self._may_hold_at_all:
            return False
        status = read_status(self._status_path)
        now = self._wall()
        if status is not None and status.disabled(now):
            return False
        if news.notified and not self._retries and status is not None and status.held(now):
            # A live holder says so, and its presence file would tell when it goes: a lock
            # attempt (which opens and closes the lock file, waking every follower's watch)
            # would only fail.
            return False
        # Leave the gateway to the watch daemon when it wants it.
        return self._preferred or preferred_pid(self._prefer_path) is None

    async def _follow(self, reader: SpoolReader, news: Watches) -> None:
        """Relay the spool as it grows, until it is time to try the holder lock again.

        With notifications this sleeps until the holder appends or lets go; without, it polls.
        """
        self.following.set()
        loop = asyncio.get_running_loop()
        if self._retries:
            pause = self._retries.pop(0)
        else:
            pause = self._safety if news.notified else self._lock_retry
        end = loop.time() + pause
        while True:
            changed = news.take()
            await self._relay(reader)
            if changed & {PRESENCE, PREFER} and self._may_hold_at_all:
                # The holder let go or died, or the daemon's wish changed: try the lock now.
                self._retries = list(HANDOVER_RETRIES_S)
                return
            left = end - loop.time()
            if left <= 0:
                return
            await news.wait(left if news.notified else min(left, self._follow_interval))
            self.wakeups += 1

    async def _relay(self, reader: SpoolReader) -> None:
        for event in reader.poll():
            name = str(event.get("t") or "")
            data = event.get("d")
            if name != "INTERACTION_CREATE" and isinstance(data, dict):
                self._deliver(name, data)

    def _deliver(self, name: str, data: dict[str, Any]) -> None:
        """Hand an event (or, while holding, an interaction) to its lane; never waits."""
        if self._lanes is not None:
            self._lanes.submit(name, data)

    # ---- holding ----------------------------------------------------------------------------

    async def _hold(self) -> None:
        previous = read_status(self._status_path)
        session = None
        if previous is not None and previous.resumable(self._wall()):
            # Resume after the last event the spool holds: the status may be seconds old (the
            # replay would repeat events) or newer than the spool (the last holder died between
            # reading an event and spooling it: the replay brings it back).
            spooled = last_seq(self._spool_path, previous.session_id)
            seq = spooled if spooled is not None else previous.seq
            session = SessionInfo(previous.session_id, seq, previous.resume_url)
        try:
            url = self._settings.gateway_url or (await self._ask_gateway())["url"]
        except DiscordError as exc:
            log.warning("cannot find the gateway (%s); polling meanwhile", exc)
            await self._sleep(self._lock_retry * 5)
            return
        writer = SpoolWriter(self._spool_path)
        router = Router(self._settings.home, own=self._interests.name if self._interests else None)
        with contextlib.suppress(OSError):
            await off_loop(router.sweep)  # dead followers' interests and mailboxes

        def dispatched(name: str, data: dict[str, Any], seq: int | None) -> None:
            # In the gateway's read loop: hand over, never wait. An interaction first (its
            # 3 seconds run), then the followers that want it, then the spool (in order, for
            # the watch daemon and a successor), then the lane.
            if name == "INTERACTION_CREATE":
                self._deliver(name, data)
            if name in RELAYED:
                line = encode(name, data, seq, session=gateway.session.session_id)
                if name != "INTERACTION_CREATE":
                    router.route(lane_of(name, data), line)
                try:
                    writer.write(line)
                except OSError as exc:
                    log.warning("could not spool %s for the other processes: %s", name, exc)
            if name != "INTERACTION_CREATE":
                self._deliver(name, data)

        gateway = Gateway(
            self._settings.token,
            url=url,
            on_dispatch=dispatched,
            identify_guard=self._budget,
            intents=self._intents,
            session=session,
            on_content_refused=lambda: self._publish(gateway, "connecting"),
        )
        self._gateway = gateway
        log.info("holding the gateway (%s)", "resuming the previous session" if session else "new")
        task = asyncio.create_task(gateway.run(), name="gateway")
        wish = None if self._preferred else self._subscribe({PREFER})
        try:
            while not task.done():
                was_ready = gateway.ready.is_set()
                self._publish(gateway, "ready" if was_ready else "connecting")
                if not self._preferred and preferred_pid(self._prefer_path) is not None:
                    log.info("handing the gateway over to the watch daemon")
                    break
                # Publish again every few seconds, and at once when the session becomes ready,
                # so other processes know a live gateway is there (cards get buttons); look
                # again at once when the watch daemon says it wants the gateway.
                waits: set[asyncio.Task[Any]] = {task}
                if not was_ready:
                    waits.add(asyncio.create_task(gateway.ready.wait()))
                if wish is not None:
                    wish.take()
                    waits.add(asyncio.create_task(wish.event.wait()))
                try:
                    await asyncio.wait(
                        waits, timeout=STATUS_EVERY_S, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    for waiting in waits - {task}:
                        await cancel_and_wait(waiting)
            if task.done():
                task.result()
        except GatewayError as exc:
            log.error("gateway unavailable: %s", exc)
            self._publish(gateway, "disabled", reason=str(exc))
            return
        finally:
            if wish is not None:
                wish.close()
            try:
                if not task.done():
                    await gateway.close()  # resumable, and the loop ends instead of resuming
                    await cancel_and_wait(task, within=5)
            finally:
                writer.close()  # after the last event the gateway could still dispatch
            self._gateway = None
            status = read_status(self._status_path)
            if status is None or status.state != "disabled":
                self._publish(gateway, "stopped")

    def _subscribe(self, names: set[str]) -> Subscription:
        # Each file by itself: the holder's own spool appends and status writes are no news.
        changes = self._changes or FileChanges(enabled=False)
        return changes.subscribe(self._directory, names, replaced=True)

    def _publish(self, gateway: Gateway, state: str, *, reason: str | None = None) -> None:
        now = self._wall()
        write_status(
            self._status_path,
            HolderStatus(
                pid=os.getpid(),
                program=self._program,
                state=state,
                alive_at=now,
                session_id=gateway.session.session_id,
                seq=gateway.session.seq,
                resume_url=gateway.session.resume_url,
                disabled_until=now + DISABLED_FOR_S if state == "disabled" else None,
                reason=reason,
                message_content=gateway.content,
            ),
        )

    async def _ask_gateway(self) -> GatewayBot:
        """``GET /gateway/bot``, or its answer of less than :data:`GATEWAY_BOT_FRESH_S` ago."""
        known = self._gateway_bot
        now = self._wall()
        if known is not None and 0 <= now - known[0] < GATEWAY_BOT_FRESH_S:
            return known[1]
        answer = await self._rest.get_gateway_bot()
        self._gateway_bot, self._starts_since = (now, answer), 0
        return answer

    async def _remaining(self) -> tuple[int, float]:
        """Session starts left (an identify follows): Discord's count, less this link's
        identifies since Discord said it."""
        limit = (await self._ask_gateway())["session_start_limit"]
        left = int(limit["remaining"]) - self._starts_since
        self._starts_since += 1
        return left, float(limit["reset_after"]) / 1000.0


def spool_path(home: Path) -> Path:
    """Where the spool of a state directory lives."""
    return home / "gateway" / SPOOL
