"""How far the run folders are known to be up to date: ``runs/recorded.json`` (issue 38).

The recorder (:mod:`.recorder`) writes each folder after the journal says what happened. A
daemon that dies in between leaves a folder behind the journal, so at start-up the recorder
compares them; with a year of runs, comparing every one made each start read two files per run
ever made. So each time the recorder's queue runs empty it notes the moment here: every session
last changed before that moment had its folder written. At start-up only the sessions changed
after it (less a margin) are compared. No file, an unreadable one, or one from the future (a
clock set back) means "compare them all": a doubt costs time, never a folder left stale.

    {"version": 1, "recorded_through": "2026-11-28T10:15:00.000Z"}
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

from discord_mcp.errors import DiscordMCPError
from discord_mcp.runs.journal.model import parse_iso, utc_iso
from discord_mcp.state.files import read_json, write_json

log = logging.getLogger(__name__)

NAME = "recorded.json"
VERSION = 1
MARGIN = dt.timedelta(minutes=5)
"""Sessions changed this close before the mark are compared anyway (the engine writes the
journal, then tells the recorder: a mark taken in between must not skip that session)."""


def path(home: Path) -> Path:
    return home / "runs" / NAME


def note_recorded(home: Path, at: float) -> None:
    """Every session changed before ``at`` (epoch seconds) has its folder written (blocking:
    off the loop)."""
    document = {"version": VERSION, "recorded_through": utc_iso(at)}
    write_json(path(home), document, durable=False)


def compare_after(home: Path, now: float) -> dt.datetime | None:
    """Sessions last changed after this moment need comparing at start-up (None: all of them).
    Blocking: off the loop."""
    try:
        document = read_json(path(home), max_version=VERSION)
    except (DiscordMCPError, OSError) as exc:
        log.warning("%s cannot be read (%s): every run folder is compared", NAME, exc)
        return None
    if document is None:
        return None
    try:
        mark = parse_iso(str(document.get("recorded_through")))
    except ValueError:
        mark = None
    if mark is None or mark.tzinfo is None or mark.timestamp() > now:
        return None
    return mark - MARGIN
