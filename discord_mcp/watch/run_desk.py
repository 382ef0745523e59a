"""The daemon's side of ``discord-watch submit|resume`` (issue 23): take each run request from
``runs/queue/`` (:class:`~discord_mcp.runs.folders.folders.RunQueue`), start or continue the run,
and answer the command line in ``watch/replies/`` (:class:`~discord_mcp.watch.request_files.
RequestBox`).

With Discord (``controls`` given) a new run gets its thread, and its prompt is shown there, as
``/start`` does; in local mode the run's session is keyed by its run id and nothing reaches
Discord. Either way it is the same engine, queue and run folder.

An answer: ``{"ok": true, "result": {run_id, status, created_at, run_dir, thread_url, job_id,
turn_of}}`` or ``{"ok": false, "code", "message", "retryable"}``. A request found after its
deadline (the command gave up) is dropped, its folder with it when nothing ran there.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import shutil
from pathlib import Path
from typing import Any

from discord_mcp.approvals import unasked
from discord_mcp.approvals.cards import action_of
from discord_mcp.approvals.report import not_run_during
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DiscordError, RunError, StateError
from discord_mcp.runs.constraints import Constraints
from discord_mcp.runs.engine.engine import RunEngine
from discord_mcp.runs.folders.error_codes import discord_failure, is_retryable
from discord_mcp.runs.folders.folders import RunFolder, RunQueue, read_document
from discord_mcp.runs.folders.recorder import NotRun
from discord_mcp.runs.folders.turn_files import context_files
from discord_mcp.runs.journal.views import JobView, SessionView
from discord_mcp.state.files import off_loop
from discord_mcp.watch.control.base import Controls
from discord_mcp.watch.control.start import continue_session, open_session
from discord_mcp.watch.request_files import RequestBox

log = logging.getLogger(__name__)

SHELL = "**From the shell**"
AUTHOR = "shell"


class RunDesk:
    """Takes run requests for one engine (see the module doc)."""

    def __init__(self, engine: RunEngine, home: Path, controls: Controls | None = None) -> None:
        self.engine = engine
        self.home = home
        self.controls = controls
        self._queue = RunQueue(home)
        self._box = RequestBox(home)

    async def take(self, now: float) -> int:
        """Handle every queued request (oldest first); how many there were."""
        waiting = await off_loop(self._queue.waiting)
        for path in waiting:
            claimed = await off_loop(self._queue.claim, path)
            if claimed is None:
                continue
            folder, document = claimed
            reply_id = str(document.get("reply_id") or "")
            if float(document.get("expires_at") or 0) < now:
                if folder is not None:
                    await off_loop(_forget, folder)
                continue
            body = await self._handle(folder, document)
            if reply_id:
                await off_loop(self._box.answer, reply_id, body)
        return len(waiting)

    async def _handle(self, folder: RunFolder | None, document: dict[str, Any]) -> dict[str, Any]:
        try:
            if folder is None:
                raise RunError(
                    "E_RUN_NOT_FOUND", f"there is no run {document.get('run_id')}: check the id"
                )
            if document.get("mode") == "resume":
                job, session = await self._resume(folder, document)
            else:
                job, session = await self._start(folder, document)
            return {"ok": True, "result": await off_loop(self._receipt, folder, session, job)}
        except RunError as exc:
            if folder is not None and document.get("mode") != "resume":
                await off_loop(_forget, folder)
            return _error(exc.code, exc.message)
        except DiscordError as exc:
            log.warning("a run request failed talking to Discord: %s", exc)
            return _error(*discord_failure(exc))
        except (KeyError, TypeError, ValueError) as exc:
            return _error("E_BAD_ARGUMENTS", f"malformed request ({exc!r})")
        except StateError as exc:
            return _error("E_STATE", str(exc))

    async def _start(
        self, folder: RunFolder, document: dict[str, Any]
    ) -> tuple[JobView | None, SessionView]:
        if self.engine.session_of_run(folder.run_id) is not None:
            raise RunError("E_BAD_ARGUMENTS", f"run {folder.run_id} exists already")
        constraints = Constraints.from_dict(document.get("constraints")).checked()
        await off_loop(self._within_request_roots, str(document["project"]), document)
        prompt = str(document["message"])
        tool = document.get("engine")
        model = document.get("model")
        worktree = document.get("worktree")
        if worktree is not None and not isinstance(worktree, bool):
            raise RunError("E_BAD_ARGUMENTS", "worktree must be true, false or absent")
        files = await off_loop(context_files, folder)
        if self.controls is not None:
            await self._know_guild()
            session, job = await open_session(
                self.controls,
                project=str(document["project"]),
                prompt=prompt,
                tool=tool,
                model=model,
                by=SHELL,
                author=AUTHOR,
                files=files,
                run_id=folder.run_id,
                constraints=constraints,
                debounce=False,
                worktree=worktree,
            )
            return job, session
        session = await self.engine.start_session(
            folder.run_id,
            str(document["project"]),
            tool,
            model,
            run_id=folder.run_id,
            constraints=constraints,
            worktree=worktree,
        )
        job = await self.engine.submit(
            session.thread_id, str(document["reply_id"]), prompt, AUTHOR, files, debounce=False
        )
        return job, session

    def _within_request_roots(self, project: str, document: dict[str, Any]) -> None:
        """A request's own ``allowed_roots`` (the CodeBridge seed's, issue 34) narrow the
        daemon's: each must be inside one of discord-watch's roots, and the project's folder
        inside one of them. Absent: the daemon's roots alone (checked when the run starts).

        Raises:
            RunError: E_BAD_ARGUMENTS (not a list of absolute paths), E_INVALID_PATH.
        """
        if "allowed_roots" not in document:
            return
        asked = document["allowed_roots"]
        if (
            not isinstance(asked, list)
            or not asked
            or not all(isinstance(r, str) and r and "\0" not in r for r in asked)
            or not all(Path(r).is_absolute() for r in asked)
        ):
            raise RunError(
                "E_BAD_ARGUMENTS", "allowed_roots must be a non-empty list of absolute paths"
            )
        registry = self.engine.projects
        ours = registry.allowed_roots
        roots = [Path(r).resolve() for r in asked]
        wider = [r for r in roots if not any(r.is_relative_to(root) for root in ours)]
        if wider:
            raise RunError(
                "E_INVALID_PATH",
                f"allowed root {wider[0]} is outside discord-watch's roots "
                f"({', '.join(str(r) for r in ours)}): a request can only narrow them",
            )
        path = Path(registry.get(project).path).resolve()
        if not any(path.is_relative_to(root) for root in roots):
            raise RunError(
                "E_INVALID_PATH",
                f"{path} (project {project}) is outside the request's allowed roots "
                f"({', '.join(str(r) for r in roots)})",
            )

    async def _resume(
        self, folder: RunFolder, document: dict[str, Any]
    ) -> tuple[JobView | None, SessionView]:
        await self.engine.revive_run(folder.run_id)  # at rest for long, it had retired
        session = self.engine.session_of_run(folder.run_id)
        if session is None:
            raise RunError(
                "E_RUN_NOT_FOUND",
                f"run {folder.run_id} is not known to this discord-watch (its state was reset, "
                "or the run is older than it keeps): submit a new run",
            )
        prompt = str(document["message"])
        timeout = Constraints.from_dict(document.get("constraints")).checked().timeout_s
        run_timeout = session.constraints.get("timeout_s")
        turn_timeout = timeout if timeout != run_timeout else None
        if self.controls is not None:
            await self._know_guild()
            job = await continue_session(
                self.controls,
                session.thread_id,
                prompt,
                by=SHELL,
                author=AUTHOR,
                timeout_s=turn_timeout,
                debounce=False,
            )
        else:
            job = await self.engine.submit(
                session.thread_id,
                str(document["reply_id"]),
                prompt,
                AUTHOR,
                timeout_s=turn_timeout,
                debounce=False,
            )
        return job, self.engine.session(session.thread_id) or session

    async def _know_guild(self) -> None:
        controls = self.controls
        if controls is not None and controls.guild_id is None:
            controls.guild_id = await controls.rest.guild_of(controls.settings.channel_id) or None

    def _receipt(
        self, folder: RunFolder, session: SessionView, job: JobView | None
    ) -> dict[str, Any]:
        stored = read_document(folder.session) or {}
        running = session.running_job_id is not None or bool(session.queued_job_ids)
        state = str(stored.get("state") or "created")
        if running and state in ("completed", "failed", "stopped"):
            state = "running"  # a resumed run is running again (its folder says so shortly)
        return {
            "run_id": folder.run_id,
            "status": state,
            "created_at": stored.get("created_at"),
            "run_dir": str(folder.root),
            "thread_url": self.controls.link(session.thread_id) if self.controls else None,
            "job_id": job.job_id if job is not None else None,
            "worktree": session.workdir,
        }


def calls_not_run(store: DecisionStore) -> NotRun:
    """A run turn's tool calls that were not run (denied or unanswered approvals, and those
    blocked because the owner could not be asked at all), as its ``result.json`` lists them;
    blocking (the recorder calls it off the loop)."""

    def not_run(
        thread_id: str, started: dt.datetime | None, ended: dt.datetime | None
    ) -> list[dict[str, Any]]:
        calls = []
        for decision in not_run_during(store, thread_id, started, ended):
            action = action_of(decision)
            detail = action.get("command") or action.get("path") or ""
            if decision.gave_up_at:
                why = "no one answered in time"
            else:
                why = f"denied by {decision.answered_by_name or 'the owner'}"
                if decision.note:
                    why += f": {decision.note}"
            calls.append(
                {
                    "tool": str((decision.approval or {}).get("tool_name") or "tool"),
                    "detail": str(detail),
                    "why": why,
                    "decision_id": decision.id,
                }
            )
        # Calls blocked before a card existed (Discord down...): no decision holds them.
        return calls + unasked.during(store.home, thread_id, started, ended)

    return not_run


def _error(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "code": code, "message": message, "retryable": is_retryable(code)}


def _forget(folder: RunFolder) -> None:
    """Remove a run folder where nothing ran (a refused or expired new run)."""
    if folder.session.exists() or folder.result.exists():
        with contextlib.suppress(OSError):
            folder.request.unlink()
        return
    shutil.rmtree(folder.root, ignore_errors=True)
