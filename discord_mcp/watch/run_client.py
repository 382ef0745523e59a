"""The command line's side of runs (issue 23): ``submit``, ``resume``, waiting, ``status`` and
``logs`` of a run, through its folder (:mod:`discord_mcp.runs.folders.folders`).

``submit`` makes the run's folder (``context/`` holds copies of the ``--context`` files),
queues the request in ``runs/queue/`` and waits (at most
:data:`~discord_mcp.watch.request_files.ANSWER_WITHIN_S`) for the daemon to take it; if it
does not, the request is taken back and the folder removed. Waiting for a result reads the
folder (``session.json`` at rest, ``result.json`` naming the turn): no daemon is asked, so a
wait survives a daemon restart. ``status`` and ``logs`` only read.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError, StateError
from discord_mcp.runs.constraints import Constraints
from discord_mcp.runs.folders.error_codes import is_retryable
from discord_mcp.runs.folders.folders import (
    AT_REST,
    RunFolder,
    RunQueue,
    check_run_id,
    names_a_run,
    new_run_id,
    read_document,
    read_status,
)
from discord_mcp.runs.folders.transcript import render_turn
from discord_mcp.runs.journal.model import utc_iso
from discord_mcp.runs.projects import Project
from discord_mcp.watch.request_files import ANSWER_WITHIN_S, RequestBox

WAIT_POLL_S = 0.2
WAIT_GRACE_S = 60.0
"""With ``--timeout S`` and ``--wait``, the wait ends this long after S: the run is stopped at S
(of CLI time) and its result follows."""

OK, FAILED, REFUSED, NO_DAEMON, TIMED_OUT, RETRYABLE, STOPPED = 0, 1, 2, 3, 4, 5, 6


class ShellError(Exception):
    """A command that cannot go on: its code, a sentence, and the exit code."""

    def __init__(self, code: str, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.code, self.message, self.exit_code = code, message, exit_code

    def document(self) -> dict[str, Any]:
        return {
            "ok": False,
            "code": self.code,
            "message": self.message,
            "retryable": is_retryable(self.code),
        }


def refused(code: str, message: str) -> ShellError:
    """A refusal: exit 5 when trying again later may help, else 2."""
    return ShellError(code, message, RETRYABLE if is_retryable(code) else REFUSED)


@dataclass(frozen=True)
class Receipt:
    """What the daemon said when it took a request."""

    run_id: str
    status: str
    created_at: str | None
    run_dir: str
    thread_url: str | None
    job_id: str | None
    worktree: str | None = None  # where the run works when it has a worktree (issue 35)

    def document(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "status": self.status,
            "created_at": self.created_at,
            "run_dir": self.run_dir,
            "thread_url": self.thread_url,
            "worktree": self.worktree,
        }


def submit(
    home: Path,
    project: str | None,
    message: str,
    *,
    tool: str | None = None,
    model: str | None = None,
    context: Sequence[str] = (),
    allow_network: bool = True,
    timeout_s: float | None = None,
    worktree: bool | None = None,
    workspace: str | None = None,
    intent: str | None = None,
    allowed_roots: Sequence[str] = (),
) -> Receipt:
    """Start a run (see the module doc); ``worktree``: in a git worktree of its own (None: as
    the project says). ``workspace``: a folder instead of a project (:func:`workspace_project`);
    ``intent``: recorded in the request; ``allowed_roots``: the request's own roots, which
    narrow discord-watch's (checked by the daemon: :mod:`discord_mcp.watch.run_desk`)."""
    from discord_mcp.runs.projects import ProjectRegistry

    try:
        if intent is not None and not INTENT.fullmatch(intent):
            raise RunError(
                "E_BAD_ARGUMENTS",
                f"--intent {intent!r} is not a word: 1-40 characters from a-z, 0-9, '-', '_' "
                "(e.g. coding)",
            )
        roots = [_absolute_root(root) for root in allowed_roots]
        if (project is None) == (workspace is None):
            raise RunError(
                "E_BAD_ARGUMENTS", "name a project, or give --workspace PATH instead (not both)"
            )
        if workspace is not None:
            found = workspace_project(home, workspace, tool)
        else:
            found = ProjectRegistry(home).get(str(project))
    except RunError as exc:
        raise refused(exc.code, exc.message) from None
    run_id = new_run_id(time.time())
    folder = RunFolder.of(home, run_id)
    folder.make()
    try:
        names = _copy_context(folder, context)
        document: dict[str, Any] = {
            "run_id": run_id,
            "project": found.name,
            "engine": tool or found.default_tool,
            "mode": "new",
            "session_id": None,
            "message": message,
            "created_at": utc_iso(time.time()),
            "constraints": Constraints(allow_network, timeout_s).to_dict(),
            "model": model,
            "context": names,
            "via": "shell",
        }
        if worktree is not None:
            document["worktree"] = worktree
        if workspace is not None:
            document["workspace"] = str(found.path)
        if intent is not None:
            document["intent"] = intent
        if roots:
            document["allowed_roots"] = roots
        return _send(home, folder, document, new=True)
    except BaseException:
        if not folder.session.exists():
            shutil.rmtree(folder.root, ignore_errors=True)
        raise


