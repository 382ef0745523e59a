"""Run folders: the whole interface of a run, on disk (issue 23).

Theory. Every run (a session of the run engine: a ``submit``, or a ``/start`` in Discord) has a
folder ``<state>/runs/<run_id>/`` that another program can read without asking anything::

    request.json     the run's latest request: run_id, project, engine, mode ("new" | "resume"),
                     session_id (null when new), message, created_at, constraints
                     {allow_network, timeout_s}
    session.json     engine, session_id, state (created | running | stopping | completed |
                     failed | stopped), pid, created_at, last_active_at; rewritten at every
                     transition
    context/         files given with ``submit --context`` (copies)
    logs/            turn-001.stdout.ndjson, turn-001.stderr (each turn's CLI output as it came:
                     hard links to the engine's job logs), events.md (a readable transcript)
    artifacts/       changes.patch (what the run changed in a git work tree, new files too)
                     and the files its agent sent with send_message
    result.json      run_id, status (completed | failed | stopped), engine, session_id,
                     thread_url, started_at, finished_at, duration_ms, token_usage, cost_usd,
                     summary, calls_not_run, error {code, message, retryable}, turns [...],
                     and what happened in git (issue 35): worktree, branch, base_commit,
                     head_commit, changes {files, insertions, deletions}, landed
    worktree.json    a run with a git worktree of its own: where it is, where it started,
                     what it changed, what became of it (:mod:`discord_mcp.runs.git.worktrees`)

The JSON files follow the schemas shipped in ``runs/folders/schemas/`` (``discord-mcp schema
request|session|result|worktree`` prints them). Every file is written atomically (a temporary
file in the same folder, renamed over), so a reader sees the old document or the new one. A
request is handed to the daemon through ``runs/queue/`` (:class:`RunQueue`): the command line
writes it there (temporary file, rename), the daemon claims it by renaming it into the run's
folder as ``request.json``.

Nothing here talks to Discord or starts a process: the engine's :mod:`.recorder` fills the
folder, ``discord-watch status`` reads it (:func:`read_status`, which changes nothing).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.state.files import ensure_dir, write_json

VERSION = 1
SCHEMAS = ("request", "session", "result", "worktree")
RUN_ID = re.compile(r"run_[0-9]{8}_[0-9]{6}_[0-9a-f]{6}")
r"""A run id's form; a whole string is one only by :func:`is_run_id` (``fullmatch``: ``$``
would take a final newline, ``\d`` other scripts' digits)."""
SESSION_STATES = ("created", "running", "stopping", "completed", "failed", "stopped")
AT_REST = frozenset({"completed", "failed", "stopped"})
"""A run whose session is in one of these has nothing running or waiting."""
QUEUE = "queue"


def new_run_id(now: float) -> str:
    """``run_20260226_142100_a1b2c3``: sortable by creation, unique, safe as a folder name."""
    moment = dt.datetime.fromtimestamp(now, tz=dt.UTC)
    return f"run_{moment:%Y%m%d_%H%M%S}_{secrets.token_hex(3)}"


def is_run_id(text: str) -> bool:
    """Whether ``text`` is a run id, whole (never a path, a space or a newline more)."""
    return RUN_ID.fullmatch(text) is not None


def names_a_run(target: str) -> bool:
    """Whether a command's ``target`` is meant as a run id (``run_...``; job ids and thread
    ids never start so): it is then a run id or refused, never taken for something else."""
    return target.startswith("run_")


