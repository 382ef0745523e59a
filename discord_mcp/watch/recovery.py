"""When the daemon's own records are lost: re-read from a safe point, never skip in silence.

Two records can be lost to a corrupt file (quarantined and reported either way):

- **the cursors** (``watch/cursors.json``): what was read in each channel and thread. Starting
  from "now" would skip everything the owner wrote while the daemon was down. Instead the daemon
  re-reads from a safe point: the start of its last pass that read every channel, which
  ``watch/alive.json`` records (a different file), else the last :data:`FALLBACK_WINDOW_S`.
  Handling is idempotent where it matters: a job is deduplicated by its message id (the run
  journal), an inbox note by its message id (the inbox). A command (``!stop``, ``!start``...)
  may have run before the loss, and running it again could do harm, so a command from before the
  daemon was last known alive is not re-run; the log names each one.
- **the inbox** (``inbox/items.json``): the daemon re-reads the channel's and its threads'
  recent history (:data:`INBOX_WINDOW_S`) and puts the owner's notes back (read marks are lost:
  they come back unread).

``watch/alive.json`` (version 1): ``caught_up_at`` (ISO time: every message older than it in
every watched channel was handled) and ``alive_at`` (the daemon was running then: commands up to
it may have run).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from discord_mcp.errors import StateCorrupt
from discord_mcp.state.files import off_loop, read_json, write_json

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
DISCORD_EPOCH_MS = 1_420_070_400_000
FALLBACK_WINDOW_S = 24 * 3600.0
"""Without an alive record, the cursors are rebuilt from this long ago."""
INBOX_WINDOW_S = 7 * 24 * 3600.0
"""A lost inbox is rebuilt from this much history."""
INBOX_MAX_PAGES = 10
"""At most this many pages of 100 messages per channel are re-read for a lost inbox."""
ALIVE_EVERY_S = 60.0
"""``alive.json`` is written at most this often (more often after a command)."""


def snowflake_at(seconds: float) -> str:
    """The smallest message id Discord could give at wall-clock time ``seconds``."""
    return str(max(0, int(seconds * 1000) - DISCORD_EPOCH_MS) << 22)


def last_snowflake_at(seconds: float) -> int:
    """The largest message id Discord could give at wall-clock time ``seconds``."""
    return int(snowflake_at(seconds)) | ((1 << 22) - 1)


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")


class Alive:
    """``<home>/watch/alive.json``: when the daemon last read everything, and was last alive."""

    def __init__(self, home: Path, wall: Callable[[], float] = time.time) -> None:
        self.path = home / "watch" / "alive.json"
        self._wall = wall
        self._caught_up_at: float | None = None
        self._written_at: float | None = None

    def read(self) -> tuple[float | None, float | None]:
        """(caught_up_at, alive_at) as wall-clock seconds; None where unknown."""
        try:
            document = read_json(self.path, max_version=FORMAT_VERSION)
        except StateCorrupt:
            return None, None  # quarantined and reported; the fallback window applies
        document = document or {}
        caught_up_at = _seconds(document.get("caught_up_at"))
        if self._caught_up_at is None:
            self._caught_up_at = caught_up_at  # kept until a later pass reads everything
        return caught_up_at, _seconds(document.get("alive_at"))

    async def record(self, *, caught_up_at: float | None = None, now: bool = False) -> None:
        """Note that the daemon is alive (and, if given, that everything before
        ``caught_up_at`` was read); written at most every :data:`ALIVE_EVERY_S` unless ``now``."""
        if caught_up_at is not None:
            self._caught_up_at = caught_up_at
        wall = self._wall()
        if not now and self._written_at is not None and wall - self._written_at < ALIVE_EVERY_S:
            return
        document: dict[str, object] = {"version": FORMAT_VERSION, "alive_at": iso(wall)}
        if self._caught_up_at is not None:
            document["caught_up_at"] = iso(self._caught_up_at)
        await off_loop(write_json, self.path, document)
        self._written_at = wall


def _seconds(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None
