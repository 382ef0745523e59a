"""Scheduled prompts (seed 004's heartbeat): a prompt that runs in a project or a run thread on
a schedule, through the same engine as the owner's messages.

``<state>/runs/schedules.json``, version 1 (a public contract)::

    {"version": 1, "counter": 3,
     "schedules": {"sch_3": {"id": "sch_3", "when": "every 30m", "prompt": "check the CI",
                             "project": "app", "thread_id": "1359...", "created_at": "...Z",
                             "next_at": "...Z", "last_at": "...Z" | null,
                             "last_job_id": "job_..." | null, "runs": 4}}}

``when`` is ``every <N>m|h|d`` (at least 1 minute) or ``daily HH:MM`` (UTC). A schedule for a
project opens its own run thread the first time it runs and keeps using it (``thread_id``);
one for a thread runs in that thread. Runs missed while the daemon was down collapse into one
run at the next start; ``next_at`` then counts from that run. Changes are read-modify-writes
under the file's lock (the command line and the daemon may both write it).
"""

from __future__ import annotations

import builtins
import datetime as dt
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.runs.model import parse_iso, utc_iso
from discord_mcp.state.files import locked, read_json, write_json

VERSION = 1
MIN_EVERY_S = 60
_EVERY = re.compile(r"^(?:every\s+)?(\d{1,4})\s*(m|min|minutes?|h|hours?|d|days?)$")
_DAILY = re.compile(r"^(?:daily\s+(?:at\s+)?)?(\d{1,2}):(\d{2})$")
_SECONDS = {"m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Schedule:
    id: str
    when: str
    prompt: str
    project: str | None
    thread_id: str | None
    created_at: str
    next_at: str
    last_at: str | None = None
    last_job_id: str | None = None
    runs: int = 0

    @property
    def next_time(self) -> float:
        moment = parse_iso(self.next_at)
        assert moment is not None
        return moment.timestamp()


def normalize_when(text: str) -> str:
    """``30m`` -> ``every 30m``; ``09:00`` -> ``daily 09:00``.

    Raises:
        RunError: E_INVALID_SCHEDULE.
    """
    given = " ".join(text.strip().lower().split())
    every = _EVERY.match(given)
    if every:
        amount, unit = int(every.group(1)), every.group(2)[0]
        if amount * _SECONDS[unit] >= MIN_EVERY_S:
            return f"every {amount}{unit}"
    daily = _DAILY.match(given)
    if daily and int(daily.group(1)) < 24 and int(daily.group(2)) < 60:
        return f"daily {int(daily.group(1)):02d}:{daily.group(2)}"
    raise RunError(
        "E_INVALID_SCHEDULE",
        f"{text!r} is not a schedule: write every 30m, every 2h, every 1d or daily 09:00 (UTC); "
        "at least a minute apart",
    )


def next_after(when: str, now: float) -> float:
    """The first time after ``now`` that a normalized schedule fires."""
    kind, _, value = when.partition(" ")
    if kind == "every":
        return now + int(value[:-1]) * _SECONDS[value[-1]]
    hour, minute = (int(part) for part in value.split(":"))
    current = dt.datetime.fromtimestamp(now, tz=dt.UTC)
    moment = current.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if moment <= current:
        moment += dt.timedelta(days=1)
    return moment.timestamp()


class ScheduleStore:
    """The scheduled prompts in ``<state_dir>/runs/schedules.json`` (blocking: call off the
    event loop, e.g. with :func:`~discord_mcp.state.files.off_loop`)."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "runs" / "schedules.json"

    def list(self) -> builtins.list[Schedule]:
        """Every schedule, oldest first."""
        entries = self._read()["schedules"]
        return sorted((_load(e) for e in entries.values()), key=lambda s: _number(s.id))

    def get(self, schedule_id: str) -> Schedule:
        """Raises RunError E_SCHEDULE_NOT_FOUND."""
        found = {s.id: s for s in self.list()}.get(schedule_id)
        if found is None:
            raise _not_found(schedule_id)
        return found

    def add(
        self, when: str, prompt: str, *, project: str | None, thread_id: str | None, now: float
    ) -> Schedule:
        """A new schedule; its first run is one period (or the next daily time) from ``now``.

        Raises:
            RunError: E_INVALID_SCHEDULE, E_BAD_ARGUMENTS (no prompt, or no target).
        """
        normalized = normalize_when(when)
        if not prompt.strip():
            raise RunError("E_BAD_ARGUMENTS", "a schedule needs a prompt to run")
        if (project is None) == (thread_id is None):
            raise RunError(
                "E_BAD_ARGUMENTS",
                "a schedule runs either in a project (a thread of its own) or in one run "
                "thread: give one of them",
            )
        with locked(self.path):
            document = self._read()
            number = int(document.get("counter", 0)) + 1
            schedule = Schedule(
                id=f"sch_{number}",
                when=normalized,
                prompt=prompt.strip(),
                project=project,
                thread_id=thread_id,
                created_at=utc_iso(now),
                next_at=utc_iso(next_after(normalized, now)),
            )
            document["counter"] = number
            document["schedules"][schedule.id] = asdict(schedule)
            write_json(self.path, document)
        return schedule

    def remove(self, schedule_id: str) -> Schedule:
        """Raises RunError E_SCHEDULE_NOT_FOUND."""
        with locked(self.path):
            document = self._read()
            entry = document["schedules"].pop(schedule_id, None)
            if entry is None:
                raise _not_found(schedule_id)
            write_json(self.path, document)
        return _load(entry)

    def due(self, now: float) -> builtins.list[Schedule]:
        return [s for s in self.list() if s.next_time <= now]

    def ran(
        self, schedule_id: str, *, now: float, thread_id: str | None, job_id: str | None
    ) -> Schedule | None:
        """Record a run (or a failed attempt: ``job_id`` None) and set the next time; None if
        the schedule was removed meanwhile."""
        with locked(self.path):
            document = self._read()
            entry = document["schedules"].get(schedule_id)
            if entry is None:
                return None
            current = _load(entry)
            updated = replace(
                current,
                thread_id=thread_id or current.thread_id,
                next_at=utc_iso(next_after(current.when, now)),
                last_at=utc_iso(now),
                last_job_id=job_id,
                runs=current.runs + (1 if job_id else 0),
            )
            document["schedules"][schedule_id] = asdict(updated)
            write_json(self.path, document)
        return updated

    def _read(self) -> dict[str, Any]:
        document = read_json(self.path, max_version=VERSION)
        if document is None:
            document = {"version": VERSION, "counter": 0}
        document.setdefault("schedules", {})
        return document


def _load(entry: dict[str, Any]) -> Schedule:
    def text(key: str) -> str | None:
        value = entry.get(key)
        return None if value is None else str(value)

    return Schedule(
        id=str(entry["id"]),
        when=str(entry["when"]),
        prompt=str(entry["prompt"]),
        project=text("project"),
        thread_id=text("thread_id"),
        created_at=str(entry.get("created_at") or ""),
        next_at=str(entry["next_at"]),
        last_at=text("last_at"),
        last_job_id=text("last_job_id"),
        runs=int(entry.get("runs") or 0),
    )


def _number(schedule_id: str) -> int:
    tail = schedule_id.rpartition("_")[2]
    return int(tail) if tail.isdigit() else 0


def _not_found(schedule_id: str) -> RunError:
    return RunError(
        "E_SCHEDULE_NOT_FOUND", f"there is no schedule {schedule_id!r}: see /schedule list"
    )
