"""The one way state is written to disk.

Every state file is a JSON object with a ``"version"``. Writes go to a temporary file in the same
directory, are fsynced, then renamed over the target, so a crash leaves the old or the new file,
never half of one. Files that several processes change are changed under an OS lock
(:func:`locked`), held only for the read-modify-write, never across network I/O.

A file that cannot be parsed is moved aside (``name.corrupt-<time>``) and reported with
:class:`~discord_mcp.errors.StateCorrupt`; it is never read as empty.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from discord_mcp.errors import StateCorrupt, StateError

DIR_MODE = 0o700
FILE_MODE = 0o600


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
        directory.mkdir(mode=DIR_MODE, exist_ok=True)
    return path


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Atomically replace ``path`` with ``document`` (which must carry a ``version``)."""
    if "version" not in document:
        raise ValueError("state documents carry a version")
    ensure_dir(path.parent)
    data = json.dumps(document, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


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
        raise StateCorrupt(str(path), str(exc)[:200], move_aside(path)) from None
    if document["version"] > max_version:
        raise StateError(
            f"{path} has format version {document['version']}, newer than this discord-mcp "
            f"understands ({max_version}); upgrade discord-mcp"
        )
    return document


def move_aside(path: Path) -> str | None:
    """Rename a bad file out of the way; returns the new name (None if it vanished)."""
    target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
    try:
        os.replace(path, target)
    except FileNotFoundError:
        return None
    return str(target)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive OS lock on ``path``'s sidecar ``.lock`` file (blocks until free).

    The lock dies with the process, so a crash never leaves it held.
    """
    ensure_dir(path.parent)
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def append_line(path: Path, document: dict[str, Any]) -> None:
    """Append one JSON line and fsync it (for append-only journals)."""
    ensure_dir(path.parent)
    line = json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
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
