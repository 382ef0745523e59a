"""This process's link to the machine's one gateway: hold it, or follow whoever does.

:meth:`LiveLink.run` loops between two roles. As the *holder* it runs the gateway, answers
interactions (they must be acknowledged within 3 s, whoever waits for the decision), appends
events to the spool and hands them to this process's handler. As a *follower* it reads the spool
and hands the same events to its handler, and retries the holder lock every second, so a dead
holder is replaced within seconds. A non-preferred holder hands over to the watch daemon when it
asks. When Discord refuses the gateway for good (bad token, Message Content intent off), the
gateway is marked disabled for a while and everyone keeps working by polling.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from discord_mcp.config import Settings
from discord_mcp.errors import DiscordError, GatewayError
from discord_mcp.relay.budget import IdentifyBudget
from discord_mcp.relay.holder import (
    HolderLock,
    HolderStatus,
    clear_preference,
    preferred_pid,
    read_status,
    write_preference,
    write_status,
)
from discord_mcp.relay.spool import SpoolReader, SpoolWriter
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.transport.gateway import DEFAULT_INTENTS, Gateway, SessionInfo
from discord_mcp.transport.rest import RestClient

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
FOLLOW_INTERVAL_S = 0.025
LOCK_RETRY_S = 1.0
STATUS_EVERY_S = 2.0
DISABLED_FOR_S = 600.0
"""After a fatal refusal, nobody on this machine retries the gateway for this long."""


class LiveHandler(Protocol):
    """What a process does with live events."""

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        """A gateway event (from the holder's connection or the spool)."""

    async def on_interaction(self, data: dict[str, Any]) -> None:
        """An INTERACTION_CREATE; only the holder gets these, and must answer within 3 s."""


class LiveLink:
    """Holds or follows the machine's gateway for one process.

    Args:
        settings: token, state directory, gateway URL.
        rest: the REST client (for ``GET /gateway/bot``).
        handler: receives events (and, while holding, interactions).
        program: who we are, for the status file (``discord-mcp`` or ``discord-watch``).
        preferred: the watch daemon; other holders hand the gateway over to it.
        may_hold: False to only ever follow another process's gateway.
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
        follow_interval: float = FOLLOW_INTERVAL_S,
        lock_retry: float = LOCK_RETRY_S,
    ) -> None:
        self._settings = settings
        self._rest = rest
        self._handler = handler
        self._program = program
        self._preferred = preferred
        self._may_hold_at_all = may_hold
        self._intents = intents
        self._wall = wall
        self._sleep = sleep
        self._follow_interval = follow_interval
        self._lock_retry = lock_retry
        directory = settings.home / "gateway"
        self._lock = HolderLock(directory / "holder.lock")
        self._status_path = directory / "status.json"
        self._prefer_path = directory / "prefer.json"
        self._spool_path = directory / "spool.ndjson"
        self._budget = IdentifyBudget(directory / "identifies.json", remaining=self._remaining)
        self._gateway: Gateway | None = None
        self.holding = asyncio.Event()
        """Set while this process holds the gateway lock."""

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
        if self._preferred:
            write_preference(self._prefer_path, self._program)
        reader = SpoolReader(self._spool_path)
        try:
            while True:
                if self._may_hold() and self._lock.try_acquire():
                    reader.close()
                    try:
                        self.holding.set()
                        await self._hold()
                    finally:
                        self.holding.clear()
                        self._lock.release()
                    reader = SpoolReader(self._spool_path)
                else:
                    await self._follow(reader, self._lock_retry)
        finally:
            reader.close()
            if self._preferred:
                clear_preference(self._prefer_path)

    def _may_hold(self) -> bool:
        if not self._may_hold_at_all:
            return False
        status = read_status(self._status_path)
        if status is not None and status.disabled(self._wall()):
            return False
        # Leave the gateway to the watch daemon when it wants it.
        return self._preferred or preferred_pid(self._prefer_path) is None

    async def _follow(self, reader: SpoolReader, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while loop.time() < end:
            for event in reader.poll():
                name = str(event.get("t") or "")
                data = event.get("d")
                if name != "INTERACTION_CREATE" and isinstance(data, dict):
                    await self._deliver(name, data)
            await self._sleep(self._follow_interval)

    async def _deliver(self, name: str, data: dict[str, Any]) -> None:
        try:
            await self._handler.on_event(name, data)
        except Exception:
            log.exception("handling %s failed", name)

    # ---- holding ----------------------------------------------------------------------------

    async def _hold(self) -> None:
        previous = read_status(self._status_path)
        session = None
        if previous is not None and previous.resumable(self._wall()):
            session = SessionInfo(previous.session_id, previous.seq, previous.resume_url)
        try:
            url = self._settings.gateway_url or (await self._rest.get_gateway_bot())["url"]
        except DiscordError as exc:
            log.warning("cannot find the gateway (%s); polling meanwhile", exc)
            await self._sleep(self._lock_retry * 5)
            return
        writer = SpoolWriter(self._spool_path)

        async def dispatched(name: str, data: dict[str, Any], seq: int | None) -> None:
            if name == "INTERACTION_CREATE":
                await self._handler.on_interaction(data)
            if name in RELAYED:
                writer.append(name, data, seq)
            if name != "INTERACTION_CREATE":
                await self._deliver(name, data)

        gateway = Gateway(
            self._settings.token,
            url=url,
            on_dispatch=dispatched,
            identify_guard=self._budget,
            intents=self._intents,
            session=session,
        )
        self._gateway = gateway
        log.info("holding the gateway (%s)", "resuming the previous session" if session else "new")
        task = asyncio.create_task(gateway.run(), name="gateway")
        try:
            while not task.done():
                was_ready = gateway.ready.is_set()
                self._publish(gateway, "ready" if was_ready else "connecting")
                if not self._preferred and preferred_pid(self._prefer_path) is not None:
                    log.info("handing the gateway over to the watch daemon")
                    break
                # Publish again every few seconds, and at once when the session becomes ready,
                # so other processes know a live gateway is there (cards get buttons).
                became_ready = asyncio.create_task(gateway.ready.wait())
                try:
                    await asyncio.wait(
                        {task} if was_ready else {task, became_ready},
                        timeout=STATUS_EVERY_S,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                finally:
                    await cancel_and_wait(became_ready)
            if task.done():
                task.result()
        except GatewayError as exc:
            log.error("gateway unavailable: %s", exc)
            self._publish(gateway, "disabled", reason=str(exc))
            return
        finally:
            if not task.done():
                await gateway.close()  # resumable, and the loop ends instead of resuming
                await cancel_and_wait(task, within=5)
            self._gateway = None
            status = read_status(self._status_path)
            if status is None or status.state != "disabled":
                self._publish(gateway, "stopped")

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
            ),
        )

    async def _remaining(self) -> tuple[int, float]:
        limit = (await self._rest.get_gateway_bot())["session_start_limit"]
        return int(limit["remaining"]), float(limit["reset_after"]) / 1000.0


def spool_path(home: Path) -> Path:
    """Where the spool of a state directory lives."""
    return home / "gateway" / "spool.ndjson"
