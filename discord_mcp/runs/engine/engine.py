"""The run engine: threads are sessions, owner messages are jobs, CLIs run one at a time per
thread and at most ``global_max_running`` at once.

Theory (seed 000 §3, §6, §12). ``submit`` journals ``JobEnqueued`` (deduplicated on
thread + message id) and the scheduler starts the oldest waiting job of any thread that has
nothing running while fewer than ``global_max_running`` CLIs run: strict FIFO per thread, and
the oldest job first across threads. A job's tool is the thread's tool when the job STARTS, so
``set_tool`` never touches a running job. Every decision is journaled before it is acted on,
and everything is applied by the one reducer (:mod:`discord_mcp.runs.journal.model`).

Each CLI runs under the job wrapper in its own process group with its output going straight into the
job's log files (:mod:`discord_mcp.runs.processes.spawner`); the engine follows the log
(:mod:`discord_mcp.runs.processes.runner`). So the CLI survives the daemon, and at the next start a
job the journal still shows as running is:

- reattached, when its wrapper is still alive (pid, start time and boot id all match); its
  timeout still counts from the original start;
- completed from its log, when the CLI has ended meanwhile (its final event is in the log, or
  the wrapper recorded its exit code);
- ``unknown_after_crash`` only when there is neither; the notifier is told, and only the
  owner's explicit ``retry`` runs it again. Nothing is rerun blindly.

Normal shutdown (leaving ``async with engine``) DETACHES running CLIs: they keep running, the
journal keeps them as running, and the next start reattaches them or completes them from their
logs. Restarting the daemon (an upgrade, say) therefore never kills or loses work. To end a
job, ``stop`` it.

A job's timeout is its project's (``job_timeout_seconds``; default ``limits.job_timeout``), and
its clock stops while its agent waits for the owner: ``owner_wait`` says how long the agent in a
thread has waited on a question asked there since the job started, and that time is added to
the job's deadline (so a job that asks at 14 minutes and gets its answer an hour later is not
killed, and one that merely runs too long is).

Notifications go through one queue, in order, each call bounded by ``notify_timeout``; a
notifier that raises or hangs is logged and never breaks the engine. Activity is sent at most
every ``status_interval`` per job, and only the latest one waiting is delivered.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from discord_mcp.errors import RunError
from discord_mcp.runs.adapters.base import (
    McpRegistration,
)
from discord_mcp.runs.contract import (
    Clock,
    OwnerWait,
    PermissionAsker,
    RunLimits,
    RunNotifier,
    SystemClock,
    TurnPreparer,
)
from discord_mcp.runs.engine.controls import EngineControls
from discord_mcp.runs.engine.engine_sessions import EngineSessions
from discord_mcp.runs.engine.engine_views import EngineViews
from discord_mcp.runs.engine.landed import EngineLanding
from discord_mcp.runs.engine.launch import (
    lock_engine,
    unlock,
)
from discord_mcp.runs.engine.notices import Notices
from discord_mcp.runs.engine.retiring import EngineRetirement
from discord_mcp.runs.engine.scheduler import Scheduler
from discord_mcp.runs.folders.recorder import NotRun, RunRecorder, ThreadUrl
from discord_mcp.runs.git import worktrees
from discord_mcp.runs.journal.journal import Journal
from discord_mcp.runs.journal.model import Session, utc_iso
from discord_mcp.runs.journal.views import JobView, SessionView, Tool
from discord_mcp.runs.processes.spawner import (
    ProcessSpawner,
    Spawner,
)
from discord_mcp.runs.projects import ProjectRegistry

log = logging.getLogger(__name__)


class RunEngine(EngineViews, EngineSessions, EngineControls, EngineLanding, EngineRetirement):
    """Runs agent CLI jobs for Discord threads. Use as ``async with RunEngine(...) as engine``.

    Args:
        state_dir: the state directory (``runs/`` and ``logs/jobs/`` are used inside it).
        projects: where projects are looked up (read again at every job start).
        notifier: told about queued, started, active and finished jobs.
        spawner: starts CLIs (default :class:`ProcessSpawner`).
        clock: wall and monotonic time (default :class:`SystemClock`).
        limits: :class:`RunLimits`.
        mcp: how to register discord-mcp as the ``discord`` MCP server of each run (None: no
            server is registered).
        env: the environment every CLI gets (default: the daemon's own, read now), less
            ``DISCORD_BOT_TOKEN``, which no CLI ever gets.
        tool_env: extra variables per tool, on top of ``env``.
        owner_wait: how long a thread's agent has waited for the owner (see the module doc;
            None: never, every job's clock runs on).
        thread_url: a run thread's link, for its run folder (None: runs have no thread).
        not_run: a turn's tool calls that were not run, for its run folder (None: none).
        permissions: asks the owner when an ACP agent requests permission (None: every
            request is cancelled, never allowed).
        preparer: composes the turns of the threads it says it prepares when they start
            (the watch daemon's chat channels; :mod:`discord_mcp.runs.engine.prepared`).
        stopping: why the engine stops, told to its ending turns' threads ("discord-watch stopped").
    """

    def __init__(
        self,
        *,
        state_dir: Path,
        projects: ProjectRegistry,
        notifier: RunNotifier,
        spawner: Spawner | None = None,
        clock: Clock | None = None,
        limits: RunLimits | None = None,
        mcp: McpRegistration | None = None,
        env: Mapping[str, str] | None = None,
        tool_env: Mapping[Tool, Mapping[str, str]] | None = None,
        owner_wait: OwnerWait | None = None,
        thread_url: ThreadUrl | None = None,
        not_run: NotRun | None = None,
        permissions: PermissionAsker | None = None,
        preparer: TurnPreparer | None = None,
        stopping: Callable[[], str] | None = None,
    ) -> None:
        self.state_dir = state_dir
        self._stopping = stopping
        self.preparer = preparer
        self._owner_wait = owner_wait
        self._permissions = permissions
        self.projects = projects
        self.notifier = notifier
        self.spawner: Spawner = spawner or ProcessSpawner()
        self.clock: Clock = clock or SystemClock()
        self.limits = limits or RunLimits()
        self.mcp = mcp
        self._env = dict(os.environ if env is None else env)
        self._tool_env = {tool: dict(value) for tool, value in (tool_env or {}).items()}
        self.journal = Journal(
            state_dir / "runs",
            wall_clock=self.clock.time,
            monotonic=self.clock.monotonic,
            snapshot_every_events=self.limits.snapshot_every_events,
            snapshot_every_seconds=self.limits.snapshot_every_seconds,
            keep_finished=self.limits.keep_finished_jobs,
        )
        self._thread_url = thread_url
        self._not_run = not_run
        self.recorder = self._new_recorder()
        self._group: asyncio.TaskGroup | None = None
        self._background: list[asyncio.Task[None]] = []
        self._notices = self._new_notices()
        self._scheduler = self._new_scheduler()
        self._lock_fd: int | None = None
        self._open = False

    # ---------------------------------------------------------------------------------------
    # Lifecycle

    async def __aenter__(self) -> Self:
        self._lock_fd = lock_engine(self.state_dir / "runs" / "engine.lock")
        self.recorder = self._new_recorder()
        self._notices = self._new_notices()
        self._scheduler = self._new_scheduler()
        try:
            self.journal.open()
            group = asyncio.TaskGroup()
            await group.__aenter__()
        except BaseException:
            self.journal.close()
            unlock(self._lock_fd)
            raise
        self._group = self._scheduler.group = group
        self._background = [
            group.create_task(self._notices.run(), name="runs-notifier"),
            group.create_task(self._snapshot_timer(), name="runs-snapshots"),
            group.create_task(self._scheduler.timers(), name="runs-timers"),
            group.create_task(self.recorder.run(), name="runs-folders"),
            group.create_task(self._scheduler.acp.idle(), name="runs-agents-idle"),
            group.create_task(self.retire_every(), name="runs-retire"),
        ]
        try:
            self._scheduler.cleanup_job_dirs()
            self._scheduler.recover()  # nothing new starts before every old job is accounted for
            self.recorder.reconcile(self.sessions(), self.jobs)
            await self._retire_logging_failures()
            self._open = self._scheduler.open = True
            self._scheduler.pump()
        except BaseException as exc:
            await self.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._open = False
        group = self._group
        try:
            await self._scheduler.detach()  # the CLIs keep running (see the module doc)
            self._notices.close()
            await self.recorder.drain(self.limits.shutdown_timeout)
            self.recorder.close()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.limits.shutdown_timeout):
                    await self._background[0]
            for task in self._background:
                task.cancel()
            if group is not None:
                # Only a cancellation is the group's business; any other exception from the
                # body propagates as it is (not wrapped in an ExceptionGroup).
                if exc_type is not None and issubclass(exc_type, asyncio.CancelledError):
                    await group.__aexit__(exc_type, exc, traceback)
                else:
                    await group.__aexit__(None, None, None)
        finally:
            self._group = None
            with contextlib.suppress(Exception):
                self.journal.snapshot()
            self.journal.close()
            unlock(self._lock_fd)
            self._lock_fd = None

    def _new_recorder(self) -> RunRecorder:
        return RunRecorder(
            self.state_dir,
            project_path=self._project_path,
            thread_url=self._thread_url,
            not_run=self._not_run,
            wall=self.clock.time,
        )

    def _new_notices(self) -> Notices:
        def running_view(job_id: str) -> JobView | None:
            job = self.state.jobs.get(job_id)
            return job.view() if job is not None and job.state == "running" else None

        return Notices(
            self.notifier,
            timeout=self.limits.notify_timeout,
            running_view=running_view,
            tap=self.recorder.observe,
        )

    def _new_scheduler(self) -> Scheduler:
        scheduler = Scheduler(
            state_dir=self.state_dir,
            journal=self.journal,
            projects=self.projects,
            spawner=self.spawner,
            clock=self.clock,
            limits=self.limits,
            mcp=self.mcp,
            env=self._env,
            tool_env=self._tool_env,
            notices=self._notices,
            owner_wait=self._owner_wait,
            permissions=self._permissions,
        )
        scheduler.after_failure = self._on_failure
        scheduler.prepared.preparer = self.preparer
        scheduler.stopping = self._stopping or scheduler.stopping
        scheduler.settling, self.recorder.on_written = self.recorder.writing, scheduler.wake.set
        return scheduler

    def _require_open(self) -> None:
        if not self._open:
            raise RunError(
                "E_ENGINE_NOT_RUNNING",
                "the run engine is not running: use it inside 'async with engine:'",
            )

    # ---------------------------------------------------------------------------------------
    # Commands

    async def submit(
        self,
        thread_id: str,
        message_id: str,
        prompt: str,
        author: str,
        attachments: Sequence[Mapping[str, Any]] = (),
        *,
        timeout_s: float | None = None,
        debounce: bool = True,
        busy: str | None = None,
        merge: bool = False,
        restricted: bool = False,
    ) -> JobView:
        """Queue an owner message as a job; a message already queued returns its job; within
        the debounce window it joins the thread's waiting job (see :mod:`.controls`), unless
        ``debounce`` is False (a request from the command line: one message, one job).

        ``busy``: what the message does while a turn runs, instead of the project's setting
        (``steer``: handed to the live turn where its engine takes it). ``merge``: a message
        that cannot join the running turn joins the thread's waiting job, however long that
        has waited and whoever wrote it (a chat channel's one conversation). ``restricted``:
        the message is a stranger's, and so is every turn it is part of
        (:mod:`discord_mcp.runs.restricted`); it never steers a turn that is not.

        ``attachments``: the owner's files kept locally (entries of
        :mod:`discord_mcp.files.store`); the CLI gets them in its prompt, its own way.
        ``timeout_s``: this job's own time limit (default: the run's, else the project's).

        Raises:
            RunError: E_NOT_IN_MANAGED_THREAD, E_QUEUE_FULL, E_DUPLICATE_MESSAGE,
                E_SESSION_CLOSED.
        """
        self._require_open()
        session = self._session(str(thread_id))
        if session.landed in worktrees.LANDED_GONE:
            raise RunError(
                "E_RUN_LANDED",
                f"run {session.run_id} was {session.landed}: its worktree is gone, so it takes "
                "no more turns. Start a new run",
            )
        key = f"{session.thread_id}:{message_id}"
        existing = self.state.dedupe.get(key)
        if existing is not None:
            job = self.state.jobs.get(existing)
            if job is None:
                raise RunError(
                    "E_DUPLICATE_MESSAGE",
                    f"message {message_id} already ran as job {existing}, which is too old to "
                    "show: nothing to do",
                )
            return job.view()
        self._check_accepting(session)
        if debounce and not merge:
            merged = self._debounced(
                session, str(message_id), prompt, str(author), key, attachments
            )
            if merged is not None:
                return merged
        running = session.running_job_id
        mode = busy or self._busy(session)
        # A message with files queues: a running turn takes text only. A stranger's message
        # never steers a turn that is not restricted (nor an owner's a stranger's).
        steering = (
            running is not None
            and mode == "steer"
            and not attachments
            and self.state.jobs[running].restricted == restricted
        )
        if steering and self._scheduler.steer(str(running), prompt):  # the live turn takes it
            self.journal.append(
                "JobSteered",
                {
                    "job_id": running,
                    "message_id": str(message_id),
                    "prompt": prompt,
                    "dedupe_key": key,
                },
            )
            return self.state.jobs[str(running)].view()
        if merge and session.queue:
            return self._merged(session, str(message_id), prompt, key, attachments, restricted)
        queued = self._enqueue(
            session,
            str(message_id),
            prompt,
            str(author),
            1,
            None,
            key,
            attachments,
            not_before=self._debounce_until() if debounce and not merge else None,
            timeout_s=timeout_s,
            restricted=restricted,
        )
        if running is not None and mode == "interrupt":
            self._scheduler.interrupt(running)  # the new message runs once it has stopped
        return queued

    def _merged(
        self,
        session: Session,
        message_id: str,
        prompt: str,
        key: str,
        attachments: Sequence[Mapping[str, Any]],
        restricted: bool,
    ) -> JobView:
        """Join the thread's last waiting job (``submit(merge=True)``)."""
        job = self.state.jobs[session.queue[-1]]
        payload: dict[str, Any] = {
            "job_id": job.job_id,
            "message_id": message_id,
            "prompt": prompt,
            "dedupe_key": key,
            "not_before": job.not_before,
        }
        if attachments:
            payload["attachments"] = [dict(a) for a in attachments]
        if restricted:
            payload["restricted"] = True
        self.journal.append("JobAmended", payload)
        return self.state.jobs[job.job_id].view()

    def _busy(self, session: Session) -> str:
        try:
            return self.projects.get(session.project_name).busy
        except RunError:
            return "queue"

    async def _stop_job(self, job_id: str) -> None:
        await self._scheduler.stop(job_id)

    def _project_path(self, name: str) -> Path | None:
        try:
            return self.projects.check_path(self.projects.get(name).path)
        except RunError:
            return None

    def _session(self, thread_id: str) -> Session:
        session = self.state.sessions.get(thread_id)
        if session is None:
            raise RunError(
                "E_NOT_IN_MANAGED_THREAD",
                f"thread {thread_id} is not a run session: start one with a project first",
            )
        return session

    def _session_view(self, thread_id: str) -> SessionView:
        return self.state.session_view(self.state.sessions[thread_id])

    # ---------------------------------------------------------------------------------------
    # Scheduling

    def _enqueue(
        self,
        session: Session,
        message_id: str,
        prompt: str,
        author: str,
        attempt: int,
        retry_of: str | None,
        dedupe_key: str | None,
        attachments: Sequence[Mapping[str, Any]] = (),
        *,
        not_before: float | None = None,
        reason: str | None = None,
        front: bool = False,
        timeout_s: float | None = None,
        restricted: bool = False,
    ) -> JobView:
        if len(session.queue) >= self.limits.queue_cap:
            raise RunError(
                "E_QUEUE_FULL",
                f"thread {session.thread_id} already has {len(session.queue)} messages waiting "
                f"(the limit is {self.limits.queue_cap}): wait for some to finish, or stop the "
                "running job",
            )
        number = self.state.job_counter + 1
        day = dt.datetime.fromtimestamp(self.clock.time(), tz=dt.UTC).strftime("%Y%m%d")
        job_id = f"job_{day}_{number:04d}"
        payload: dict[str, Any] = {
            "job_id": job_id,
            "number": number,
            "thread_id": session.thread_id,
            "message_id": message_id,
            "author": author,
            "prompt": prompt,
            "attempt": attempt,
            "retry_of": retry_of,
            "dedupe_key": dedupe_key,
        }
        if attachments:
            payload["attachments"] = [dict(a) for a in attachments]
        if timeout_s is not None:
            payload["timeout_s"] = timeout_s
        if restricted:
            payload["restricted"] = True
        if not_before is not None:  # issue 11: debounce windows and held retries
            payload |= {"not_before": utc_iso(not_before), "reason": reason, "front": front}
        self.journal.append("JobEnqueued", payload)
        position = 1 if front else len(session.queue)
        self._notices.post("job_queued", self.state.jobs[job_id].view(), position)
        self._scheduler.pump()
        return self.state.jobs[job_id].view()

    # ---------------------------------------------------------------------------------------
    # Notifications and background work

    async def _snapshot_timer(self) -> None:
        while True:
            await asyncio.sleep(min(1.0, self.limits.snapshot_every_seconds))
            if self.journal.snapshot_due():
                self.journal.snapshot()