INTENT = re.compile(r"[a-z0-9_-]{1,40}")


def _absolute_root(root: str) -> str:
    if "\0" in root or not Path(root).is_absolute():
        raise RunError("E_INVALID_PATH", f"--allowed-root {root!r} is not an absolute path")
    return str(Path(root).resolve())


def workspace_project(home: Path, workspace: str, tool: str | None) -> Project:
    """The project of an ad-hoc folder (``submit --workspace PATH``, the CodeBridge seed's way):
    the registered project of that folder if there is one, else a new one named after it
    (``ws-<folder>-<hash>``, every CLI enabled, ``tool`` or claude by default). The folder is
    checked as ``project add`` checks one: inside DISCORD_WATCH_ROOTS, not a root, not the home
    directory, not where credentials live (and the daemon checks it again against its roots).

    Raises:
        RunError: E_INVALID_PATH, E_INVALID_TOOLSET, E_CONFIG_CORRUPT.
    """
    from discord_mcp.config import watch_roots
    from discord_mcp.runs.journal.model import TOOLS
    from discord_mcp.runs.projects import ProjectRegistry

    registry = ProjectRegistry(home, allowed_roots=watch_roots())
    resolved = registry.check_path(workspace)
    for project in registry.list():
        if project.path == resolved:
            return project
    digest = hashlib.sha256(str(resolved).encode("utf-8")).hexdigest()[:6]
    stem = re.sub(r"[^a-z0-9_-]+", "-", resolved.name.lower()).strip("-")[:28] or "folder"
    name = f"ws-{stem}-{digest}"
    tools = list(TOOLS)
    default = tool if tool in tools else "claude"
    try:
        return registry.add(name, resolved, tools, default)
    except RunError as exc:
        if exc.code != "E_PROJECT_EXISTS":
            raise
        return registry.get(name)  # made meanwhile by another submit of the same folder


def resume(home: Path, target: str, message: str, *, timeout_s: float | None = None) -> Receipt:
    """Give a run its next turn: the same CLI session, a turn more in the same folder."""
    run_id = run_of(home, target)
    folder = RunFolder.of(home, run_id)
    session = read_document(folder.session)
    if session is None:
        raise refused("E_RUN_NOT_FOUND", f"there is no run {run_id}: check the id")
    constraints = Constraints.from_dict(session.get("constraints"))
    if timeout_s is not None:
        constraints = Constraints(constraints.allow_network, timeout_s)
    document = {
        "run_id": run_id,
        "project": session.get("project") or "?",
        "engine": session.get("engine"),
        "mode": "resume",
        "session_id": session.get("session_id"),
        "message": message,
        "created_at": utc_iso(time.time()),
        "constraints": constraints.to_dict(),
        "via": "shell",
    }
    return _send(home, folder, document, new=False)


def run_of(home: Path, target: str) -> str:
    """The run a command names: a run id, or (as before run folders) a run thread's id."""
    if names_a_run(target):
        try:
            return check_run_id(target)
        except RunError as exc:
            raise refused(exc.code, exc.message) from None
    from discord_mcp.runs.journal.journal import load

    try:
        state = load(home / "runs").state
    except (RunError, StateError) as exc:
        raise ShellError("E_STATE", str(exc), REFUSED) from None
    session = state.sessions.get(target)
    if session is None or session.run_id is None:
        raise refused(
            "E_RUN_NOT_FOUND",
            f"{target!r} is neither a run id nor the thread of a run: check the id",
        )
    return session.run_id


def _copy_context(folder: RunFolder, files: Sequence[str]) -> list[str]:
    names: list[str] = []
    for given in files:
        source = Path(given).expanduser()
        if not source.is_file():
            raise refused("E_CONTEXT_FILE", f"--context {given}: not a readable file")
        name, number = source.name, 1
        while name in names:
            number += 1
            name = f"{source.stem}-{number}{source.suffix}"
        try:
            shutil.copyfile(source, folder.context / name)  # a copy: the caller's file stays
        except OSError as exc:
            raise refused("E_CONTEXT_FILE", f"--context {given}: {exc.strerror}") from None
        names.append(name)
    return names


