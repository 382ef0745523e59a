"""The one way state is written to disk.

Every state file is a JSON object with a ``"version"``. Writes go to a temporary file in the same
directory, are fsynced, then renamed over the target, so a crash leaves the old or the new file,
never half of one. State that may be lost in a crash (a cache such as the rate-limit ledger) is
written with ``durable=False``: still renamed into place, so no reader sees half a file, but
without the fsyncs, which would cost more than the work they protect. Files that several
processes change are changed under an OS lock (:func:`locked`), held only for the
read-modify-write, never across network I/O.

Locks and fsyncs never run on the event loop: a process serves every waiting decision of its
session from one loop, and a lock another process holds would freeze them all. :func:`locked`
refuses to run on a loop's thread; async code goes through :func:`off_loop`, which runs the
whole locked read-modify-write in a worker thread. A lock is waited for at most
:data:`LOCK_WAIT_S` (:class:`~discord_mcp.errors.StateBusy` after that), never forever.

A temporary file is named after its writer (``.<name>.w<pid>-<start>.<random>.tmp``: the
process id and its start time), so one left by a process killed mid-write is known for what it
is: :func:`sweep_unfinished_writes` removes those whose writer is gone (``discord-watch`` and
the gateway holder call it at start, leaving out the archives that grow with history: done
decisions and run folders; ``discord-watch`` sweeps those too once a day).

A file that cannot be parsed is quarantined (:mod:`discord_mcp.state.quarantine`: moved aside
under a unique name, logged, and reported to the next tool result and to ``doctor``) and
raised as :class:`~discord_mcp.errors.StateCorrupt`; it is never read as empty. A full disk is
:class:`~discord_mcp.errors.StateFull`, a sentence saying where space is needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import fnmatch
import functools
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from discord_mcp.errors import StateBusy, StateCorrupt, StateError, StateFull
from discord_mcp.state.quarantine import quarantine

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
LOCK_WAIT_S = 10.0
"""The longest a state lock is waited for. Locks guard a read-modify-write of one small file,
never network I/O, so a lock held this long belongs to a stuck process."""
_LOCK_BACKOFF_S = (0.001, 0.05)
"""First and longest pause between attempts at a busy lock."""
_STATE_THREADS = 16
"""Worker threads for state I/O: enough that a few slow locks never starve the others."""

_P = ParamSpec("_P")
_T = TypeVar("_T")
_executor: ThreadPoolExecutor | None = None


async def off_loop(fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """Run blocking state work (locks, fsync) in a worker thread and await its result.

    If the caller is cancelled, the work still finishes in its thread (a write is never torn);
    only its result is dropped.
    """
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(_STATE_THREADS, thread_name_prefix="discord-mcp-state")
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor, functools.partial(fn, *args, **kwargs))


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _write_failed(path: Path, exc: OSError) -> StateError:
    """A write error as a sentence an agent or a person can act on."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StateFull(
            f"the state directory is full: cannot write {path} (no space left on the device). "
            f"Free some disk space where {path.parent} lives, then try again"
        )
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return StateError(
            f"cannot write {path} ({exc.strerror}): make the state directory writable by this "
            "user (DISCORD_MCP_HOME)"
        )
    return StateError(f"cannot write {path}: {exc.strerror or exc}")


def ensure_dir(path: Path) -> Path:
    """Create ``path`` and any missing parents, each private to the user; return it.

    (``Path.mkdir(parents=True, mode=...)`` applies the mode to the last directory only.)
    """
    missing = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE, exist_ok=True)
        except OSError as exc:
            raise _write_failed(directory, exc) from None
    return path


_UNFINISHED: set[str] = set()
"""Temporary files of :func:`write_bytes` calls under way in this process."""
_UNFINISHED_LOCK = threading.Lock()
_ENDING = False
"""Set by :func:`remove_unfinished_writes`: no write starts any more."""


