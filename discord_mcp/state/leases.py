"""Liveness from OS locks: who is alive, and who is waiting, without heartbeats or pid reuse.

A lock held with ``flock`` dies with its process, so "is anyone holding it?" answers "is that
process (or that wait) still alive?" exactly, even after kill -9, and never confuses a reused
process id with the old one.

- :class:`ProcessLease`: a server process holds an exclusive lock on ``leases/<name>.lock`` for
  its whole life. A decision records the lease of the process that asked it; another process
  asks :func:`lease_alive` before treating that decision's answer as "arrived while away".
- :func:`acquire_shared`: every call waiting on a decision holds a shared lock on the
  decision's ``.wait`` file; :func:`try_exclusive` succeeds only when nobody waits.
- :func:`try_exclusive` also marks work in progress that others must not repeat (a card being
  posted): they probe it and leave the work alone while it is held. It never waits, so it may be
  held across a Discord request without blocking anybody.

:func:`acquire_shared` may wait a moment (for a probe) and must run off the event loop
(:func:`~discord_mcp.state.files.off_loop`); the rest never waits.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import time
from pathlib import Path

from discord_mcp.errors import StateBusy
from discord_mcp.state.files import FILE_MODE, ensure_dir

_SHARED_WAIT_S = 5.0
"""A shared hold waits at most this long for an exclusive probe (which holds for microseconds)."""


class ProcessLease:
    """An exclusive lock this process holds until it exits (or :meth:`close`)."""

    def __init__(self, home: Path) -> None:
        directory = ensure_dir(home / "leases")
        self.name = f"{os.getpid()}-{secrets.token_hex(4)}"
        self._path = directory / f"{self.name}.lock"
        self._fd: int | None = os.open(self._path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: never contended

    def close(self) -> None:
        """Give the lease up (the file goes too)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                self._path.unlink()
            os.close(self._fd)
            self._fd = None


def lease_alive(home: Path, name: str | None) -> bool:
    """Whether the process that took lease ``name`` is still running."""
    if not name or "/" in name or name.startswith("."):
        return False
    path = home / "leases" / f"{name}.lock"
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    # Nobody holds it: its process is gone. Tidy up (harmless if someone else already did).
    with contextlib.suppress(OSError):
        path.unlink()
    return False


class Hold:
    """An open lock file; :meth:`release` (closing it) frees the lock."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def acquire_shared(path: Path) -> Hold:
    """A shared lock on ``path`` (many holders at once); waits a moment at most for a probe.

    Blocking: call it through ``off_loop``.

    Raises:
        StateBusy: an exclusive holder did not let go (a stuck process).
    """
    ensure_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    deadline = time.monotonic() + _SHARED_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return Hold(fd)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                raise StateBusy(f"{path} stayed locked: another process seems stuck") from None
            time.sleep(0.002)


def try_exclusive(path: Path) -> Hold | None:
    """An exclusive lock on ``path`` if nobody holds it at all, else None. Never waits."""
    ensure_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return Hold(fd)
