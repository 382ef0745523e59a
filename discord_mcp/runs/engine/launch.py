"""Getting a job ready to start, and the engine's own files: private directories and files,
the engine lock, and finding a wrapper the journal did not record."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.runs.adapters.base import AttachedFile
from discord_mcp.runs.journal.model import TOOLS, ProcessInfo, is_tool
from discord_mcp.runs.journal.views import Tool
from discord_mcp.runs.processes.spawner import process_start_time, read_status
from discord_mcp.state.files import DIR_MODE, FILE_MODE, ensure_dir

PROGRAM_MODE = 0o700


def check_tool_enabled(tool: str, project: str, tools: tuple[Tool, ...]) -> None:
    if not is_tool(tool):
        raise RunError(
            "E_INVALID_TOOLSET",
            f"{tool!r} is not a tool we can run: choose from {', '.join(TOOLS)} or an ACP agent",
        )
    if tool not in tools:
        raise RunError(
            "E_TOOL_NOT_ENABLED",
            f"project {project!r} does not enable {tool} (enabled: {', '.join(tools)}): pick one "
            "of those, or add the tool to the project",
        )


def attached_files(entries: Iterable[Mapping[str, Any]]) -> tuple[AttachedFile, ...]:
    """The job's files (the owner's, kept by the daemon) that are still on disk."""
    files = []
    for entry in entries:
        path = Path(str(entry.get("path") or ""))
        if entry.get("path") and path.is_absolute() and path.is_file():
            content_type = entry.get("content_type")
            files.append(
                AttachedFile(
                    path=path,
                    content_type=content_type if isinstance(content_type, str) else None,
                    voice_message=bool(entry.get("voice_message")),
                )
            )
    return tuple(files)


def write_private(path: Path, content: str, *, executable: bool = False) -> None:
    """Write a 0600 file (0700: ``executable``) atomically (a CLI may be reading the old one
    right now)."""
    private_dirs(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    mode = PROGRAM_MODE if executable else FILE_MODE
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    os.fchmod(fd, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(content)
    os.replace(tmp, path)


def private_dirs(path: Path) -> None:
    """Create ``path`` and any missing parents, each one private (0700)."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=DIR_MODE)


def process_from_status(path: Path) -> ProcessInfo | None:
    """The wrapper's identity from its status file (the daemon died before journaling it)."""
    status = read_status(path)
    if status is None or not isinstance(status.get("wrapper_pid"), int):
        return None
    pid = status["wrapper_pid"]
    # The status file's path is in the wrapper's argv: a reused pid would not have it.
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            if str(path).encode() not in handle.read():
                return ProcessInfo(pid, -1, None)  # not ours: never alive
    except OSError:
        return ProcessInfo(pid, -1, None)
    return ProcessInfo(pid, process_start_time(pid), None)


def lock_engine(path: Path) -> int:
    ensure_dir(path.parent)
    os.chmod(path.parent, DIR_MODE)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise RunError(
            "E_ENGINE_LOCKED",
            f"another process runs the run engine on {path.parent} (it holds {path.name}): "
            "stop the other discord-watch first",
        ) from None
    return fd


def unlock(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


def run_cwd(workdir: str) -> Path:
    """Where a run with a worktree of its own (issue 35) starts its CLI: its workdir, if it is
    still there.

    Raises:
        RunError: E_WORKTREE_GONE.
    """
    path = Path(workdir)
    if not path.is_dir():
        raise RunError(
            "E_WORKTREE_GONE",
            f"the run's worktree {path} is gone (merged, discarded or removed by gc): start a "
            "new run",
        )
    return path
