"""Which failures deserve a second attempt on their own, and when.

Theory (seed 000 §4.4, issue 11 §2). Two kinds of failure are not the job's fault:

- **temporary**: the model's server failed or could not be reached: HTTP 500/502/503/504/529,
  "overloaded", "high demand", a stream cut short, a refused or failed connection. As the CLIs
  print them (tests/data/agent-cli-samples, ``*-fail-500|529|midstream|noserver*``): Claude
  ``API Error: 529 Overloaded`` (``api_error_status``), Codex ``unexpected status 529`` or
  ``We're currently experiencing high demand``, Gemini ``[API Error: {"error":{"code":500``.
  Such a job is run again once, automatically, after a short pause;
- **usage limit**: the account's quota is spent until a reset time the CLI states: Claude's
  ``rate_limit_event`` (``status: "rejected"``, ``resetsAt``, epoch seconds) or its text
  ("usage limit reached|<epoch>", "resets 3pm (Europe/Paris)"), Codex "try again in 2 hours 5
  minutes" / "try again at 3:15 PM", Gemini ``RESOURCE_EXHAUSTED`` ... "retry in 42.5s". Such
  a job is held and runs again by itself after the reset. A limit without a reset time is an
  ordinary failure: trying again at once would only hit it again.

Authentication failures, refusals, timeouts and stops are never retried on their own.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from discord_mcp.runs.adapters.base import Outcome

RETRIABLE_CODES = frozenset({"E_CLI_ERROR", "E_CLI_EXIT_NONZERO", "E_ADAPTER_MISSING_RESULT"})

_SERVER_STATUS = re.compile(r'(?:\bHTTP|\bstatus|"code"|\bAPI Error)\D{0,3}(50[0234]|529)\b')
_TEMPORARY = re.compile(
    r"overloaded|high demand|temporar(?:y|ily) unavailable|stream disconnected|"
    r"incomplete json segment|connection (?:refused|reset|failed)|econnrefused|econnreset|"
    r"etimedout|fetch failed|reconnecting|\bunavailable\b",
    re.IGNORECASE,
)
_LIMIT = re.compile(
    r"usage limit|hit your (?:usage )?limit|limit reached|rate.limit|quota|resource_exhausted"
    r"|\b429\b",
    re.IGNORECASE,
)
_EPOCH = re.compile(r"\|(\d{10})\b")
_UNITS = {"d": 86400, "day": 86400, "h": 3600, "hour": 3600, "hr": 3600, "m": 60, "min": 60}
_UNITS |= {"minute": 60, "s": 1, "sec": 1, "second": 1}
_IN = re.compile(
    r"(?:try again|retry|resets?|reset)\s+(?:in|after)\s+"
    r"((?:\d+(?:\.\d+)?\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)"
    r"(?![a-z])[\s,and]*)+)",
    re.IGNORECASE,
)
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)", re.IGNORECASE)
_AT = re.compile(
    r"(?:try again at|resets?(?: at)?)\s+(\d{1,2})(?::(\d{2}))?\s*([ap]m)?\b(?:\s*\(([\w/+-]+)\))?",
    re.IGNORECASE,
)

Kind = Literal["temporary", "usage_limit"]


@dataclass(frozen=True)
class Failure:
    """A failure worth another attempt: its kind and, for a usage limit, when it resets."""

    kind: Kind
    resets_at: float | None = None  # epoch seconds


def classify(outcome: Outcome, now: float, *, tz: dt.tzinfo | None = None) -> Failure | None:
    """The kind of a failed outcome, or None when it is the job's own failure.

    ``now`` (epoch seconds) anchors relative times ("in 2 hours"); ``tz`` is the zone of a bare
    clock time ("at 3:15 PM"), the machine's own by default.
    """
    if outcome.ok or outcome.error_code not in RETRIABLE_CODES:
        return None
    text = outcome.error_message or ""
    if outcome.resets_at is not None:
        return Failure("usage_limit", outcome.resets_at)
    if _LIMIT.search(text):
        resets = reset_time(text, now, tz=tz)
        return Failure("usage_limit", resets) if resets is not None else None
    if _SERVER_STATUS.search(text) or _TEMPORARY.search(text):
        return Failure("temporary")
    return None


def classify_text(code: str, message: str, resets_at: float | None = None) -> Kind | None:
    """The kind of a journaled failure (its code, message and reset time), as :func:`classify`
    judged it when it happened; a usage limit whose reset time the message does not carry
    counts as one when it had a ``resets_at``."""
    if code not in RETRIABLE_CODES:
        return None
    if resets_at is not None:
        return "usage_limit"
    if _LIMIT.search(message):
        return "usage_limit" if reset_time(message, 0.0, tz=dt.UTC) is not None else None
    if _SERVER_STATUS.search(message) or _TEMPORARY.search(message):
        return "temporary"
    return None


def limit_without_reset(message: str) -> bool:
    """A rate or usage limit that did not say when it resets (not retried on its own)."""
    return bool(_LIMIT.search(message)) and reset_time(message, 0.0, tz=dt.UTC) is None


def reset_time(text: str, now: float, *, tz: dt.tzinfo | None = None) -> float | None:
    """When a usage limit stated in ``text`` resets (epoch seconds), if it says."""
    epoch = _EPOCH.search(text)
    if epoch:
        return float(epoch.group(1))
    relative = _IN.search(text)
    if relative:
        seconds = 0.0
        for amount, unit in _PART.findall(relative.group(1)):
            seconds += float(amount) * _unit(unit)
        return now + seconds if seconds > 0 else None
    clock = _AT.search(text)
    if clock:
        return _next_clock_time(clock, now, tz)
    return None


def _unit(name: str) -> int:
    name = name.lower()
    if name in _UNITS:
        return _UNITS[name]
    return _UNITS.get(name.rstrip("s"), 0)


def _next_clock_time(match: re.Match[str], now: float, tz: dt.tzinfo | None) -> float | None:
    hour, minute = int(match.group(1)), int(match.group(2) or 0)
    meridiem = (match.group(3) or "").lower()
    if meridiem:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if meridiem == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    zone = tz
    if match.group(4):
        try:
            zone = ZoneInfo(match.group(4))
        except (ZoneInfoNotFoundError, ValueError):
            zone = tz
    current = dt.datetime.fromtimestamp(now, tz=zone) if zone else dt.datetime.fromtimestamp(now)
    moment = current.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if moment <= current:
        moment += dt.timedelta(days=1)
    return moment.timestamp()
