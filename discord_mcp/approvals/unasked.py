"""Tool calls that were not run because the owner could not be asked at all.

Theory. A call the owner denied, or left unanswered, is an approval in the decision store, and a
run's result lists it (``calls_not_run``, :func:`~discord_mcp.watch.run_desk.calls_not_run`).
When Discord is down (or refuses the bot, or its rate limit holds past the wait, or the state
directory fails) the guard blocks the call before any card exists: nothing is in the store, and
a run would end ``completed`` saying every call ran. So an ask that fails in a run's thread
(``DISCORD_THREAD_ID``) is written here instead, one JSON line per call in
``<home>/approvals/unasked/<thread id>.ndjson``: ``{"at", "tool", "detail", "why"}``.

Writing it is best effort and never changes the answer: the call is blocked either way.
Blocking (files): call off the event loop.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
from pathlib import Path
from typing import Any

from discord_mcp.errors import (
    CloudflareBanned,
    DiscordError,
    DiscordTransportError,
    RateLimited,
    StateError,
    Unauthorized,
)
from discord_mcp.state.files import append_line

log = logging.getLogger(__name__)

SLACK = dt.timedelta(seconds=2)
"""Clocks of the daemon and of the run's processes are the same machine's; allow a little."""


def path_of(home: Path, thread_id: str) -> Path:
    return home / "approvals" / "unasked" / f"{thread_id}.ndjson"


def why(exc: BaseException) -> str:
    """Why the owner could not be asked, in a few words."""
    if isinstance(exc, asyncio.CancelledError | TimeoutError):
        return "the owner could not be asked in time (Discord did not answer)"
    if isinstance(exc, DiscordTransportError):
        return "the owner could not be asked: Discord was unreachable"
    if isinstance(exc, Unauthorized):
        return "the owner could not be asked: Discord rejected the bot token"
    if isinstance(exc, RateLimited | CloudflareBanned):
        return "the owner could not be asked: Discord's rate limit held the bot"
    if isinstance(exc, DiscordError):
        return "the owner could not be asked: Discord refused or failed"
    if isinstance(exc, StateError | OSError):
        return "the owner could not be asked: the state directory could not be used"
    return f"the owner could not be asked ({type(exc).__name__})"


def record(home: Path, thread_id: str, tool: str, detail: str, exc: BaseException) -> None:
    """Write down a call of ``thread_id`` blocked because its ask failed with ``exc``."""
    if not thread_id.isdigit():
        return  # not a run's thread: no run to report it to (and never a path)
    line = {
        "at": dt.datetime.now(dt.UTC).isoformat(),
        "tool": tool,
        "detail": " ".join(detail.split())[:500],
        "why": why(exc),
    }
    try:
        append_line(path_of(home, thread_id), line)
    except (OSError, StateError) as error:
        log.warning("could not note the call not run in thread %s: %s", thread_id, error)


def during(
    home: Path, thread_id: str, started: dt.datetime | None, ended: dt.datetime | None
) -> list[dict[str, Any]]:
    """The calls of ``thread_id`` noted between ``started`` and ``ended`` (a turn)."""
    if started is None or not thread_id.isdigit():
        return []
    since = _aware(started) - SLACK
    until = _aware(ended) + SLACK if ended is not None else None
    try:
        text = path_of(home, thread_id).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for raw in text.splitlines():
        try:
            line = json.loads(raw)
            at = _aware(dt.datetime.fromisoformat(str(line["at"])))
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by a crash: the others still count
        if at < since or (until is not None and at > until):
            continue
        found.append(
            {
                "tool": str(line.get("tool") or "tool"),
                "detail": str(line.get("detail") or ""),
                "why": str(line.get("why") or "the owner could not be asked"),
            }
        )
    return found


def _aware(moment: dt.datetime) -> dt.datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)
