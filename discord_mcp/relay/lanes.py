"""Live events handled beside the connection that reads them, never inside it.

Theory. The gateway's read loop is where heartbeat ACKs arrive: a loop that waits for a handler
misses them, and the heartbeat's zombie check then closes a healthy connection. It is also where
INTERACTION_CREATE arrives, which Discord fails ("This interaction failed") unless it is
answered within 3 seconds. A MESSAGE_CREATE's handler may take much longer: it creates a thread
and posts, downloads the owner's files, or waits out a rate limit. So the loop only *hands*
events over, and :class:`Lanes` runs them:

* an interaction gets a task of its own at once, whatever else runs;
* every other event joins the *lane* of its channel (a message's or reaction's
  ``channel_id``; a thread event's thread id; anything else the one lane with no channel). A
  lane is a FIFO served by one worker, so one channel's events are handled in the order they
  came, and a slow one delays its own channel only. At most :data:`MAX_WORKING` lanes run at
  once; the others wait their turn.

A lane holds at most :data:`LANE_SIZE` events. An event that finds its lane full is not queued
(waiting for room would stop the read loop, and with it the ACKs and the interactions): it is
logged as a warning and handed to ``on_overflow``, whose job is to make sure it is read anyway.
The watch daemon's is its catch-up pass, which reads every watched channel's history after its
cursor (an event not handled live leaves the cursor behind it); a server's decisions are read
by their waiting calls' polls. Nothing is dropped silently.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

log = logging.getLogger(__name__)

LANE_SIZE = 500
"""Events one channel may have waiting: minutes of a busy channel, a few hundred kB."""
MAX_WORKING = 32
"""Lanes handled at once; more channels with news than this wait for a free worker."""
INTERACTION_LIMIT_S = 15 * 60.0
"""The longest an interaction's handler may run: its token lives 15 minutes."""
CLOSE_WITHIN_S = 5.0

Overflow = Callable[[str, dict[str, Any]], None]


class LiveHandler(Protocol):
    """What a process does with live events."""

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        """A gateway event (from the holder's connection or the spool)."""

    async def on_interaction(self, data: dict[str, Any]) -> None:
        """An INTERACTION_CREATE; only the holder gets these, and must answer within 3 s."""


def lane_of(name: str, data: dict[str, Any]) -> str:
    """The lane an event belongs to: its channel (a thread is its own channel), else ``""``."""
    if name.startswith("THREAD_"):
        return str(data.get("id") or "")
    return str(data.get("channel_id") or "")


class Lanes:
    """Hands live events to ``handler`` without ever making the caller wait.

    Args:
        handler: the process's live handler.
        on_overflow: told about an event its lane had no room for (after a warning is logged).
        lane_size: events a lane holds.
        working: lanes handled at once.
    """

    def __init__(
        self,
        handler: LiveHandler,
        *,
        on_overflow: Overflow | None = None,
        lane_size: int = LANE_SIZE,
        working: int = MAX_WORKING,
    ) -> None:
        self._handler = handler
        self._on_overflow = on_overflow
        self._lane_size = lane_size
        self._slots = asyncio.Semaphore(working)
        self._lanes: dict[str, deque[tuple[str, dict[str, Any]]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.overflows = 0
        """Events that found their lane full (each logged and handed to ``on_overflow``)."""

    # ---- handing over (never waits) -----------------------------------------------------------

    def submit(self, name: str, data: dict[str, Any]) -> None:
        """Hand one event over: an interaction starts at once, anything else joins its lane."""
        if name == "INTERACTION_CREATE":
            self._spawn(self._interaction(data), f"interaction-{data.get('id')}")
            return
        key = lane_of(name, data)
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = deque()
            self._spawn(self._work(key, lane), f"lane-{key or 'general'}")
        if len(lane) >= self._lane_size:
            self.overflows += 1
            log.warning(
                "live events of channel %s are %d behind: %s is left to the catch-up that reads "
                "the channel's history",
                key or "(none)",
                len(lane),
                name,
            )
            if self._on_overflow is not None:
                try:
                    self._on_overflow(name, data)
                except Exception:
                    log.exception("handing an overflowing %s to the catch-up failed", name)
            return
        lane.append((name, data))

    def _spawn(self, work: Any, name: str) -> None:
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ---- running --------------------------------------------------------------------------------

    async def _interaction(self, data: dict[str, Any]) -> None:
        try:
            async with asyncio.timeout(INTERACTION_LIMIT_S):
                await self._handler.on_interaction(data)
        except TimeoutError:
            log.warning("interaction %s was still being handled after 15 minutes", data.get("id"))
        except Exception:
            log.exception("handling interaction %s failed", data.get("id"))

    async def _work(self, key: str, lane: deque[tuple[str, dict[str, Any]]]) -> None:
        try:
            while lane:
                async with self._slots:
                    name, data = lane.popleft()
                    try:
                        await self._handler.on_event(name, data)
                    except Exception:
                        log.exception("handling %s failed", name)
        finally:
            if self._lanes.get(key) is lane:
                del self._lanes[key]

    def waiting(self) -> int:
        """Events queued and not yet handled."""
        return sum(len(lane) for lane in self._lanes.values())

    async def idle(self) -> None:
        """Wait until every event handed over so far has been handled (tests, and a holder
        that lets go and wants its events handled before a successor's)."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))

    async def aclose(self, *, within: float = CLOSE_WITHIN_S) -> None:
        """Stop: cancel what still runs, waiting at most ``within`` seconds."""
        tasks = set(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=within)
        self._lanes.clear()
