"""The spool: gateway events the holder appends for every other process to follow.

One JSON object per line: ``{"v": 1, "t": event name, "s": gateway sequence, "sid": gateway
session id, "at": unix time, "d": data}`` (lines of older versions lack ``sid``). Only the
holder writes (the holder lock makes it the only writer). When the file grows past
:data:`ROTATE_BYTES` it is renamed to ``spool.1.ndjson`` and a new one started; a reader keeps
its open handle, finishes the old file, then moves to the new one, so rotation loses nothing, as
long as a reader polls at least once per rotation (followers read after every append; a
rotation takes megabytes of events). The spool is a live channel, not a record of history: a
process that was not running reads history from Discord instead. It is the record of what was
relayed, though: a new holder resumes the gateway session after the last event it holds
(:func:`last_seq`).

A holder killed in the middle of a write leaves a torn last line. The next holder starts its
first event on a new line, and a reader that meets an unreadable line still finds an event that
begins inside it, so a torn line never swallows the event after it.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import IO, Any

from discord_mcp.state.files import FILE_MODE, ensure_dir

log = logging.getLogger(__name__)

ROTATE_BYTES = 8_000_000
FORMAT = 1


class SpoolWriter:
    """Appends events (the holder's side). :meth:`close` it (or use it as a context manager)
    when done: it keeps the file open between appends, so each append is one write, and one
    change for every follower's file watch (opening and closing it each time would be three)."""

    def __init__(self, path: Path, *, rotate_bytes: int = ROTATE_BYTES) -> None:
        self._path = path
        self._rotate_bytes = rotate_bytes
        self._checked_end = False
        self._fd: int | None = None
        ensure_dir(path.parent)

    def __enter__(self) -> SpoolWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def append(
        self, name: str, data: dict[str, Any], seq: int | None, *, session: str | None = None
    ) -> None:
        """Add one event of gateway ``session``; rotates the file when it is full."""
        self.write(encode(name, data, seq, session=session))

    def write(self, line: bytes) -> None:
        """Add one event already :func:`encode`-d; rotates the file when it is full."""
        if self._fd is None:
            self._fd = os.open(
                self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE
            )
        try:
            prefix = b"" if self._checked_end else self._line_break_needed()
            self._checked_end = True
            os.write(self._fd, prefix + line)
            size = os.fstat(self._fd).st_size
        except OSError:
            self.close()  # opened afresh by the next append
            raise
        if size >= self._rotate_bytes:
            self.close()
            os.replace(self._path, self._path.with_name(self._path.stem + ".1.ndjson"))

    def _line_break_needed(self) -> bytes:
        """A newline if the file ends inside a line (an earlier holder died mid-write)."""
        try:
            with open(self._path, "rb") as handle:
                handle.seek(-1, os.SEEK_END)
                return b"" if handle.read(1) == b"\n" else b"\n"
        except OSError:  # empty or missing
            return b""


def encode(name: str, data: dict[str, Any], seq: int | None, *, session: str | None) -> bytes:
    """One event as a spool line (with its line break)."""
    event: dict[str, Any] = {"v": FORMAT, "t": name, "s": seq, "at": time.time(), "d": data}
    if session:
        event["sid"] = session
    return (json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


class SpoolReader:
    """Follows the spool from its end (a follower's side), or with ``at_end=False`` from its
    beginning (a follower's own mailbox, :mod:`~discord_mcp.relay.interest`). Not thread-safe;
    poll it."""

    def __init__(self, path: Path, *, at_end: bool = True) -> None:
        self._path = path
        self._handle: IO[bytes] | None = None
        self._inode: int | None = None
        self._partial = b""
        self._open(at_end=at_end)

    def _open(self, *, at_end: bool) -> None:
        try:
            handle = open(self._path, "rb")  # noqa: SIM115 - kept open across polls on purpose
        except FileNotFoundError:
            self._handle, self._inode = None, None
            return
        if at_end:
            handle.seek(0, os.SEEK_END)
        self._handle, self._inode = handle, os.fstat(handle.fileno()).st_ino
        self._partial = b""

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def poll(self) -> list[dict[str, Any]]:
        """Every complete event appended since the last poll, in order."""
        events = self._drain()
        try:
            current = os.stat(self._path).st_ino
        except FileNotFoundError:
            current = None
        if current != self._inode:
            # Rotated (or created): finish the old file, then start the new one from the top.
            self.close()
            self._open(at_end=False)
            events.extend(self._drain())
        return events

    def _drain(self) -> list[dict[str, Any]]:
        if self._handle is None:
            return []
        chunk = self._handle.read()
        if not chunk:
            return []
        data = self._partial + chunk
        lines = data.split(b"\n")
        self._partial = lines.pop()  # an incomplete last line waits for its end
        events = []
        for line in lines:
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except ValueError:
                event = _event_inside(line)
                if event is None:
                    log.warning("spool: skipping an unreadable line")
                    continue
            if isinstance(event, dict) and event.get("v") == FORMAT:
                events.append(event)
        return events


_EVENT_START = b'{"v":'
TAIL_BYTES = 256 * 1024
"""How far back from the end :func:`last_seq` looks (hundreds of events)."""


def last_seq(path: Path, session: str | None) -> int | None:
    """The sequence number of the last event of gateway ``session`` in the spool, if any.

    Looks at the end of the spool, then at the end of the rotated one before it.
    """
    if not session:
        return None
    for candidate in (path, path.with_name(path.stem + ".1.ndjson")):
        try:
            with open(candidate, "rb") as handle:
                size = handle.seek(0, os.SEEK_END)
                handle.seek(max(size - TAIL_BYTES, 0))
                tail = handle.read()
        except FileNotFoundError:
            continue
        for line in reversed(tail.split(b"\n")):
            if session.encode() not in line:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                event = _event_inside(line)
            if (
                isinstance(event, dict)
                and event.get("sid") == session
                and isinstance(event.get("s"), int)
            ):
                return int(event["s"])
    return None


def _event_inside(line: bytes) -> dict[str, Any] | None:
    """An event that starts inside an unreadable line (a torn line glued to the next one)."""
    start = line.find(_EVENT_START, 1)
    while start > 0:
        try:
            event = json.loads(line[start:])
        except ValueError:
            start = line.find(_EVENT_START, start + 1)
            continue
        log.warning("spool: skipped a torn line before an event")
        return event if isinstance(event, dict) else None
    return None
