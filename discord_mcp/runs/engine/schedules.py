"""Scheduled prompts (seed 004's heartbeat): a prompt that runs in a project or a run thread on
a schedule, through the same engine as the owner's messages.

``<state>/runs/schedules.json``, version 2 (a public contract; version 1 files are read as
they are)::

    {"version": 2, "counter": 3,
     "schedules": {"sch_3": {"id": "sch_3", "when": "every 30m", "prompt": "check the CI",
                             "project": "app", "thread_id": "1359...",
                             "channel_id": null, "created_at": "...Z",
                             "next_at": "...Z", "last_at": "...Z" | null,
                             "last_job_id": "job_..." | null, "runs": 4}}}

``when`` is ``every <N>m|h|d`` (at least 1 minute), ``daily HH:MM`` (UTC), or (issue 25) a cron
expression in a time zone, written ``cron:"0,30 * * * *" tz:Asia/Tokyo`` and kept as ``cron
"0,30 * * * *" tz:Asia/Tokyo`` (five fields, or six with the seconds first; ``tz`` an IANA zone,
UTC when left out). Cron expressions are read by cronsim (Debian cron's rules, its handling of
daylight saving time included). A schedule for a project opens its own run thread the first
time it runs and keeps using it (``thread_id``); one for a thread runs in that thread; one for a
chat channel (``channel_id``) is its heartbeat (:mod:`discord_mcp.watch.chat`), whose prompt is
fixed. Runs missed while the daemon was down collapse into one run at the next start;
``next_at`` then counts from that run, and a run that failed never moves the next one. Changes
are read-modify-writes under the file's lock (the command line and the daemon may both write
it).
"""

from __future__ import annotations

import builtins
import datetime as dt
import re
import zoneinfo
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from cronsim import CronSim, CronSimError

from discord_mcp.errors import RunError
from discord_mcp.runs.journal.model import parse_iso, utc_iso
from discord_mcp.state.files import locked, read_json, write_json

VERSION = 2
MIN_EVERY_S = 60
_CRON = re.compile(
    r"""^cron\s*[:=]?\s*(?P<q>["'])(?P<expr>[^"']+)(?P=q)(?:\s+tz\s*[:=]?\s*(?P<tz>\S+))?$""",
    re.IGNORECASE,
)
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
    channel_id: str | None = None  # a chat channel: its heartbeat (issue 25)

    @property
    def zone(self) -> str | None:
        """A cron schedule's time zone (None for the others)."""
        cron = parse_cron(self.when)
        return cron[1] if cron else None

    @property
    def next_time(self) -> float:
        moment = parse_iso(self.next_at)
        assert moment is not None
        return moment.timestamp()


def parse_cron(when: str) -> tuple[str, str] | None:
    """A cron schedule's expression and time zone, or None when ``when`` is not one."""
    match = _CRON.match(when.strip())
    if match is None:
        return None
    return " ".join(match.group("expr").split()), match.group("tz") or "UTC"


def _cron_next(expression: str, zone: str, now: float) -> float:
    """The first time after ``now`` that ``expression`` matches in ``zone``.

    Raises:
        RunError: E_INVALID_SCHEDULE.
    """
    try:
        tz = zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise RunError(
            "E_INVALID_SCHEDULE",
            f"{zone!r} is not a time zone: use an IANA name such as Asia/Tokyo, Europe/Berlin "
            "or UTC",
        ) from None
    try:
        moment = next(CronSim(expression, dt.datetime.fromtimestamp(now, tz=tz)))
    except CronSimError as exc:
        raise RunError(
            "E_INVALID_SCHEDULE",
            f"cron {expression!r} is not a cron expression ({exc}): five fields, minute hour "
            'day month weekday (or six, seconds first), e.g. cron:"0,30 * * * *"',
        ) from None
    except StopIteration:
        raise RunError(
            "E_INVALID_SCHEDULE", f"cron {expression!r} never matches in the next 50 years"
        ) from None
    return moment.timestamp()


def normalize_when(text: str) -> str:
    """``30m`` -> ``every 30m``; ``09:00`` -> ``daily 09:00``; ``cron:"0 9 * * *" tz:Asia/Tokyo``
    -> ``cron "0 9 * * *" tz:Asia/Tokyo`` (checked: the expression and the zone).

    Raises:
        RunError: E_INVALID_SCHEDULE.
    """
    cron = parse_cron(text)
    if cron is not None:
        expression, zone = cron
        if len(expression.split()) not in (5, 6):
            raise RunError(
                "E_INVALID_SCHEDULE",
                f"cron {expression!r} has {len(expression.split())} fields: give five (minute "
                "hour day month weekday) or six (seconds first)",
            )
        _cron_next(expression, zone, 0.0)
        return f'cron "{expression}" tz:{zone}'
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
        f"{text!r} is not a schedule: write every 30m, every 2h, every 1d, daily 09:00 (UTC), or "
        'a cron expression in a time zone: cron:"0,30 * * * *" tz:Asia/Tokyo',
    )


def next_after(when: str, now: float) -> float:
    """The first time after ``now`` that a normalized schedule fires."""
    cron = parse_cron(when)
    if cron is not None:
        return _cron_next(cron[0], cron[1], now)
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
        self,
        when: str,
        prompt: str,
        *,
        project: str | None,
        thread_id: str | None,
        now: float,
        channel_id: str | None = None,
    ) -> Schedule:
        """A new schedule; its first run is one period (or the next daily or cron time) from
        ``now``. ``channel_id``: a chat channel's heartbeat (its prompt is fixed, so ``prompt``
        may be empty).

        Raises:
            RunError: E_INVALID_SCHEDULE, E_BAD_ARGUMENTS (no prompt, or not one target).
        """
        normalized = normalize_when(when)
        if not prompt.strip() and channel_id is None:
            raise RunError("E_BAD_ARGUMENTS", "a schedule needs a prompt to run")
        if sum(target is not None for target in (project, thread_id, channel_id)) != 1:
            raise RunError(
                "E_BAD_ARGUMENTS",
                "a schedule runs in a project (a thread of its own), in one run thread, or as "
                "a chat channel's heartbeat: give one of them",
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
                channel_id=channel_id,
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
        document["version"] = VERSION  # written back as the current version
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
        channel_id=text("channel_id"),
    )


def _number(schedule_id: str) -> int:
    tail = schedule_id.rpartition("_")[2]
    return int(tail) if tail.isdigit() else 0


def _not_found(schedule_id: str) -> RunError:
    return RunError(
        "E_SCHEDULE_NOT_FOUND", f"there is no schedule {schedule_id!r}: see /schedule list"
    )
