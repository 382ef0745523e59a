"""The run journal: ``events.ndjson`` (append-only, fsynced) and ``snapshot.json``.

This module writes it (:class:`Journal`); :mod:`discord_mcp.runs.journal.journal_replay` reads it
back (:func:`load`, re-exported here).

Theory (seed 000 §3.2, §10.2-10.3). Every state change is first appended to
``<state>/runs/events.ndjson`` as one line ``{"seq", "ts", "type", "payload"}`` and fsynced;
``seq`` counts 1, 2, 3, ... without gaps. Every 50 events or 5 seconds (whichever comes first,
see :class:`Journal`) the whole state is written atomically to ``snapshot.json`` together with
the ``seq`` it includes and the byte offset in ``events.ndjson`` just after that event. Startup
reads the snapshot, seeks to that offset and replays the rest.

Compaction. ``events.ndjson`` is the *live segment*. Once a snapshot finds it larger than
:data:`SEGMENT_BYTES`, the journal starts a new one: it writes ``base.json`` (that snapshot, the
state just before the new segment's first event), renames the live segment to
``events-<first seq>-<last seq>.ndjson``, opens an empty ``events.ndjson`` and keeps only the
newest :data:`KEEP_SEGMENTS` old segments, for audit (each run's own folder keeps its own
record). So a start reads one snapshot and at most one segment, whatever the history, and the
journal on disk is the state plus a few segments. Every step is crash-safe: a crash between
them leaves a snapshot or ``base.json`` that the remaining events continue without a gap.

Damage policy:

- a sequence gap, or a line that cannot be parsed while more lines follow it: the journal is
  damaged in a way we cannot explain by a crash; :class:`~discord_mcp.errors.JournalCorrupt`
  names the file and line, and the engine does not start;
- an unparsable LAST line: a crash in the middle of an append. It is dropped with a warning
  (and cut off the file when the journal is opened for writing, so the next append starts on a
  clean line);
- an unreadable snapshot: moved aside by :func:`~discord_mcp.state.files.read_json` and the
  state is rebuilt from ``base.json`` and the live segment, or, before the first compaction,
  from the events alone (they are the truth; the snapshot is a shortcut). With neither a
  snapshot nor a base that reaches the live segment, the engine does not start and says so.

``snapshot.json`` and ``base.json``, version 1::

    {"version": 1, "seq": 1024, "events_offset": 198811, "segment_start": 1, "written_at": "...Z",
     "job_counter": 12, "sessions": {...}, "jobs": {...}, "dedupe": {"<thread>:<msg>": "job_..."},
     "finished": ["job_..."], "usage": {...}}

``segment_start`` is the first ``seq`` of the live segment the offset points into (1 before
any compaction; absent in older snapshots, which means 1).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from discord_mcp.errors import StateError
from discord_mcp.runs.journal.journal_replay import (
    BASE_FILE,
    EVENTS_FILE,
    SNAPSHOT_FILE,
    SNAPSHOT_VERSION,
    Event,
    Loaded,
    closed_segments,
    first_seq,
    load,
    segment_name,
)
from discord_mcp.runs.journal.model import RunState, utc_iso
from discord_mcp.state.files import FILE_MODE, ensure_dir, write_json

__all__ = [
    "BASE_FILE",
    "EVENTS_FILE",
    "KEEP_SEGMENTS",
    "SEGMENT_BYTES",
    "SNAPSHOT_FILE",
    "SNAPSHOT_VERSION",
    "Event",
    "Journal",
    "Loaded",
    "closed_segments",
    "load",
    "segment_name",
]

log = logging.getLogger(__name__)

SEGMENT_BYTES = 8 * 1024 * 1024
"""A live segment larger than this is closed at the next snapshot."""
KEEP_SEGMENTS = 2
"""Closed segments kept for audit; older ones are deleted."""


class Journal:
    """The open journal of a running engine: append events, write snapshots.

    Call :meth:`open` once (it cuts a torn last line off the file); then every change goes
    through :meth:`append`, which checks the event against the state, applies it, and writes
    it to disk with fsync before returning.
    """

    def __init__(
        self,
        directory: Path,
        *,
        wall_clock: Callable[[], float],
        monotonic: Callable[[], float],
        snapshot_every_events: int = 50,
        snapshot_every_seconds: float = 5.0,
        keep_finished: int = 200,
        keep_finished_total: int = 2000,
        keep_dedupe: int = 10000,
        segment_bytes: int = SEGMENT_BYTES,
        keep_segments: int = KEEP_SEGMENTS,
        fsync: Callable[[int], None] = os.fsync,
    ) -> None:
        self.directory = directory
        self.events_path = directory / EVENTS_FILE
        self.snapshot_path = directory / SNAPSHOT_FILE
        self._wall = wall_clock
        self._monotonic = monotonic
        self.snapshot_every_events = snapshot_every_events
        self.snapshot_every_seconds = snapshot_every_seconds
        self.keep_finished = keep_finished
        self._bounds = {
            "keep_finished": keep_finished,
            "keep_finished_total": keep_finished_total,
            "keep_dedupe": keep_dedupe,
        }
        self.segment_bytes = segment_bytes
        self.keep_segments = keep_segments
        self._fsync = fsync
        """How an append is made durable (``os.fsync``; a bench building a long history
        injects a no-op)."""
        self.state = RunState(**self._bounds)
        self.seq = 0
        self.offset = 0
        self.segment_start = 1
        self._fd: int | None = None
        self._since_snapshot = 0
        self._last_snapshot = 0.0
        self._broken = False

    def open(self) -> Loaded:
        """Load the state (snapshot + replay) and get ready to append."""
        ensure_dir(self.directory)
        loaded = load(
            self.directory,
            keep_finished=self._bounds["keep_finished"],
            keep_finished_total=self._bounds["keep_finished_total"],
            keep_dedupe=self._bounds["keep_dedupe"],
        )
        for warning in loaded.warnings:
            log.warning("%s", warning)
        self.state, self.seq, self.offset = loaded.state, loaded.seq, loaded.offset
        fd = os.open(self.events_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        if os.fstat(fd).st_size > self.offset:
            os.ftruncate(fd, self.offset)  # the torn tail that load() dropped
            os.fsync(fd)
        os.lseek(fd, 0, os.SEEK_END)
        self._fd = fd
        with open(self.events_path, "rb") as handle:
            first = first_seq(handle.readline())
        self.segment_start = first if first is not None else self.seq + 1
        self._broken = False
        self._last_snapshot = self._monotonic()
        self._since_snapshot = loaded.replayed
        return loaded

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def append(self, event_type: str, payload: Mapping[str, Any]) -> Event:
        """Apply the event to the state and make it durable.

        Raises:
            InvalidEvent: the event does not fit the state (nothing was written).
            StateError: the disk write failed; the engine must stop (memory is ahead of disk).
        """
        if self._fd is None:
            raise RuntimeError("the journal is not open")
        if self._broken:
            raise StateError(f"{self.events_path} could not be written; restart the engine")
        event = Event(self.seq + 1, utc_iso(self._wall()), event_type, dict(payload))
        line = (
            json.dumps(event.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"
        ).encode("utf-8")
        self.state.apply(event.type, event.payload, event.ts)
        try:
            written = os.write(self._fd, line)
            while written < len(line):
                written += os.write(self._fd, line[written:])
            self._fsync(self._fd)
        except OSError as exc:
            # Memory now holds an event the disk may not: no more appends, and no snapshot
            # (it would make that event look durable). The next start replays the disk.
            self._broken = True
            raise StateError(
                f"cannot append to {self.events_path} ({exc}); the run engine stops so that "
                "its state never runs ahead of the journal"
            ) from exc
        self.seq = event.seq
        self.offset += len(line)
        self._since_snapshot += 1
        if self._since_snapshot >= self.snapshot_every_events or self.offset >= self.segment_bytes:
            self.snapshot()  # a full live segment is closed at once: segments stay their size
        return event

    def snapshot_due(self) -> bool:
        """Whether the periodic snapshot should be written now (there are unsaved events)."""
        return (
            self._since_snapshot > 0
            and self._monotonic() - self._last_snapshot >= self.snapshot_every_seconds
        )

    def snapshot(self) -> None:
        """Write ``snapshot.json`` for the current state, atomically (not after a failed
        append)."""
        if self._broken:
            return
        document = self._document()
        write_json(self.snapshot_path, document)
        self._since_snapshot = 0
        self._last_snapshot = self._monotonic()
        if self.offset >= self.segment_bytes:
            self._start_segment(document)

    def _document(self) -> dict[str, Any]:
        return {
            "version": SNAPSHOT_VERSION,
            "seq": self.seq,
            "events_offset": self.offset,
            "segment_start": self.segment_start,
            "written_at": utc_iso(self._wall()),
            **self.state.to_dict(),
        }

    def _start_segment(self, snapshot: dict[str, Any]) -> None:
        """Close the live segment just snapshotted and open an empty one (module doc: each step
        leaves a snapshot or a base that what follows continues)."""
        assert self._fd is not None
        following = self.seq + 1
        closed = self.directory / segment_name(self.segment_start, self.seq)
        renamed = False
        try:
            write_json(self.directory / BASE_FILE, {**snapshot, "segment_start": following})
            os.close(self._fd)
            self._fd = None
            os.replace(self.events_path, closed)
            renamed = True
            self._fd = os.open(self.events_path, os.O_RDWR | os.O_CREAT | os.O_EXCL, FILE_MODE)
            _fsync_directory(self.directory)
        except (OSError, StateError) as exc:
            log.warning("could not start a new run journal segment (%s); going on", exc)
            if self._fd is None:
                try:
                    self._fd = os.open(self.events_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
                    os.lseek(self._fd, 0, os.SEEK_END)
                except OSError:
                    self._broken = True
                    return
            if not renamed:
                return
        self.segment_start, self.offset = following, 0
        write_json(self.snapshot_path, self._document())
        for old in closed_segments(self.directory)[: -self.keep_segments or None]:
            with contextlib.suppress(FileNotFoundError):
                old.unlink()
        log.info("run journal: closed %s, started a new segment at seq %d", closed.name, following)


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
