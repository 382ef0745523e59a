"""One label for one agent session, whichever side names it: the MCP server's question card and
the approval hook's card say the same ``session `…```.

A hook is given the CLI's session id on stdin (Claude Code, Codex and Gemini CLI alike) and
labels its cards with :func:`id_label` of it. The stdio server is not given it, so it finds the
same id where each CLI leaves it:

- Claude Code: ``CLAUDE_CODE_SESSION_ID`` in the server's environment.
- Codex: the ``_meta`` of every tool call (``sessionId``, the thread id a hook gets; also in
  ``x-codex-turn-metadata.session_id``), read by :func:`meta_session` (codex-cli 0.169.0).
- Gemini CLI (0.61.0) gives its servers neither (its environment is ``GEMINI_CLI=1`` alone, its
  ``_meta`` a progress token). Both the server and the hooks are children of the one Gemini
  process, though: a hook that runs under it (``SessionStart`` at every start, ``/clear`` and
  resume; ``BeforeTool`` before an asked call) records that process's current session id in
  ``<home>/cli-sessions/<pid>-<start>.json`` (:func:`remember`), and the server reads it for
  its own Gemini parent (:func:`remembered`). Without such a hook the server says
  ``gemini-<its pid>``: then no hook posts approval cards either, so nothing differs.

The label is what a card shows and what the hooks match a session's own questions by
(:mod:`discord_mcp.hooks.sessions`); who may wait on a decision is checked apart from it.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.state.files import ensure_dir, read_json, write_json

FOLDER = "cli-sessions"
VERSION = 1
MAX_DEPTH = 8
"""Ancestors looked at on the way up to the CLI (a hook runs under a shell and maybe uvx)."""
_UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_SESSION_ID = re.compile(r"^[\w.:-]{1,200}$")


def id_label(session_id: str) -> str:
    """A CLI session id, short: its first 8 characters (Claude Code's and Gemini CLI's random
    UUIDs), but the last 8 of a time-ordered UUIDv7 (Codex's thread ids), whose first 8 are its
    start time and the same for every session started within the same minute."""
    cleaned = session_id.strip()
    if _UUID7.match(cleaned):
        return cleaned[-8:]
    return cleaned[:8] or "session"


def meta_session(meta: Mapping[str, Any] | None) -> str | None:
    """The session a tool call's ``_meta`` names (Codex's ``sessionId``), or None."""
    if not meta:
        return None
    turn = meta.get("x-codex-turn-metadata")
    candidates = [
        meta.get("sessionId"),
        meta.get("threadId"),
        turn.get("session_id") if isinstance(turn, Mapping) else None,
    ]
    for value in candidates:
        if isinstance(value, str) and _SESSION_ID.match(value.strip()):
            return value.strip()
    return None


@dataclass(frozen=True)
class CliProcess:
    """A running CLI process, by pid and start time (a reused pid is another process)."""

    pid: int
    start: int

    @property
    def key(self) -> str:
        return f"{self.pid}-{self.start}"


def _stat(proc: Path, pid: int) -> tuple[int, int] | None:
    """``(parent pid, start ticks)`` of ``pid``, or None."""
    try:
        fields = (proc / str(pid) / "stat").read_text("ascii", "replace").rsplit(")", 1)[1]
        parts = fields.split()
        return int(parts[1]), int(parts[19])
    except (OSError, IndexError, ValueError):
        return None


def _argv(proc: Path, pid: int) -> list[str]:
    try:
        raw = (proc / str(pid) / "cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def _names_gemini(argv: list[str]) -> bool:
    return any("gemini" in Path(arg).name.lower() for arg in argv[:3] if arg)


def gemini_process(proc: Path = Path("/proc"), pid: int | None = None) -> CliProcess | None:
    """The Gemini CLI process this one runs under: the nearest ``node`` ancestor (a shell, uv
    or Python between are passed), if its command line names ``gemini``; None otherwise (another
    CLI, no ``/proc``)."""
    current = os.getpid() if pid is None else pid
    for _ in range(MAX_DEPTH):
        stat = _stat(proc, current)
        if stat is None:
            return None
        parent, _start = stat
        if parent <= 1:
            return None
        argv = _argv(proc, parent)
        program = Path(argv[0]).name.lower() if argv else ""
        if program.startswith("node") or program == "gemini":
            parent_stat = _stat(proc, parent)
            if parent_stat is None or not _names_gemini(argv):
                return None
            return CliProcess(parent, parent_stat[1])
        current = parent
    return None


def remember(home: Path, session_id: str, process: CliProcess | None) -> None:
    """Record ``session_id`` as ``process``'s current session (unchanged: nothing written).
    Records of processes gone are removed meanwhile."""
    session_id = session_id.strip()
    if process is None or not _SESSION_ID.match(session_id):
        return
    if remembered(home, process) == session_id:
        return
    folder = ensure_dir(home / FOLDER)
    write_json(folder / f"{process.key}.json", {"version": VERSION, "session_id": session_id})
    _forget_gone(folder, proc=Path("/proc"))


def remembered(home: Path, process: CliProcess | None) -> str | None:
    """The session id a hook recorded for ``process``, or None (none, or unreadable)."""
    if process is None:
        return None
    with contextlib.suppress(Exception):  # a label: any doubt is no record
        document = read_json(home / FOLDER / f"{process.key}.json", max_version=VERSION)
        value = (document or {}).get("session_id")
        if isinstance(value, str) and _SESSION_ID.match(value):
            return value
    return None


def _forget_gone(folder: Path, proc: Path) -> None:
    if not proc.is_dir():
        return
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            pid, _, start = entry.stem.partition("-")
            if not (pid.isdigit() and start.isdigit()):
                continue
            stat = _stat(proc, int(pid))
            if stat is None or stat[1] != int(start):
                with contextlib.suppress(OSError):
                    entry.unlink()
