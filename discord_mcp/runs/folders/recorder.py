"""Keeping each run's folder (:mod:`discord_mcp.runs.folders.folders`) up to date as its jobs run.

Theory. Every job of a run is one turn. The engine tells the recorder what happens, at the
moment it happens and without waiting (:meth:`RunRecorder.observe`: the same events the
notifier gets, with the views of that moment); one worker writes the folder in that order, off
the event loop: ``session.json`` when a turn starts, is being stopped, or ends; and when it ends
its logs (hard links to the engine's job logs, so they grow while the CLI writes), the
transcript ``events.md``, ``artifacts/changes.patch`` and ``result.json``. ``result.json`` is
written before ``session.json`` says the run is at rest, so a reader that sees a run at rest
finds its result.

Nothing is lost to a crash: at startup :meth:`RunRecorder.reconcile` compares the journal (the
truth) with each folder changed since the recorder last ran empty (:mod:`.recorded`: a year of
runs is not read at every start) and writes what a previous daemon could not (a turn that
ended while no daemon ran; a request claimed but never started, which fails as E_NOT_STARTED).
The journal forgets old jobs (``keep_finished``); the folders keep every turn, until retention
removes the folders of old runs (:mod:`.retention`): start-up leaves a removed folder removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.errors import DiscordMCPError
from discord_mcp.runs.constraints import Constraints
from discord_mcp.runs.folders import turn_files
from discord_mcp.runs.folders.folders import AT_REST, RunFolder, read_document
from discord_mcp.runs.folders.patches import count_changes, write_patch
from discord_mcp.runs.folders.patches import snapshot as take_snapshot
from discord_mcp.runs.folders.recorded import compare_after, note_recorded
from discord_mcp.runs.folders.results import not_started, run_result, turn_entry
from discord_mcp.runs.git import landing, worktrees  # modules: the git room imports runs.folders
from discord_mcp.runs.git.command import GitFailed
from discord_mcp.runs.journal.model import utc_iso
from discord_mcp.runs.journal.views import JobView, SessionView
from discord_mcp.state.files import off_loop, write_bytes

log = logging.getLogger(__name__)

NotRun = Callable[[str, dt.datetime | None, dt.datetime | None], list[dict[str, Any]]]
"""``not_run(thread_id, started, finished)``: the tool calls of a turn that were not run (its
denied or unanswered approvals), each a JSON object; blocking (called off the loop)."""
ThreadUrl = Callable[[str], str | None]
DRAIN_S = 10.0


@dataclass(frozen=True)
class _Event:
    kind: str  # created | started | stopping | finished | reconcile | posted
    job: JobView | None = None
    session: SessionView | None = None
    document: Mapping[str, Any] | None = None


class RunRecorder:
    """Writes run folders for one engine (see the module doc).

    Args:
        home: the state directory.
        project_path: the directory of a project by name (None: unknown now).
        thread_url: a run thread's link (None: local mode, or no thread).
        not_run: the turn's tool calls that were not run (None: none are counted).
    """

    def __init__(
        self,
        home: Path,
        *,
        project_path: Callable[[str], Path | None],
        thread_url: ThreadUrl | None = None,
        not_run: NotRun | None = None,
        wall: Callable[[], float],
    ) -> None:
        self.home = home
        self._project_path = project_path
        self._thread_url = thread_url
        self._not_run = not_run
        self._wall = wall
        self._queue: asyncio.Queue[_Event | None] = asyncio.Queue()
        self._idle = asyncio.Event()
        self._idle.set()
        self._unmarked = False
        """Events were written since :mod:`.recorded` was last told."""
        self._recording: dict[str, asyncio.Event] = {}
        """Finished jobs whose turn is not written yet (see :meth:`recorded`)."""
        self.on_written: Callable[[], None] = lambda: None
        """Called each time a finished job's turn is written (the engine's scheduler wakes:
        a run in a worktree starts its next turn only once the last one is committed)."""

    # -- what the engine calls (never waits)

    def observe(self, method: str, args: tuple[Any, ...]) -> None:
        """A notification the engine posts (``job_started``, ``job_finished``, ...)."""
        if method == "job_started":
            job, session = args
            self._put(_Event("started", job, session))
        elif method == "job_finished":
            job, session = args
            self._put(_Event("finished", job, session))

    def stopping(self, session: SessionView) -> None:
        self._put(_Event("stopping", session=session))

    def cancelled(self, job: JobView, session: SessionView) -> None:
        """A waiting turn was taken back by a stop: it ends the run as ``stopped``."""
        self._put(_Event("finished", job, session))

    def answer_posted(self, run_id: str, job_id: str, answer: Mapping[str, Any]) -> None:
        """Where a turn's answer went in Discord (``state`` posted or failed, ``channel_id``,
        ``message_ids``, ``error``): written into ``result.json``, after the turn's own entry."""
        self._idle.clear()
        self._queue.put_nowait(
            _Event("posted", document={"run_id": run_id, "job_id": job_id, "answer": answer})
        )

    def reconcile(self, sessions: list[SessionView], jobs: Callable[[str], list[JobView]]) -> None:
        """At startup: write what the folders miss (see the module doc)."""
        self._put(_Event("reconcile", document={"sessions": sessions, "jobs": jobs}))

    def _put(self, event: _Event) -> None:
        if event.kind != "reconcile" and (event.session is None or not event.session.run_id):
            return  # a session from before run folders
        if event.kind == "finished" and event.job is not None:
            self._recording.setdefault(event.job.job_id, asyncio.Event())
        self._idle.clear()
        self._queue.put_nowait(event)

    def writing(self, job_id: str) -> bool:
        """Whether the turn of finished job ``job_id`` is still to be written (its commit)."""
        return job_id in self._recording

    async def recorded(self, job_id: str) -> None:
        """Wait until the turn of finished job ``job_id`` is written (its commit, patch and
        ``result.json``); returns at once for a job not waiting to be written. Unbounded: the
        caller bounds it."""
        waiting = self._recording.get(job_id)
        if waiting is not None:
            await waiting.wait()

    # -- preparing a run (awaited by the engine before the run's session exists)

    async def prepare(
        self,
        run_id: str,
        *,
        project: str,
        project_path: Path,
        engine: str,
        thread_id: str,
        constraints: Constraints,
        snapshot: bool = True,
    ) -> None:
        """Make the folder, and (``snapshot``) the snapshot its patch is made against (a run in
        a worktree of its own needs none: its patch is its branch's); ``session.json``
        ``created``."""
        folder = RunFolder.of(self.home, run_id)
        await off_loop(folder.make)
        base = await take_snapshot(project_path, folder.root / ".scratch") if snapshot else None
        now = utc_iso(self._wall())
        document = {
            "run_id": run_id,
            "engine": engine,
            "session_id": None,
            "state": "created",
            "pid": None,
            "created_at": now,
            "last_active_at": now,
            "project": project,
            "thread_id": thread_id,
            "thread_url": self._url(thread_id),
            "turn": 0,
            "job_id": None,
            "base_tree": base,
            "constraints": constraints.to_dict(),
        }
        await off_loop(folder.write, folder.session, document)

    # -- the worker

    async def run(self) -> None:
        """Write folders until :meth:`close`; one event at a time, in order."""
        while True:
            if self._queue.empty():
                self._idle.set()
                if self._unmarked:
                    await self._mark()
            event = await self._queue.get()
            self._unmarked = True
            if event is None:
                self._idle.set()
                return
            try:
                await self._handle(event)
            except Exception:  # a bug here must not take the engine down
                log.exception("writing the run folder (%s) failed; carrying on", event.kind)
            finally:
                if event.kind == "finished" and event.job is not None:
                    done = self._recording.pop(event.job.job_id, None)
                    if done is not None:
                        done.set()
                        self.on_written()

    async def _mark(self) -> None:
        """Everything queued is written: say so (:mod:`.recorded`), so the next start-up
        compares only the sessions changed after now."""
        self._unmarked = False
        try:
            await off_loop(note_recorded, self.home, self._wall())
        except (DiscordMCPError, OSError) as exc:  # the next start compares more: no loss
            log.warning("could not note that the run folders are up to date: %s", exc)

    def close(self) -> None:
        self._queue.put_nowait(None)
        for waiting in self._recording.values():  # nothing more is written by this one
            waiting.set()
        self._recording.clear()

    async def drain(self, within: float = DRAIN_S) -> None:
        """Wait (bounded) until everything queued is written."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                await self._idle.wait()

    async def _handle(self, event: _Event) -> None:
        if event.kind == "reconcile":
            assert event.document is not None
            await self._reconcile(event.document["sessions"], event.document["jobs"])
            return
        if event.kind == "posted":
            assert event.document is not None
            await off_loop(self._posted, dict(event.document))
            return
        session = event.session
        assert session is not None
        assert session.run_id is not None
        folder = RunFolder.of(self.home, session.run_id)
        if event.kind == "stopping":
            await off_loop(self._update_session, folder, session, {"state": "stopping"})
        elif event.kind == "started" and event.job is not None:
            await off_loop(self._started, folder, event.job, session)
        elif event.kind == "finished" and event.job is not None:
            await self._finished(folder, event.job, session)

    # -- where an answer went

    def _posted(self, document: dict[str, Any]) -> None:
        folder = RunFolder.of(self.home, str(document["run_id"]))
        result = read_document(folder.result)
        if result is None:
            log.warning("run %s has no result to say where its answer went", folder.run_id)
            return
        answer = dict(document["answer"])
        ids = [str(i) for i in answer.get("message_ids") or []]
        thread_url = result.get("thread_url")
        answer["url"] = f"{thread_url}/{ids[0]}" if ids and isinstance(thread_url, str) else None
        turns = result.get("turns") or []
        found = [t for t in turns if t.get("job_id") == document["job_id"]]
        if not found:
            log.warning("run %s has no turn %s for its answer", folder.run_id, document["job_id"])
            return
        found[0]["answer"] = answer
        if turns and turns[-1] is found[0]:
            result["answer"] = answer  # the run's: its latest turn's
        result.pop("version", None)
        folder.write(folder.result, result)

    # -- session.json

    def _session_document(self, folder: RunFolder, session: SessionView) -> dict[str, Any]:
        found = read_document(folder.session)
        if found is not None:
            return found
        now = utc_iso(self._wall())
        return {
            "run_id": folder.run_id,
            "engine": session.tool,
            "session_id": None,
            "state": "created",
            "pid": None,
            "created_at": now,
            "last_active_at": now,
            "project": session.project_name,
            "thread_id": session.thread_id,
            "thread_url": self._url(session.thread_id),
            "turn": 0,
            "job_id": None,
            "base_tree": None,
            "constraints": dict(session.constraints),
        }

    def _update_session(
        self, folder: RunFolder, session: SessionView, changes: Mapping[str, Any]
    ) -> dict[str, Any]:
        document = self._session_document(folder, session)
        document.pop("version", None)
        document.update(changes)
        document["last_active_at"] = utc_iso(self._wall())
        folder.make()
        folder.write(folder.session, document)
        return document

    def _url(self, thread_id: str) -> str | None:
        return self._thread_url(thread_id) if self._thread_url is not None else None

    # -- a turn starts

    def _started(self, folder: RunFolder, job: JobView, session: SessionView) -> None:
        document = self._session_document(folder, session)
        turn = int(document.get("turn") or 0)
        if document.get("job_id") != job.job_id:
            turn += 1  # a new turn (a reattached job keeps its own)
        turn_files.link_logs(self.home, folder, job.job_id, turn)
        if read_document(folder.request) is None:
            turn_files.write_request(folder, job, session, turn)
        self._update_session(
            folder,
            session,
            {
                "state": "running",
                "engine": job.tool or session.tool,
                "pid": job.pid,
                "job_id": job.job_id,
                "turn": turn,
                "session_id": job.session_key or document.get("session_id"),
            },
        )

    # -- a turn ends

    async def _finished(self, folder: RunFolder, job: JobView, session: SessionView) -> None:
        document = await off_loop(self._session_document, folder, session)
        result = await off_loop(read_document, folder.result) or {}
        turns = [t for t in result.get("turns") or [] if t.get("job_id") != job.job_id]
        ran = job.started_at is not None
        turn = int(document.get("turn") or 0)
        if document.get("job_id") != job.job_id:
            turn = max([turn, *(int(t.get("turn") or 0) for t in turns)]) + (1 if ran else 0)
        if ran:
            await off_loop(turn_files.link_logs, self.home, folder, job.job_id, turn)
        final_text = job.final_text
        if final_text is None and ran and job.tool is not None:
            final_text = await off_loop(turn_files.final_text, job.tool, folder.stdout(turn))
        not_run: list[dict[str, Any]] = []
        if self._not_run is not None and ran:
            not_run = await off_loop(self._not_run, job.thread_id, job.started_at, job.finished_at)
        entry = turn_entry(job, turn if ran else None, final_text, not_run)
        turns.append(entry)
        turns.sort(key=lambda t: (t.get("turn") is None, t.get("turn") or 0, t["job_id"]))
        session_id = job.session_key or document.get("session_id")
        at_rest = session.running_job_id is None and not session.queued_job_ids
        project_path = self._project_path(session.project_name)
        artifacts = []
        base = document.get("base_tree")
        git: dict[str, Any] = landing.result_fields(None)
        if session.workdir is not None:  # the run's own worktree: its branch is its work
            record = await self._settle(folder, job) if ran else None
            record = record or await off_loop(worktrees.load, self.home, folder.run_id)
            git = landing.result_fields(record)
        elif isinstance(base, str) and project_path is not None and ran:
            await write_patch(project_path, base, folder.patch, folder.root / ".scratch")
        if await off_loop(folder.patch.exists):
            artifacts.append(folder.patch.name)
            if "changes" not in git:
                git["changes"] = await off_loop(count_changes, folder.patch)
        git.setdefault("changes", None)
        await off_loop(turn_files.write_events, folder, turns)
        result_document = run_result(
            folder.run_id,
            session,
            job.tool or session.tool,
            turns,
            entry,
            session_id=session_id,
            thread_url=self._url(session.thread_id),
            artifacts=sorted({*artifacts, *await off_loop(turn_files.artifacts, folder)}),
            now=self._wall(),
        )
        result_document.update(git)
        await off_loop(folder.write, folder.result, result_document)
        state = "running"
        if at_rest:
            status = entry["status"]
            state = status if status in ("completed", "stopped") else "failed"
        await off_loop(
            self._update_session,
            folder,
            session,
            {
                "state": state,
                "pid": None,
                "session_id": session_id,
                "turn": turn,
                "job_id": job.job_id,
            },
        )

    async def _settle(self, folder: RunFolder, job: JobView) -> dict[str, Any] | None:
        """Commit what the turn left in the run's worktree, and write its patch (a git that
        fails costs the turn its commit and patch, never its result: logged)."""
        try:
            record = await worktrees.settle(self.home, folder.run_id, subject=job.prompt)
            if record is not None:
                patch = await worktrees.patch(record)
                await off_loop(write_bytes, folder.patch, patch)
        except (GitFailed, OSError, DiscordMCPError) as exc:
            log.warning("could not commit the work of run %s's turn: %s", folder.run_id, exc)
            return None
        return record

    # -- startup

    async def _reconcile(
        self, sessions: list[SessionView], jobs: Callable[[str], list[JobView]]
    ) -> None:
        known = set()
        after = await off_loop(compare_after, self.home, self._wall())
        for session in sessions:
            if not session.run_id:
                continue
            known.add(session.run_id)
            if after is not None and session.updated_at < after:
                continue  # its folder was written before the last daemon noted it (recorded)
            folder = RunFolder.of(self.home, session.run_id)
            if not await off_loop(folder.root.is_dir):
                continue  # removed by retention (runs.retention): nothing to bring up to date
            result = await off_loop(read_document, folder.result) or {}
            recorded = {t.get("job_id") for t in result.get("turns") or []}
            for job in jobs(session.thread_id):
                if job.state in ("queued", "running") or job.job_id in recorded:
                    continue
                if job.state == "cancelled":
                    continue
                await self._finished(folder, job, session)
            document = await off_loop(read_document, folder.session)
            at_rest = session.running_job_id is None and not session.queued_job_ids
            if document is not None and at_rest and document.get("state") not in AT_REST:
                last = (await off_loop(read_document, folder.result) or {}).get("status")
                if last is not None:
                    state = last if last in ("completed", "stopped") else "failed"
                    await off_loop(
                        self._update_session, folder, session, {"state": state, "pid": None}
                    )
        await off_loop(self._orphans, known, after)

    def _orphans(self, known: set[str], after: dt.datetime | None) -> None:
        """Runs whose request was claimed but never became a session (a crash in between).

        A claim moves ``request.json`` into the run's folder, which changes the folder's time:
        with ``after`` (:func:`~discord_mcp.runs.recorded.compare_after`), only folders changed
        since are read, not every run ever made (whose sessions may have retired from the state:
        :mod:`.retired`)."""
        runs = self.home / "runs"
        since = after.timestamp() if after is not None else None
        with contextlib.suppress(OSError), os.scandir(runs) as entries:
            for entry in entries:
                if not entry.name.startswith("run_") or entry.name in known:
                    continue
                if since is not None:
                    try:
                        if entry.stat().st_mtime < since:
                            continue
                    except OSError:
                        continue
                try:
                    folder = RunFolder.of(self.home, entry.name)
                except DiscordMCPError:
                    continue
                if folder.session.exists() or folder.result.exists():
                    continue  # it became a session (retired from the state, maybe) or ended
                request = read_document(folder.request)
                if request is None:
                    continue
                if request.get("mode") == "resume":
                    continue
                folder.write(folder.result, not_started(folder.run_id, request, self._wall()))