def check_run_id(run_id: str) -> str:
    """``run_id`` if it is one (never a path: it names a folder).

    Raises:
        RunError: E_RUN_NOT_FOUND.
    """
    if not is_run_id(run_id):
        raise RunError(
            "E_RUN_NOT_FOUND",
            f"{run_id!r} is not a run id (run_YYYYMMDD_HHMMSS_xxxxxx, as submit printed it)",
        )
    return run_id


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema of ``request``, ``session`` or ``result`` (shipped with the package)."""
    if name not in SCHEMAS:
        raise ValueError(f"no schema {name!r}: choose from {', '.join(SCHEMAS)}")
    text = resources.files("discord_mcp.runs.folders").joinpath(f"schemas/{name}.schema.json")
    document: dict[str, Any] = json.loads(text.read_text(encoding="utf-8"))
    return document


@dataclass(frozen=True)
class RunFolder:
    """Where one run's files are."""

    root: Path
    run_id: str

    @classmethod
    def of(cls, home: Path, run_id: str) -> RunFolder:
        return cls(home / "runs" / check_run_id(run_id), run_id)

    @property
    def request(self) -> Path:
        return self.root / "request.json"

    @property
    def session(self) -> Path:
        return self.root / "session.json"

    @property
    def result(self) -> Path:
        return self.root / "result.json"

    @property
    def context(self) -> Path:
        return self.root / "context"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts"

    @property
    def events(self) -> Path:
        return self.logs / "events.md"

    @property
    def patch(self) -> Path:
        return self.artifacts / "changes.patch"

    def stdout(self, turn: int) -> Path:
        return self.logs / f"turn-{turn:03d}.stdout.ndjson"

    @property
    def worktree(self) -> Path:
        return self.root / "worktree.json"

    def stderr(self, turn: int) -> Path:
        return self.logs / f"turn-{turn:03d}.stderr"

    def turns(self) -> list[int]:
        """The turns whose output is in ``logs/``, in order."""
        found = []
        with contextlib.suppress(OSError):
            for entry in self.logs.iterdir():
                match = re.fullmatch(r"turn-(\d{3,})\.stdout\.ndjson", entry.name)
                if match:
                    found.append(int(match.group(1)))
        return sorted(found)

    def make(self) -> None:
        for directory in (self.root, self.context, self.logs, self.artifacts):
            ensure_dir(directory)

    def write(self, path: Path, document: dict[str, Any]) -> None:
        write_json(path, {"version": VERSION, **document})


def read_document(path: Path) -> dict[str, Any] | None:
    """A run folder's JSON file as it is (None: missing or not readable yet). Changes nothing:
    a damaged file is reported by whoever writes it next, not moved aside by a reader."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def read_status(home: Path, run_id: str) -> dict[str, Any]:
    """What ``discord-watch status RUN_ID`` shows: the session, and the result once there is
    one. Read-only.

    Raises:
        RunError: E_RUN_NOT_FOUND.
    """
    folder = RunFolder.of(home, run_id)
    session = read_document(folder.session)
    request = read_document(folder.request)
    if session is None and request is None:
        raise RunError(
            "E_RUN_NOT_FOUND", f"there is no run {run_id} in {home / 'runs'}: check the id"
        )
    session = session or {}
    result = read_document(folder.result)
    status = {
        "run_id": run_id,
        "status": session.get("state", "created"),
        "engine": session.get("engine") or (request or {}).get("engine"),
        "session_id": session.get("session_id"),
        "project": session.get("project") or (request or {}).get("project"),
        "pid": session.get("pid"),
        "turn": session.get("turn", 0),
        "created_at": session.get("created_at") or (request or {}).get("created_at"),
        "last_active_at": session.get("last_active_at"),
        "run_dir": str(folder.root),
        "thread_url": session.get("thread_url"),
        "result": result,
    }
    return status


class RunQueue:
    """``runs/queue/``: requests from the command line, claimed by the daemon (module doc).

    A queued request is ``<run_id>.<request id>.json``; the request id sorts by time, so the
    daemon takes a run's requests in the order they were made.
    """

    def __init__(self, home: Path) -> None:
        self.home = home
        self.directory = home / "runs" / QUEUE

    def put(self, document: Mapping[str, Any]) -> Path:
        """Queue a request (atomically: it appears whole or not at all)."""
        run_id = check_run_id(str(document["run_id"]))
        ensure_dir(self.directory)
        path = self.directory / f"{run_id}.{document['reply_id']}.json"
        write_json(path, {"version": VERSION, **document})
        return path

    def withdraw(self, path: Path) -> bool:
        """Take back a request not claimed yet; False when the daemon has it already."""
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True

    def waiting(self) -> list[Path]:
        """The queued requests, oldest first."""
        try:
            entries = list(self.directory.iterdir())
        except FileNotFoundError:
            return []
        found = [p for p in entries if p.suffix == ".json" and not p.name.startswith(".")]
        return sorted(found, key=lambda p: p.name.split(".", 1)[-1])

    def claim(self, path: Path) -> tuple[RunFolder | None, dict[str, Any]] | None:
        """Move a queued request into its run's folder as ``request.json`` (the claim) and read
        it. None when it is gone (withdrawn, or claimed by another) or not a request (dropped).
        The folder is None when the request resumes a run that has no folder (dropped too)."""
        document = read_document(path)
        run_id = str((document or {}).get("run_id") or "")
        if document is None or not is_run_id(run_id) or not path.name.startswith(run_id):
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        folder = RunFolder.of(self.home, run_id)
        if document.get("mode") == "resume" and not folder.root.is_dir():
            with contextlib.suppress(OSError):
                path.unlink()
            return None, document
        ensure_dir(folder.root)
        try:
            os.replace(path, folder.request)
        except FileNotFoundError:
            return None
        return folder, document