def _send(home: Path, folder: RunFolder, document: dict[str, Any], *, new: bool) -> Receipt:
    check_alive(home)
    reply_id = f"{int(time.time() * 1000)}-{secrets.token_hex(4)}"
    queued = RunQueue(home).put(
        {**document, "reply_id": reply_id, "expires_at": time.time() + ANSWER_WITHIN_S}
    )
    box = RequestBox(home)
    limit = time.monotonic() + ANSWER_WITHIN_S
    while time.monotonic() < limit:
        reply = box.reply(reply_id)
        if reply is not None:
            if not reply.get("ok"):
                raise refused(str(reply.get("code")), str(reply.get("message")))
            result = dict(reply.get("result") or {})
            return Receipt(
                run_id=str(result["run_id"]),
                status=str(result.get("status") or "created"),
                created_at=result.get("created_at"),
                run_dir=str(result.get("run_dir") or folder.root),
                thread_url=result.get("thread_url"),
                job_id=result.get("job_id"),
                worktree=result.get("worktree"),
            )
        time.sleep(0.05)
    if RunQueue(home).withdraw(queued):
        raise no_daemon(f"it did not take the request within {ANSWER_WITHIN_S:g} s")
    raise ShellError("E_NO_ANSWER", "the daemon took the request but did not answer", NO_DAEMON)


def check_alive(home: Path) -> None:
    """Raises ShellError (exit 3) when no daemon has shown a sign of life lately."""
    from discord_mcp.watch.downtime import Downtime

    last = Downtime(home, wall=time.time).down_since  # its last note that it was alive
    if last is None or time.time() - last > ALIVE_WITHIN_S:
        raise no_daemon("no recent sign of life in the state directory")


ALIVE_WITHIN_S = 90.0
"""A daemon that has not noted it is alive for this long is not running (it notes every 20 s)."""


def no_daemon(why: str) -> ShellError:
    return ShellError(
        "E_DAEMON_NOT_RUNNING",
        f"discord-watch is not running ({why}): start it first (discord-watch, or "
        "discord-watch --local without Discord)",
        NO_DAEMON,
    )


# -- waiting


def wait(home: Path, receipt: Receipt, *, within: float | None) -> tuple[dict[str, Any], int]:
    """Wait until the run is at rest after the receipt's turn; (its result, exit code).

    Raises:
        ShellError: TIMED_OUT (exit 4) with the run's current status as its message (JSON).
    """
    folder = RunFolder.of(home, receipt.run_id)
    deadline = time.monotonic() + within if within is not None else None
    while True:
        result = _done(folder, receipt.job_id)
        if result is not None:
            return result, exit_code(result)
        if deadline is not None and time.monotonic() >= deadline:
            raise WaitRanOut(read_status(home, receipt.run_id), within or 0.0)
        time.sleep(WAIT_POLL_S)


class WaitRanOut(Exception):
    def __init__(self, status: dict[str, Any], waited: float) -> None:
        super().__init__(f"waited {waited:g} s")
        self.status, self.waited = status, waited


def _done(folder: RunFolder, job_id: str | None) -> dict[str, Any] | None:
    session = read_document(folder.session)
    if session is None or session.get("state") not in AT_REST:
        return None
    result = read_document(folder.result)
    if result is None:
        return None
    if job_id is not None and not any(t.get("job_id") == job_id for t in result.get("turns", [])):
        return None  # the folder is at rest from an earlier turn; ours has not been written
    return result


def exit_code(result: dict[str, Any]) -> int:
    """A result's exit code: 0 completed, 6 stopped, 5 failed but retryable, 1 failed."""
    if result.get("status") == "completed":
        return OK
    if result.get("status") == "stopped":
        return STOPPED
    error = result.get("error") or {}
    return RETRYABLE if error.get("retryable") else FAILED


# -- reading a run


def status(home: Path, target: str) -> dict[str, Any]:
    try:
        return read_status(home, run_of(home, target))
    except RunError as exc:
        raise refused(exc.code, exc.message) from None


def logs(home: Path, target: str, *, raw: bool) -> str:
    """The run's readable transcript (``--raw``: every turn's output as the CLI wrote it)."""
    try:
        folder = RunFolder.of(home, run_of(home, target))
    except RunError as exc:
        raise refused(exc.code, exc.message) from None
    turns = folder.turns()
    if not folder.root.is_dir():
        raise refused("E_RUN_NOT_FOUND", f"there is no run {folder.run_id}")
    if raw:
        return "".join(
            folder.stdout(t).read_text(encoding="utf-8", errors="replace") for t in turns
        )
    try:
        text = folder.events.read_text(encoding="utf-8")
    except OSError:
        text = f"# Run {folder.run_id}\n"
    session = read_document(folder.session) or {}
    current = int(session.get("turn") or 0)
    if session.get("state") in ("running", "stopping") and current in turns:
        request = read_document(folder.request) or {}
        lines = folder.stdout(current).read_text(encoding="utf-8", errors="replace").splitlines()
        text += "\n" + render_turn(
            str(session.get("engine") or "claude"),
            current,
            str(request.get("message") or ""),
            lines,
            status="running",
        )
    return text
