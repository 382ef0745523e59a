"""Reading the run journal back (:mod:`discord_mcp.runs.journal.journal` writes it): the closed
segments' names, the events, and :func:`load`, which rebuilds the state from the snapshot (or
``base.json``) plus the events after it, forgiving only what a crash explains. The files and the
damage policy are described in :mod:`discord_mcp.runs.journal.journal`.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from discord_mcp.errors import JournalCorrupt, StateCorrupt, StateError
from discord_mcp.runs.journal.model import InvalidEvent, RunState
from discord_mcp.state.files import read_json

log = logging.getLogger(__name__)

SNAPSHOT_VERSION = 1
EVENTS_FILE = "events.ndjson"
SNAPSHOT_FILE = "snapshot.json"
BASE_FILE = "base.json"
_SEGMENT = re.compile(r"^events-(\d{12})-(\d{12})\.ndjson$")


def segment_name(first: int, last: int) -> str:
    return f"events-{first:012d}-{last:012d}.ndjson"


def closed_segments(directory: Path) -> list[Path]:
    """The closed segments in ``directory``, oldest first."""
    try:
        names = sorted(n for n in os.listdir(directory) if _SEGMENT.match(n))
    except FileNotFoundError:
        return []
    return [directory / n for n in names]


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


def load(
    directory: Path,
    *,
    keep_finished: int = 200,
    keep_finished_total: int = 2000,
    keep_dedupe: int = 10000,
    use_snapshot: bool = True,
) -> Loaded:
    """Rebuild the state from ``snapshot.json`` (or ``base.json``) plus the live segment's
    events after it (read-only).

    ``use_snapshot=False`` ignores both and replays every event from the first segment kept
    (tests compare the two; before any compaction that is the whole history).

    Raises:
        JournalCorrupt: a gap in ``seq``, or a damaged line that is not the last one.
        StateError: a snapshot written by a newer version, a snapshot ahead of the events, or
            no snapshot or base that the live segment continues.
    """
    events_path = directory / EVENTS_FILE
    warnings: list[str] = []
    try:
        with open(events_path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        data = b""
    live_start = first_seq(data)
    bounds = {
        "keep_finished": keep_finished,
        "keep_finished_total": keep_finished_total,
        "keep_dedupe": keep_dedupe,
    }
    if not use_snapshot:
        return _replay_everything(directory, data, bounds, warnings)
    bases: list[tuple[str, dict[str, Any]]] = []
    for name in (SNAPSHOT_FILE, BASE_FILE):
        try:
            document = read_json(directory / name, max_version=SNAPSHOT_VERSION)
        except StateCorrupt as exc:
            warnings.append(f"{exc}; rebuilding the run state without it")
            continue
        if document is not None:
            bases.append((name, document))
            if live_start is None or int(document["seq"]) + 1 >= live_start:
                # The live segment continues the snapshot: base.json (the state when the
                # segment was last closed, the biggest file here after a year) is not needed.
                break
    # The newest base that the live segment continues without a gap.
    fitting = [
        (name, doc)
        for name, doc in bases
        if live_start is None or int(doc["seq"]) + 1 >= live_start
    ]
    if not fitting:
        segments = closed_segments(directory)
        from_the_start = bool(segments) and segments[0].name.startswith(segment_name(1, 0)[:20])
        if live_start in (None, 1) or from_the_start:
            return _replay_everything(directory, data, bounds, warnings)
        raise StateError(
            f"{events_path} starts at seq {live_start}, and neither {SNAPSHOT_FILE} nor "
            f"{BASE_FILE} holds the state before it: the run state cannot be rebuilt. Restore "
            "one of them, or move the runs folder aside to start with an empty run state"
        )
    name, snapshot = max(fitting, key=lambda item: int(item[1]["seq"]))
    state = RunState.from_dict(snapshot, **bounds)
    seq = int(snapshot["seq"])
    offset = int(snapshot.get("events_offset", 0))
    same_segment = int(snapshot.get("segment_start", 1)) == (live_start or seq + 1)
    # Without a valid offset (a rewritten file, a new segment) scan the live segment from its
    # start, skipping what the snapshot already holds but still checking the whole sequence.
    start = offset if same_segment and _starts_after(data, offset, seq) else 0
    with _bulk():
        replayed, end_seq, end_offset = _replay(
            events_path, data, start, state, after_seq=seq, warnings=warnings
        )
    if end_seq < seq:
        raise StateError(
            f"{directory / name} holds events up to seq {seq} but {events_path} ends "
            f"at seq {end_seq}: events were lost. Restore the events file, or move both files "
            "aside to start with an empty run state"
        )
    return Loaded(
        state=state,
        seq=end_seq,
        offset=end_offset,
        replayed=replayed,
        from_snapshot=True,
        warnings=warnings,
    )


def first_seq(data: bytes) -> int | None:
    """The ``seq`` of a segment's first event (None: empty, or unreadable first line)."""
    if not data:
        return None
    end = data.find(b"\n")
    try:
        seq = json.loads(data[: end if end >= 0 else len(data)])["seq"]
    except (ValueError, KeyError, TypeError):
        return None
    return seq if type(seq) is int else None


def _replay_everything(
    directory: Path, data: bytes, bounds: Mapping[str, int], warnings: list[str]
) -> Loaded:
    """The state from the kept closed segments and the live one, with no snapshot."""
    state = RunState(**bounds)
    seq = replayed = 0
    with _bulk():
        for path in closed_segments(directory):
            with open(path, "rb") as handle:
                closed = handle.read()
            if seq == 0 and first_seq(closed) not in (None, 1):
                raise StateError(
                    f"{path} starts after seq 1 and no snapshot holds what came before it: "
                    "the run state cannot be rebuilt from the events alone"
                )
            count, seq, _ = _replay(path, closed, 0, state, after_seq=seq, warnings=warnings)
            replayed += count
        live_start = first_seq(data)
        if live_start is not None and live_start != seq + 1:
            raise StateError(
                f"{directory / EVENTS_FILE} starts at seq {live_start} but the events before it "
                f"end at seq {seq}: events were lost"
            )
        count, seq, offset = _replay(
            directory / EVENTS_FILE, data, 0, state, after_seq=seq, warnings=warnings
        )
    return Loaded(
        state=state,
        seq=seq,
        offset=offset,
        replayed=replayed + count,
        from_snapshot=False,
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
    # From an offset the next event follows the snapshot; from a segment's start it is that
    # segment's first event (1 before any compaction), which must not skip past the snapshot.
    first = None if start else first_seq(data)
    if first is None:
        expected, last_seq = after_seq + 1 if start or after_seq else 1, after_seq
    else:
        expected, last_seq = first, first - 1
        if after_seq and first > after_seq + 1:
            raise JournalCorrupt(
                str(path), 1, f"sequence gap: expected seq {after_seq + 1}, found {first}"
            )
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
