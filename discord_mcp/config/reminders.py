"""When an unanswered question is brought back to the owner: delays, quiet hours, escalation.

The settings' plain values and their parsers (the standard library only, so reading the
settings stays cheap); when a question is due is :mod:`discord_mcp.decisions.reminder_policy`,
the sending :mod:`discord_mcp.decisions.reminders`.

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
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

from discord_mcp.config.values import describe_value, read_flag, value_of
from discord_mcp.errors import ConfigError

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
class ReminderSettings:
    """When to remind, as configured: ``delays`` (empty: never), ``quiet`` hours, and DM
    escalation. :class:`~discord_mcp.decisions.reminder_policy.ReminderPolicy` applies them."""

    delays: tuple[float, ...] = DEFAULT_DELAYS
    quiet: QuietHours | None = None
    escalate_dm: bool = False


def read_reminders(env: Mapping[str, str]) -> ReminderSettings:
    raw = value_of(env, "DISCORD_MCP_REMINDERS")
    try:
        delays = parse_delays(raw)
    except ValueError as exc:
        raise ConfigError(
            "DISCORD_MCP_REMINDERS",
            f"{exc} ({describe_value(raw)})",
            "Use delays such as 15m,1h,4h (units s, m, h; the last one repeats, at least every "
            "5m), or off",
        ) from None
    raw = value_of(env, "DISCORD_MCP_QUIET_HOURS")
    try:
        quiet = parse_quiet_hours(raw)
    except ValueError as exc:
        raise ConfigError(
            "DISCORD_MCP_QUIET_HOURS",
            f"{exc} ({describe_value(raw)})",
            "Use a daily window such as 22:00-08:00, optionally followed by a time zone such as "
            "Europe/Berlin",
        ) from None
    return ReminderSettings(
        delays=delays, quiet=quiet, escalate_dm=read_flag(env, "DISCORD_MCP_ESCALATE_DM")
    )