def remove_unfinished_writes() -> None:
    """Remove the temporary files of writes still under way, for a process about to end with
    ``os._exit`` (a hook): the writes are lost with it, and their files must not outlive it.
    The replaced files keep their old contents. From then on no write starts (each fails with
    a :class:`~discord_mcp.errors.StateError`), so no thread can make a new temporary file
    between this call and the end of the process."""
    global _ENDING
    with _UNFINISHED_LOCK:
        _ENDING = True
        unfinished = list(_UNFINISHED)
    for tmp in unfinished:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def write_json(path: Path, document: dict[str, Any], *, durable: bool = True) -> None:
    """Atomically replace ``path`` with ``document`` (which must carry a ``version``)."""
    if "version" not in document:
        raise ValueError("state documents carry a version")
    data = json.dumps(document, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8")
    write_bytes(path, data, durable=durable)


def write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Atomically replace ``path`` with ``data``: a private (0600, never executable) file.

    ``durable=False`` skips the fsyncs: readers still see the old or the new file, but a
    crash of the machine may lose the change (or leave an empty file).
    """
    ensure_dir(path.parent)
    with _UNFINISHED_LOCK:  # made and registered in one step: see remove_unfinished_writes
        if _ENDING:
            raise _write_failed(path, OSError(errno.ESHUTDOWN, "the process is ending"))
        try:
            fd, tmp = tempfile.mkstemp(
                prefix=f".{path.name}.{_writer()}.", suffix=".tmp", dir=path.parent
            )
        except OSError as exc:
            raise _write_failed(path, exc) from None
        _UNFINISHED.add(tmp)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise _write_failed(path, exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        with _UNFINISHED_LOCK:
            _UNFINISHED.discard(tmp)
    if durable:
        fsync_dir(path.parent)


_WRITER: str | None = None
_UNFINISHED_NAME = re.compile(r"^\.(?P<name>.+?)\.w(?P<pid>\d+)-(?P<start>\d+)\.[a-z0-9_]{8}\.tmp$")
_OLD_UNFINISHED_NAME = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp$")
"""A temporary file written before temporary files named their writer."""
SWEEP_AFTER_S = 60.0
"""A temporary file younger than this is left alone, whoever wrote it."""
OLD_SWEEP_AFTER_S = 3600.0
"""One that names no writer (made before they did) is removed only after this long: no write
takes an hour, but which process made it cannot be told."""
NOT_SWEPT = frozenset({"worktrees"})
"""Directories of the state directory that hold no state writes (runs' git worktrees: project
files, whose names are not ours to judge)."""
ARCHIVES = (("decisions", "done"), ("runs", "run_*"), ("runs", "retired"))
"""Where history piles up (done decisions, one folder per run ever made, retired sessions:
:mod:`discord_mcp.runs.retired`): written rarely once
there, and walked only by a sweep that asks for them (``archives=True``), so a start-up does
not read a year of names."""


def _in_archive(home: Path, directory: Path) -> bool:
    parts = directory.relative_to(home).parts
    return any(
        len(parts) == len(archive)
        and all(fnmatch.fnmatchcase(p, a) for p, a in zip(parts, archive, strict=True))
        for archive in ARCHIVES
    )


def _writer() -> str:
    """``w<pid>-<start time>`` of this process, as its temporary files carry it."""
    global _WRITER
    pid = os.getpid()
    if _WRITER is None or not _WRITER.startswith(f"w{pid}-"):  # a forked child is another
        _WRITER = f"w{pid}-{_start_ticks(pid) or 0}"
    return _WRITER


def _start_ticks(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot, ``/proc/<pid>/stat``); None: no such
    process, or no ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if not fields or fields[0] in ("Z", "X") or len(fields) < 20:
        return None
    return int(fields[19])


def _writer_gone(pid: int, start: int) -> bool:
    """Whether the process that named a temporary file ``w<pid>-<start>`` has ended."""
    if pid == os.getpid() and _writer() == f"w{pid}-{start}":
        return False
    if os.path.exists("/proc/self/stat"):
        running = _start_ticks(pid)
        return running is None or (start != 0 and running != start)
    try:  # no /proc: a pid check is all there is
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def sweep_unfinished_writes(home: Path, *, now: float | None = None, archives: bool = True) -> int:
    """Remove the temporary files of state writes under ``home`` that will never finish: older
    than :data:`SWEEP_AFTER_S` and written by a process that has ended (see the module doc).
    ``archives``: also walk :data:`ARCHIVES`. Returns how many were removed. Blocking: it
    walks the state directory."""
    now = time.time() if now is None else now
    removed = 0
    pending = [home]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    child = Path(entry.path)
                    if directory == home and name in NOT_SWEPT:
                        continue
                    if archives or not _in_archive(home, child):
                        pending.append(child)
                    continue
                if not name.endswith(".tmp") or not name.startswith("."):
                    continue
                age = now - entry.stat(follow_symlinks=False).st_mtime
            except OSError:
                continue
            if not _abandoned(name, age):
                continue
            try:
                os.unlink(entry.path)
            except OSError:
                continue
            removed += 1
    return removed


def _abandoned(name: str, age: float) -> bool:
    if age < SWEEP_AFTER_S:
        return False
    named = _UNFINISHED_NAME.match(name)
    if named is not None:
        return _writer_gone(int(named["pid"]), int(named["start"]))
    return _OLD_UNFINISHED_NAME.match(name) is not None and age >= OLD_SWEEP_AFTER_S


def sweep_and_say(home: Path, who: str, *, archives: bool = False) -> int:
    """:func:`sweep_unfinished_writes` (without the archives unless asked), and say how many it
    removed (in the log)."""
    removed = sweep_unfinished_writes(home, archives=archives)
    log.info(
        "%s removed %d temporary file%s left by state writes that never finished",
        who,
        removed,
        "" if removed == 1 else "s",
    )
    return removed


def read_json(path: Path, *, max_version: int) -> dict[str, Any] | None:
    """Read a state document; None if the file does not exist.

    Raises:
        StateCorrupt: the file is not a JSON object with a version (it was moved aside).
        StateError: the file was written by a newer discord-mcp (``version > max_version``).
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        document = json.loads(raw)
        if not isinstance(document, dict) or not isinstance(document.get("version"), int):
            raise ValueError("not a versioned JSON object")
    except ValueError as exc:
        reason = str(exc)[:200]
        raise StateCorrupt(str(path), reason, move_aside(path, reason)) from None
    if document["version"] > max_version:
        raise StateError(
            f"{path} has format version {document['version']}, newer than this discord-mcp "
            f"understands ({max_version}); upgrade discord-mcp"
        )
    return document


def move_aside(path: Path, reason: str = "unreadable") -> str | None:
    """Quarantine a bad file (see :mod:`~discord_mcp.state.quarantine`); returns its new name,
    or None if it vanished first."""
    moved = quarantine(path, reason)
    return None if moved is None else str(moved)


@contextlib.contextmanager
def locked(path: Path, *, wait: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold an exclusive OS lock on ``path``'s sidecar ``.lock`` file.

    Waits at most ``wait`` seconds for another process to release it. Never call it on the
    event loop (it raises RuntimeError there): use :func:`off_loop`. The lock dies with the
    process, so a crash never leaves it held.

    Raises:
        StateBusy: the lock stayed taken for ``wait`` seconds.
        RuntimeError: called from a thread that runs an event loop.
    """
    if _on_event_loop():
        raise RuntimeError(f"state lock for {path.name} taken on the event loop; use off_loop")
    ensure_dir(path.parent)
    lock_path = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    except OSError as exc:
        raise _write_failed(lock_path, exc) from None
    try:
        _acquire(fd, lock_path, wait)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _acquire(fd: int, lock_path: Path, wait: float) -> None:
    deadline = time.monotonic() + wait
    pause, longest = _LOCK_BACKOFF_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise StateBusy(
                    f"{lock_path} stayed locked for {wait:.0f} s: another discord-mcp process "
                    "seems stuck. Try again; if it persists, stop the stuck process"
                ) from None
            time.sleep(pause)
            pause = min(pause * 2, longest)


def append_line(path: Path, document: dict[str, Any]) -> None:
    """Append one JSON line and fsync it (for append-only journals)."""
    ensure_dir(path.parent)
    line = json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _write_failed(path, exc) from None


def fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
