"""Retiring sessions at rest and bringing them back: the engine's part (:mod:`.retired` says
what and why)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from discord_mcp.errors import StateCorrupt, StateError
from discord_mcp.runs.folders.folders import is_run_id
from discord_mcp.runs.journal.model_controls import InvalidEvent
from discord_mcp.runs.journal.records import parse_iso
from discord_mcp.runs.journal.retired import (
    FORMAT_VERSION,
    can_retire,
    record_of,
    retired_path,
    run_pointer_path,
)
from discord_mcp.state.files import off_loop, read_json, write_json

if TYPE_CHECKING:
    from discord_mcp.runs.contract import Clock
    from discord_mcp.runs.journal.journal import Journal

log = logging.getLogger(__name__)

RETIRE_AFTER_S = 7 * 86400.0
"""A session at rest this long (no job running or queued, no activity) retires."""
RETIRE_EVERY_S = 6 * 3600.0
"""How often a running engine looks for sessions to retire (and once at its start)."""
BATCH = 200
"""Sessions retired by one journal event (their files are written first)."""


def _write_records(runs_dir: Path, records: Iterable[tuple[str, dict[str, Any]]]) -> None:
    for thread_id, record in records:
        write_json(retired_path(runs_dir, thread_id), {"version": FORMAT_VERSION, **record})
        run_id = record["session"].get("run_id")
        if isinstance(run_id, str) and is_run_id(run_id):
            pointer = {"version": FORMAT_VERSION, "thread_id": thread_id}
            write_json(run_pointer_path(runs_dir, run_id), pointer)


def _thread_of_run(runs_dir: Path, run_id: str) -> str | None:
    document = read_json(run_pointer_path(runs_dir, run_id), max_version=FORMAT_VERSION)
    thread_id = (document or {}).get("thread_id")
    return thread_id if isinstance(thread_id, str) and can_retire(thread_id) else None


def _read_record(runs_dir: Path, thread_id: str) -> dict[str, Any] | None:
    document = read_json(retired_path(runs_dir, thread_id), max_version=FORMAT_VERSION)
    if document is None:
        return None
    return {"session": document["session"], "jobs": document.get("jobs") or []}


class EngineRetirement:
    """The engine's part: retiring sessions at rest and bringing them back (module doc)."""

    journal: Journal
    state_dir: Path
    clock: Clock

    @property
    def _runs_dir(self) -> Path:
        return self.state_dir / "runs"

    async def retire_idle(self) -> int:
        """Retire every session at rest for :data:`RETIRE_AFTER_S`; how many retired."""
        cutoff = self.clock.time() - RETIRE_AFTER_S
        state = self.journal.state
        due = [
            session.thread_id
            for session in state.sessions.values()
            if session.running_job_id is None
            and not session.queue
            and can_retire(session.thread_id)
            and not (session.workdir and session.landed is None)  # its worktree awaits landing
            and _seconds(session.last_activity_at) < cutoff
        ]
        retired = 0
        for start in range(0, len(due), BATCH):
            records = [
                (t, record_of(state.sessions[t], state.jobs))
                for t in due[start : start + BATCH]
                if t in state.sessions
            ]
            await off_loop(_write_records, self._runs_dir, records)
            # A message may have come meanwhile: only what is still exactly as written goes.
            still = [
                t
                for t, record in records
                if t in state.sessions and record_of(state.sessions[t], state.jobs) == record
            ]
            if still:
                self.journal.append("SessionsRetired", {"thread_ids": still})
                retired += len(still)
        if retired:
            log.info(
                "retired %d session%s at rest for a week", retired, "" if retired == 1 else "s"
            )
        return retired

    async def revive(self, thread_id: str) -> bool:
        """Bring back the retired session of ``thread_id`` (module doc); False when the thread
        has a live session, or no retired one. A damaged file is moved aside and reported."""
        thread_id = str(thread_id)
        if not can_retire(thread_id) or thread_id in self.journal.state.sessions:
            return False
        try:
            record = await off_loop(_read_record, self._runs_dir, thread_id)
        except (StateCorrupt, KeyError) as exc:
            log.warning("the retired session of thread %s cannot be read: %s", thread_id, exc)
            return False
        if record is None or thread_id in self.journal.state.sessions:
            return False
        try:
            self.journal.append("SessionRevived", record)
        except InvalidEvent as exc:
            log.warning("the retired session of thread %s does not fit: %s", thread_id, exc)
            return False
        log.info("session of thread %s is back (it had retired)", thread_id)
        return True

    async def revive_run(self, run_id: str) -> bool:
        """:meth:`revive` the session of a retired run (``submit --resume``)."""
        if not is_run_id(run_id) or self.journal.state.session_of_run(run_id) is not None:
            return False
        try:
            thread_id = await off_loop(_thread_of_run, self._runs_dir, run_id)
        except StateCorrupt as exc:
            log.warning("the retired run %s cannot be read: %s", run_id, exc)
            return False
        return thread_id is not None and await self.revive(thread_id)

    async def _retire_logging_failures(self) -> None:
        """:meth:`retire_idle`, at the engine's start (the first after an upgrade retires a
        year's sessions) and every :data:`RETIRE_EVERY_S`; a failure is logged, never a reason
        not to start or to stop."""
        try:
            await self.retire_idle()
        except StateError as exc:
            log.warning("retiring sessions at rest failed: %s", exc)

    async def retire_every(self, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        """Retire sessions every :data:`RETIRE_EVERY_S` (a background task of the engine)."""
        while True:
            await sleep(RETIRE_EVERY_S)
            await self._retire_logging_failures()


def _seconds(stamp: str) -> float:
    moment = parse_iso(stamp)
    return moment.timestamp() if moment is not None else float("inf")
