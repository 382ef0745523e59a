"""Who holds the gateway: the OS lock, the holder's published status, and the preference file."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.errors import StateCorrupt
from discord_mcp.processes import pid_alive
from discord_mcp.state.files import FILE_MODE, ensure_dir, read_json, write_json

FORMAT = 1
ALIVE_WITHIN_S = 15.0
"""A holder that has not refreshed its status this long is not trusted to be connected."""
RESUMABLE_WITHIN_S = 90.0
"""Discord keeps a dropped session resumable for a few minutes; we try within this window."""


class HolderLock:
    """The exclusive, non-blocking OS lock that makes one process the holder.

    The kernel drops it when the process dies, however it dies. With ``presence``, the holder
    also keeps that file open for writing while it holds, and only the holder ever opens it for
    writing: its close (a release, or the kernel closing a dead holder's files) is the file
    event that wakes followers (:mod:`~discord_mcp.relay.fswatch`), while the attempts of
    followers, which open the lock file and close it again, wake nobody.
    """

    def __init__(self, path: Path, *, presence: Path | None = None) -> None:
        self._path = path
        self._presence_path = presence
        self._fd: int | None = None
        self._presence: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; never blocks."""
        if self._fd is not None:
            return True
        ensure_dir(self._path.parent)
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        if self._presence_path is not None:
            self._presence = os.open(self._presence_path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
        return True

    def release(self) -> None:
        """Let go: the lock first, so whoever the presence file's close wakes can take it."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._presence is not None:
            os.close(self._presence)
            self._presence = None


@dataclass(frozen=True, slots=True)
class HolderStatus:
    """What the holder publishes in ``gateway/status.json``."""

    pid: int
    program: str
    state: str
    """``connecting``, ``ready``, ``stopped`` (left, session resumable) or ``disabled``."""
    alive_at: float
    session_id: str | None = None
    seq: int | None = None
    resume_url: str | None = None
    disabled_until: float | None = None
    reason: str | None = None
    message_content: bool = True
    """False once Discord refused the Message Content intent: the session reads no text."""

    def connected(self, now: float) -> bool:
        """A live holder with a ready session."""
        return (
            self.state == "ready" and now - self.alive_at < ALIVE_WITHIN_S and pid_alive(self.pid)
        )

    def held(self, now: float) -> bool:
        """Another live process holds the gateway (connecting or ready), by a recent status."""
        return (
            self.state in ("connecting", "ready")
            and now - self.alive_at < ALIVE_WITHIN_S
            and self.pid != os.getpid()
            and pid_alive(self.pid)
        )

    def resumable(self, now: float) -> bool:
        """Whether a successor should try to resume this session."""
        return bool(self.session_id and self.resume_url) and now - self.alive_at < (
            RESUMABLE_WITHIN_S
        )

    def disabled(self, now: float) -> bool:
        return self.state == "disabled" and (self.disabled_until or 0) > now


def read_status(path: Path) -> HolderStatus | None:
    """The holder's last published status, or None."""
    try:
        document = read_json(path, max_version=FORMAT)
    except StateCorrupt:
        return None
    if document is None:
        return None
    pid, program, state, alive_at = (
        document.get(k) for k in ("pid", "program", "state", "alive_at")
    )
    if not (isinstance(pid, int) and isinstance(program, str) and isinstance(state, str)):
        return None
    if not isinstance(alive_at, int | float):
        return None

    def optional(key: str, kind: type) -> Any:
        value = document.get(key)
        return value if isinstance(value, kind) else None

    return HolderStatus(
        pid=pid,
        program=program,
        state=state,
        alive_at=float(alive_at),
        session_id=optional("session_id", str),
        seq=optional("seq", int),
        resume_url=optional("resume_url", str),
        disabled_until=optional("disabled_until", float),
        reason=optional("reason", str),
        message_content=document.get("message_content") is not False,
    )


def write_status(path: Path, status: HolderStatus) -> None:
    document: dict[str, Any] = {"version": FORMAT}
    document.update({k: getattr(status, k) for k in HolderStatus.__dataclass_fields__})
    write_json(path, document)


def write_preference(path: Path, program: str) -> None:
    """Say that this process (the watch daemon) wants to hold the gateway."""
    write_json(path, {"version": FORMAT, "pid": os.getpid(), "program": program, "at": time.time()})


def clear_preference(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError, StateCorrupt):
        document = read_json(path, max_version=FORMAT)
        if document and document.get("pid") == os.getpid():
            path.unlink()


def preferred_pid(path: Path) -> int | None:
    """The live process that wants the gateway, if any (not this one)."""
    try:
        document = read_json(path, max_version=FORMAT)
    except StateCorrupt:
        return None
    if not document:
        return None
    pid = document.get("pid")
    if isinstance(pid, int) and pid != os.getpid() and pid_alive(pid):
        return pid
    return None
