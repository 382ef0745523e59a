"""When an unanswered question is brought back to the owner: delays, quiet hours, escalation.

Pure values and parsers (the standard library only, so reading the settings stays cheap); the
sending is :mod:`discord_mcp.decisions.reminders`.

- ``DISCORD_MCP_REMINDERS``: the delays, ``15m,1h,4h`` by default. The first reminder goes out
  the first delay after the question was asked, the next one the second delay after that
  reminder, and so on; the last delay repeats for as long as the question stays open. ``off``
  sends none.
- ``DISCORD_MCP_QUIET_HOURS``: ``22:00-08:00``, optionally followed by an IANA time zone
  (``22:00-08:00 Europe/Berlin``; UTC without one). A reminder due in that window waits until
  it ends, unless the agent marked the question urgent.
- ``DISCORD_MCP_ESCALATE_DM``: a question that already got a channel reminder and is due
  again is also sent to each owner by direct message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the settings read this module: keep its imports light
    from discord_mcp.decisions.model import Decision

DEFAULT_DELAYS: tuple[float, ...] = (15 * 60.0, 60 * 60.0, 4 * 3600.0)
MIN_DELAY_S = 1.0
MIN_REPEAT_S = 5 * 60.0
"""The last delay repeats until the question is answered: at least this, or a pending question
would ring the owner's phone every few seconds for as long as it waits."""
MAX_DELAY_S = 7 * 86400.0
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}
_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smh])\s*$")
_QUIET = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})(?:\s+(\S+))?\s*$")
_OFF = frozenset({"off", "none", "no", "false", "0"})


def parse_delays(raw: str) -> tuple[float, ...]:
    """``15m,1h,4h`` -> seconds; ``off`` -> () (no reminders); empty -> the default.

    Raises:
        ValueError: a part is not a number with a unit s, m or h between 1 s and 7 days, or
            the last (repeating) one is under :data:`MIN_REPEAT_S` (the message says which
            part, never what it holds).
    """
    text = raw.strip().lower()
    if not text:
        return DEFAULT_DELAYS
    if text in _OFF:
        return ()
    delays = []
    for index, part in enumerate(text.split(","), start=1):
        match = _DELAY.match(part)
        if not match:
            raise ValueError(
                f"part {index} is not a delay such as 30s, 15m or 4h (a number and a unit s, m "
                "or h)"
            )
        seconds = float(match.group(1)) * _UNITS[match.group(2)]
        if not MIN_DELAY_S <= seconds <= MAX_DELAY_S:
            raise ValueError(f"part {index} is not between 1 second and 7 days")
        delays.append(seconds)
    if delays[-1] < MIN_REPEAT_S:
        raise ValueError(
            f"the last delay repeats until an answer comes, so it must be at least "
            f"{MIN_REPEAT_S / 60:g} minutes (part {len(delays)} is shorter)"
        )
    return tuple(delays)


@dataclass(frozen=True, slots=True)
class QuietHours:
    """A daily window (it may run across midnight) in a time zone. Start == end: never quiet."""

    start: time
    end: time
    zone: str = "UTC"

    def holds(self, now: datetime) -> datetime | None:
        """If ``now`` (aware) is inside the window, when the window ends (UTC); else None."""
        from zoneinfo import ZoneInfo

        local = now.astimezone(ZoneInfo(self.zone))

        def at(moment: time, days: int = 0) -> datetime:
            day = local.date() + timedelta(days=days)
            return datetime.combine(day, moment, tzinfo=local.tzinfo)

        if self.start == self.end:
            return None
        if self.start < self.end:  # e.g. 01:00-06:00, within one day
            inside, ends = at(self.start) <= local < at(self.end), at(self.end)
        elif local >= at(self.start):  # late evening: the window ends tomorrow
            inside, ends = True, at(self.end, 1)
        else:  # early morning: the window started yesterday
            inside, ends = local < at(self.end), at(self.end)
        return ends.astimezone(UTC) if inside else None


def parse_quiet_hours(raw: str) -> QuietHours | None:
    """``22:00-08:00`` or ``22:00-08:00 Europe/Berlin``; empty -> None.

    Raises:
        ValueError: not of that form, or a zone this system does not know.
    """
    if not raw.strip():
        return None
    match = _QUIET.match(raw)
    if not match:
        raise ValueError("is not of the form HH:MM-HH:MM, optionally followed by a time zone")
    h1, m1, h2, m2 = (int(match.group(i)) for i in range(1, 5))
    if h1 > 23 or h2 > 23 or m1 > 59 or m2 > 59:
        raise ValueError("has an hour above 23 or a minute above 59")
    zone = match.group(5) or "UTC"
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            "names a time zone this system does not know (use an IANA name such as Europe/Berlin)"
        ) from None
    return QuietHours(time(h1, m1), time(h2, m2), zone)


@dataclass(frozen=True, slots=True)
class ReminderPolicy:
    """When to remind: ``delays`` (empty: never), ``quiet`` hours, and DM escalation."""

    delays: tuple[float, ...] = DEFAULT_DELAYS
    quiet: QuietHours | None = None
    escalate_dm: bool = False

    @property
    def enabled(self) -> bool:
        return bool(self.delays)

    def next_due(self, decision: Decision) -> datetime | None:
        """When ``decision`` is next due a reminder, quiet hours aside; None: never.

        Counted from the last reminder, not from the question: a sender that was down for a
        day sends one reminder when it comes back, not every one it missed.
        """
        if not self.delays or decision.status != "pending" or not decision.card_message_id:
            return None
        sent = decision.reminders
        delay = self.delays[min(sent, len(self.delays) - 1)]
        since = decision.reminded_at if sent and decision.reminded_at else decision.asked_at
        try:
            return datetime.fromisoformat(since) + timedelta(seconds=delay)
        except ValueError:
            return None

    def held_until(self, decision: Decision, now: datetime) -> datetime | None:
        """When quiet hours end, if they hold this decision's reminder at ``now``."""
        if decision.urgent or self.quiet is None:
            return None
        return self.quiet.holds(now)

    def due(self, decision: Decision, now: datetime) -> bool:
        """Whether a reminder for ``decision`` goes out at ``now``."""
        at = self.next_due(decision)
        if at is None or now < at:
            return False
        return self.held_until(decision, now) is None

    def check_every(self, longest: float) -> float:
        """How often a sender looks for due reminders: often enough for the shortest delay
        (half of it), and at most every ``longest`` seconds."""
        if not self.delays:
            return longest
        return max(0.2, min(longest, min(self.delays) / 2))
