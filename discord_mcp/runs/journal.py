"""The run journal: ``events.ndjson`` (append-only, fsynced) and ``snapshot.json``.

Theory (seed 000 §3.2, §10.2-10.3). Every state change is first appended to
``<state>/runs/events.ndjson`` as one line ``{"seq", "ts", "type", "payload"}`` and fsynced;
``seq`` counts 1, 2, 3, ... without gaps. Every 50 events or 5 seconds (whichever comes first,
see :class:`Journal`) the whole state is written atomically to ``snapshot.json`` together with
the ``seq`` it includes and the byte offset in ``events.ndjson`` just after that event. Startup
reads the snapshot, seeks to that offset and replays the rest.

Damage policy:

- a sequence gap, or a line that cannot be parsed while more lines follow it: the journal is
  damaged in a way we cannot explain by a crash; :class:`~discord_mcp.errors.JournalCorrupt`
  names the file and line, and the engine does not start;
- an unparsable LAST line: a crash in the middle of an append. It is dropped with a warning
  (and cut off the file when the journal is opened for writing, so the next append starts on a
  clean line);
- an unreadable snapshot: moved aside by :func:`~discord_mcp.state.files.read_json` and the
  state is rebuilt from the events alone (they are the truth; the snapshot is a shortcut).

``snapshot.json``, version 1::

    {"version": 1, "seq": 1024, "events_offset": 198811, "written_at": "...Z",
     "job_counter": 12, "sessions": {...}, "jobs": {...}, "dedupe": {"<thread>:<msg>": "job_..."}}
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from discord_mcp.errors import JournalCorrupt, StateCorrupt, StateError
from discord_mcp.runs.model import InvalidEvent, RunState, utc_iso
from discord_mcp.state.files import FILE_MODE, ensure_dir, read_json, write_json

log = logging.getLogger(__name__)

SNAPSHOT_VERSION = 1
EVENTS_FILE = "events.ndjson"
SNAPSHOT_FILE = "snapshot.json"


@dataclass(frozen=True)
class Event:
    seq: int
    ts: str
    type: str
    payload: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "ts": self.ts, "type": self.type, "payload": dict(self.payload)}


@dataclass
class Loaded:
    """What :func:`load` found: the state, where the journal ends, and what it had to forgive."""

    state: RunState
    seq: int
    offset: int  # bytes of events.ndjson that hold complete, valid events
    replayed: int  # events applied on top of the snapshot
    from_snapshot: bool
    warnings: list[str] = field(default_factory=list)


def load(directory: Path, *, keep_finished: int = 200, use_snapshot: bool = True) -> Loaded:
    """Rebuild the state from ``snapshot.json`` plus the events after it (read-only).

    ``use_snapshot=False`` replays every event from the start (tests compare the two).

    Raises:
        JournalCorrupt: a gap in ``seq``, or a damaged line that is not the last one.
        StateError: a snapshot written by a newer version, or a snapshot ahead of the events.
    """
    events_path = directory / EVENTS_FILE
    warnings: list[str] = []
    snapshot: dict[str, Any] | None = None
    if use_snapshot:
        try:
            snapshot = read_json(directory / SNAPSHOT_FILE, max_version=SNAPSHOT_VERSION)
        except StateCorrupt as exc:
            warnings.append(f"{exc}; rebuilding the run state from {events_path}")
    if snapshot is not None:
        state = RunState.from_dict(snapshot, keep_finished=keep_finished)
        seq = int(snapshot["seq"])
        offset = int(snapshot.get("events_offset", 0))
    else:
        state, seq, offset = RunState(keep_finished=keep_finished), 0, 0

    try:
        with open(events_path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        data = b""
    # Without a valid offset (a rewritten file, say) scan from the start, skipping what the
    # snapshot already holds but still checking the whole sequence.
    start = offset if snapshot is not None and _starts_after(data, offset, seq) else 0
    with _bulk():
        replayed, end_seq, end_offset = _replay(
            events_path, data, start, state, after_seq=seq, warnings=warnings
        )
    if end_seq < seq:
        raise StateError(
            f"{directory / SNAPSHOT_FILE} holds events up to seq {seq} but {events_path} ends "
            f"at seq {end_seq}: events were lost. Restore the events file, or move both files "
            "aside to start with an empty run state"
        )
    return Loaded(
        state=state,
        seq=end_seq,
        offset=end_offset,
        replayed=replayed,
        from_snapshot=snapshot is not None,
        warnings=warnings,
    )


def _starts_after(data: bytes, offset: int, seq: int) -> bool:
    """Whether ``offset`` is a line start whose event is ``seq + 1`` (or the end of the file)."""
    if offset > len(data) or (offset > 0 and data[offset - 1 : offset] != b"\n"):
        return False
    if offset == len(data):
        return True
    end = data.find(b"\n", offset)
    line = data[offset : end if end >= 0 else len(data)]
    try:
        return int(json.loads(line)["seq"]) == seq + 1
    except (ValueError, KeyError, TypeError):
        return False


@contextlib.contextmanager
def _bulk() -> Iterator[None]:
    """No cyclic garbage collection while a replay builds its many small objects, which all
    live on: the collector would scan them again and again for nothing (a fifth of a 100k-event
    replay, bench/runs.py). Nothing here makes cycles; the process's setting is restored."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _replay(
    path: Path,
    data: bytes,
    start: int,
    state: RunState,
    *,
    after_seq: int,
    warnings: list[str],
) -> tuple[int, int, int]:
    """Apply the events in ``data[start:]`` with ``seq > after_seq``.

    Returns (events applied, last seq, byte offset just after the last good line).
    """
    chunk = data[start:]
    # Line numbers in messages count from the start of the file, like an editor does.
    first_line = data.count(b"\n", 0, start)
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        if chunk.find(b"\n", exc.start) >= 0:
            line = first_line + chunk.count(b"\n", 0, exc.start) + 1
            raise JournalCorrupt(str(path), line, "the line is not valid UTF-8") from None
        text = chunk[: chunk.rfind(b"\n", 0, exc.start) + 1].decode("utf-8")
        line = first_line + text.count("\n") + 1
        warnings.append(
            f"{path} line {line}: cut off mid-character; dropped it (a crash while writing)"
        )
    # One decoder over one string: far faster than json.loads per line (bench/runs.py).
    decode = json.JSONDecoder().raw_decode
    apply = state.apply
    size = len(text)
    position = 0
    line_number = first_line
    expected = 1 if start == 0 else after_seq + 1
    last_seq = after_seq if start else 0
    applied = 0
    while position < size:
        end = text.find("\n", position)
        complete = end >= 0
        stop = end if complete else size
        line_number += 1
        problem = None
        try:
            event, parsed_to = decode(text, position)
            if parsed_to != stop:
                raise ValueError("extra characters after the event")
            seq = event["seq"]
            kind = event["type"]
            payload = event["payload"]
            ts = event["ts"]
            if type(seq) is not int or type(payload) is not dict:
                raise TypeError("seq must be an integer and payload an object")
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            problem = f"not a journal event ({exc})"
        if problem is None and not complete:
            problem = "the line is cut off (no newline)"
        if problem is not None:
            if not complete or stop + 1 >= size:
                warnings.append(
                    f"{path} line {line_number}: {problem}; dropped it (a crash while writing)"
                )
                break
            raise JournalCorrupt(str(path), line_number, problem)
        if seq != expected:
            raise JournalCorrupt(
                str(path), line_number, f"sequence gap: expected seq {expected}, found {seq}"
            )
        expected += 1
        last_seq = seq
        position = stop + 1
        if seq <= after_seq:
            continue  # already in the snapshot
        try:
            apply(kind, payload, ts)
        except InvalidEvent as exc:
            raise JournalCorrupt(str(path), line_number, f"event does not apply: {exc}") from None
        applied += 1
    if position >= size and size == len(chunk):
        consumed = len(chunk)  # everything, and all ASCII: no need to encode it back
    else:
        consumed = len(text[:position].encode("utf-8"))
    return applied, last_seq, start + consumed


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
    ) -> None:
        self.directory = directory
        self.events_path = directory / EVENTS_FILE
        self.snapshot_path = directory / SNAPSHOT_FILE
        self._wall = wall_clock
        self._monotonic = monotonic
        self.snapshot_every_events = snapshot_every_events
        self.snapshot_every_seconds = snapshot_every_seconds
        self.keep_finished = keep_finished
        self.state = RunState(keep_finished=keep_finished)
        self.seq = 0
        self.offset = 0
        self._fd: int | None = None
        self._since_snapshot = 0
        self._last_snapshot = 0.0
        self._broken = False

    def open(self) -> Loaded:
        """Load the state (snapshot + replay) and get ready to append."""
        ensure_dir(self.directory)
        loaded = load(self.directory, keep_finished=self.keep_finished)
        for warning in loaded.warnings:
            log.warning("%s", warning)
        self.state, self.seq, self.offset = loaded.state, loaded.seq, loaded.offset
        fd = os.open(self.events_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        if os.fstat(fd).st_size > self.offset:
            os.ftruncate(fd, self.offset)  # the torn tail that load() dropped
            os.fsync(fd)
        os.lseek(fd, 0, os.SEEK_END)
        self._fd = fd
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
            os.fsync(self._fd)
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
        if self._since_snapshot >= self.snapshot_every_events:
            self.snapshot()
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
        document = {
            "version": SNAPSHOT_VERSION,
            "seq": self.seq,
            "events_offset": self.offset,
            "written_at": utc_iso(self._wall()),
            **self.state.to_dict(),
        }
        write_json(self.snapshot_path, document)
        self._since_snapshot = 0
        self._last_snapshot = self._monotonic()
