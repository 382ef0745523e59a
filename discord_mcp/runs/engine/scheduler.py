"""The job lifecycle: start waiting jobs, follow running ones, finish them, and account for
the jobs a previous daemon left running (see :mod:`discord_mcp.runs.engine.engine` for the policy).

Every state change goes through the journal first; processes are started only through the
spawner; notifications are only queued here (:class:`~discord_mcp.runs.engine.notices.Notices`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from discord_mcp.errors import RunError
from discord_mcp.runs.acp.acp_endings import SILENT_CODE
from discord_mcp.runs.acp.acp_jobs import AcpJobs
from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.base import McpRegistration, Outcome, truncate
from discord_mcp.runs.constraints import Constraints
from discord_mcp.runs.contract import Clock, OwnerWait, PermissionAsker, PreparedTurn, RunLimits
from discord_mcp.runs.engine.failures import Failure, classify
from discord_mcp.runs.engine.notices import Notices
from discord_mcp.runs.engine.prepared import (
    WITHHELD_VARIABLES,
    PreparedStarts,
    check_agent_network,
    check_restricted_engine,
    spawn_spec,
)
from discord_mcp.runs.engine.recovery import Recovery
from discord_mcp.runs.engine.streaming import TEXT_PACE_S
from discord_mcp.runs.journal.journal import Journal
from discord_mcp.runs.journal.model import (
    Job,
    ProcessInfo,
    RunState,
    Session,
    is_builtin,
    parse_iso,
    utc_iso,
)
from discord_mcp.runs.journal.views import SessionView, Tool
from discord_mcp.runs.processes.runner import JobPaths, JobRun, sweep_group
from discord_mcp.runs.processes.spawner import (
    Spawner,
)
from discord_mcp.runs.projects import ProjectRegistry

log = logging.getLogger(__name__)

__all__ = ["WITHHELD_VARIABLES", "Scheduler"]


class Scheduler(Recovery):
    """Starts, follows and finishes jobs for one engine (whose lifecycle drives it)."""

    def __init__(
        self,
        *,
        state_dir: Path,
        journal: Journal,
        projects: ProjectRegistry,
        spawner: Spawner,
        clock: Clock,
        limits: RunLimits,
        mcp: McpRegistration | None,
        env: Mapping[str, str],
        tool_env: Mapping[Tool, Mapping[str, str]],
        notices: Notices,
        owner_wait: OwnerWait | None = None,
        permissions: PermissionAsker | None = None,
    ) -> None:
        self.state_dir = state_dir
        self.journal = journal
        self.projects = projects
        self.spawner = spawner
        self.clock = clock
        self.limits = limits
        self.mcp = mcp
        self._env = dict(env)
        self._tool_env = {tool: dict(value) for tool, value in tool_env.items()}
        self._notices = notices
        self._owner_wait = owner_wait
        self.runs: dict[str, JobRun] = {}
        self.wake = asyncio.Event()  # the held jobs may have changed (see timers)
        self.after_failure: Callable[[str, Failure], None] | None = None
        self.group: asyncio.TaskGroup | None = None
        self.open = False  # False: nothing new starts (during recovery and shutdown)
        self.acp = AcpJobs(self, permissions)
        self.prepared = PreparedStarts(self)
        self.stopping: Callable[[], str] = lambda: "discord-watch stopped"
        """Why the engine is leaving (said in the threads whose turns end with it)."""
        self.settling: Callable[[str], bool] = lambda job_id: False  # its turn is being written

    @property
    def env(self) -> Mapping[str, str]:
        """The base environment of every agent (the daemon's, less what is withheld later)."""
        return self._env

    @property
    def environ(self) -> Mapping[str, str]:
        return self._env

    @property
    def tool_env(self) -> Mapping[Tool, Mapping[str, str]]:
        return self._tool_env

    @property
    def state(self) -> RunState:
        return self.journal.state

    def _session_view(self, thread_id: str) -> SessionView:
        return self.state.session_view(self.state.sessions[thread_id])

    async def stop(self, job_id: str) -> None:
        """Stop a running job and wait (bounded) until it is finished."""
        if self.prepared.stop(job_id):
            return
        run = self.runs.get(job_id)
        if run is None:
            return
        if run.stop_reason is None:
            run.stop_reason = "E_STOPPED"
        run.wakeup.set()
        # An agent's cancel grace, then its ending: stdin, SIGTERM, SIGKILL (a grace each).
        bound = 3 * self.limits.kill_grace + 5 + self.limits.agent_cancel_grace
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(bound):
                await run.done.wait()

    def interrupt(self, job_id: str) -> None:
        """Stop a running job because a newer message takes its place (``busy: interrupt``);
        does not wait: the job finishes as stopped, and the queue moves on."""
        if self.prepared.stop(job_id, "E_INTERRUPTED"):
            return
        run = self.runs.get(job_id)
        if run is not None and run.stop_reason is None:
            run.stop_reason = "E_INTERRUPTED"
            run.wakeup.set()

    def steer(self, job_id: str, prompt: str) -> bool:
        """Hand ``prompt`` to the running job's live turn, where its engine can: an ACP agent
        that says it takes prompts mid-turn (:meth:`AcpRun.steer`), a Claude Code job started
        with its input on stdin (:meth:`JobRun.steer`: the project steered when it started).
        True: the running job took it and answers it; False: it cannot, the message queues."""
        run = self.runs.get(job_id)
        return run is not None and run.steer(prompt)

    async def detach(self) -> None:
        """Stop following every running job WITHOUT stopping it (daemon shutdown); a turn that
        cannot outlive the daemon (an ACP agent's: its protocol is our pipe) is ended first,
        and finished as such, so its thread is told why rather than the job reported lost at
        the next start."""
        self.open = False
        await self.prepared.detach()
        await self.end_piped_turns()
        for run in list(self.runs.values()):
            if run.task is not None:
                run.task.cancel()
        for run in list(self.runs.values()):
            if run.task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await run.task
            run.close()
        self.runs.clear()
        await self.acp.hosts.close()  # agents talk over pipes: they cannot outlive us

    async def end_piped_turns(self) -> None:
        """End the turns that cannot outlive this process (an ACP agent's), each finished with
        why (:attr:`stopping`); nothing new starts after it."""
        self.open = False
        await self.acp.end_turns(self.stopping())

    def pump(self) -> None:
        """Start waiting jobs while there is room: oldest first, one per thread (held: timers)."""
        self._pump()
        self.wake.set()

    def _pump(self) -> None:
        now = self.clock.time()
        while (
            self.open and len(self.runs) + len(self.prepared.tasks) < self.limits.global_max_running
        ):
            heads = [  # a worktree's next turn waits for the last one's commit (settling)
                job
                for s in self.state.sessions.values()
                if s.running_job_id is None and s.queue
                if not (s.workdir and s.last_job_id and self.settling(s.last_job_id))
                if (job := self.state.jobs[s.queue[0]]) and _held_until(job) <= now
            ]
            if not heads:
                return
            self._start(min(heads, key=lambda j: j.number))

    async def timers(self) -> None:
        """Start held jobs when their time comes (issue 11: debounce windows, retries, usage
        limits); runs for the engine's lifetime. Checks at least every ``limits.timer_tick``
        seconds while something is held, so an injected clock that jumps is noticed."""
        while True:
            self.wake.clear()
            self._pump()
            now = self.clock.time()
            held = [
                until
                for s in self.state.sessions.values()
                if s.queue and (until := _held_until(self.state.jobs[s.queue[0]])) > now
            ]
            if not held:
                await self.wake.wait()
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(min(held) - now, self.limits.timer_tick)):
                    await self.wake.wait()

    def _start(self, job: Job) -> None:
        session = self.state.sessions[job.thread_id]
        tool = session.tool
        preparer = self.prepared.wants(job.thread_id)
        fresh = preparer is not None and self.prepared.fresh(preparer, job.thread_id)
        resume_key = None if fresh else session.session_key(tool)
        self.journal.append(
            "JobStarted",
            {
                "job_id": job.job_id,
                "tool": tool,
                "project_name": session.project_name,
                "resume_key": resume_key,
            },
        )
        paths = JobPaths.for_job(self.state_dir, job.job_id)
        if preparer is not None:  # its prompt is composed first (issue 25: chat channels)
            self.prepared.start(job, tool, resume_key, paths, preparer)
            self._notices.post("job_started", job.view(), self._session_view(job.thread_id))
            return
        self.launch(job, tool, resume_key, paths)

    def launch(
        self,
        job: Job,
        tool: Tool,
        resume_key: str | None,
        paths: JobPaths,
        turn: PreparedTurn | None = None,
    ) -> None:
        """Start ``job``'s CLI or agent (journaled as started already)."""
        session = self.state.sessions[job.thread_id]
        if not is_builtin(tool):  # an ACP agent (issue 24)
            try:
                check_restricted_engine(job, tool)
                check_agent_network(self, session, tool)
            except RunError as exc:
                self._finish_failed(job.job_id, exc.code, exc.message)
                return
            self.acp.start(job, tool, resume_key, paths, turn)
            if turn is None:
                self._notices.post("job_started", job.view(), self._session_view(job.thread_id))
            return
        try:
            spec, timeout = spawn_spec(self, job, session, tool, resume_key, paths, turn)
            process = self.spawner.spawn(spec)
        except RunError as exc:
            self._finish_failed(job.job_id, exc.code, exc.message)
            return
        except OSError as exc:
            self._finish_failed(job.job_id, "E_SPAWN_FAILED", f"could not start {tool}: {exc}")
            return
        self.journal.append("JobProcessStarted", {"job_id": job.job_id, **process.to_dict()})
        now = self.clock.monotonic()
        self._watch(job, tool, process, paths, started=now, timeout=timeout)
        if turn is None:
            self._notices.post("job_started", job.view(), self._session_view(job.thread_id))

    def _timeout_for(self, session: Session, job: Job) -> float:
        """The job's own timeout, else its run's, else its project's, else the default."""
        asked = job.timeout_s or Constraints.from_dict(session.constraints).timeout_s
        if asked is not None:
            return asked
        try:
            return self.projects.get(session.project_name).job_timeout or self.limits.job_timeout
        except RunError:
            return self.limits.job_timeout

    def _watch(
        self,
        job: Job,
        tool: Tool,
        process: ProcessInfo,
        paths: JobPaths,
        *,
        started: float,
        timeout: float,
        reattached: bool = False,
    ) -> None:
        assert self.group is not None
        began = parse_iso(job.started_at)
        run = JobRun(
            job_id=job.job_id,
            thread_id=job.thread_id,
            tool=tool,
            process=process,
            paths=paths,
            decoder=adapter_for(tool).decoder(),
            resumed=job.resume_key is not None,
            started=started,
            deadline=started + timeout,
            monotonic=self.clock.monotonic,
            reattached=reattached,
            timeout=timeout,
            started_wall=began.timestamp() if began else self.clock.time(),
        )
        try:
            run.stream_on = self.projects.get(job.project_name or "").stream == "on"
        except RunError:
            run.stream_on = False
        self.runs[job.job_id] = run
        run.task = self.group.create_task(self._follow(run), name=f"runs-{job.job_id}")

    async def _follow(self, run: JobRun) -> None:
        """Follow one job until its CLI ends, is stopped, or times out (then finish it)."""
        poll = self.limits.poll_interval
        try:
            while True:
                if run.read_new():
                    run.activity_dirty = True
                if run.decoder.final_seen:
                    run.end_input()  # the turn is over (the wrapper may not have seen it yet)
                self._progress(run)
                ended, code = run.exit_status()
                if ended:
                    run.read_new(final=True)
                    if run.reattached and code is None and not run.decoder.final_seen:
                        # Lost with the old daemon's watch: the crash rule, not a failure.
                        run.close()
                        self.runs.pop(run.job_id, None)
                        self._mark_unknown(run.job_id, run.tool, run.decoder.session_key)
                    else:
                        self._complete(run, run.outcome(code))
                    break
                if run.stop_reason is None and await self._timed_out(run):
                    run.stop_reason = "E_CLI_TIMEOUT"
                if run.stop_reason is not None:
                    await run.terminate(self.limits.kill_grace, poll)
                    run.read_new(final=True)
                    self._complete(run, run.forced_outcome())
                    break
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(poll):
                        await run.wakeup.wait()
                run.wakeup.clear()
        except asyncio.CancelledError:
            raise  # shutdown: detach, the CLI keeps running
        except Exception as exc:  # a bug here must not take the engine down
            log.exception("watching job %s failed", run.job_id)
            if run.job_id in self.runs:
                self._complete(run, _failure("E_INTERNAL", f"the engine lost track: {exc!r}"))
        finally:
            run.done.set()
        await sweep_group(run.process, self.limits.kill_grace, poll, self.clock.monotonic)

    async def _timed_out(self, run: JobRun) -> bool:
        """Whether the job ran past its timeout, not counting its agent's waits for the owner.

        Those waits are asked for every ``wait_check_interval``, and always afresh before a job
        is stopped for time.
        """
        now = self.clock.monotonic()
        checked = run.waited_checked_at
        due = checked is None or now - checked >= self.limits.wait_check_interval
        if due or (now >= run.deadline and checked is not None and checked < now):
            await self._count_waits(run, now)
        return now >= run.deadline

    async def _count_waits(self, run: JobRun, now: float) -> None:
        run.waited_checked_at = now
        if self._owner_wait is None:
            return
        try:
            async with asyncio.timeout(self.limits.notify_timeout):
                waited = await self._owner_wait(run.thread_id, run.started_wall)
        except Exception as exc:  # a broken probe must not stop the job, nor keep it forever
            log.warning("could not tell whether job %s waits for the owner: %s", run.job_id, exc)
            return
        run.waited = max(run.waited, waited)
        run.deadline = run.started + run.timeout + run.waited

    def _progress(self, run: JobRun) -> None:
        key = run.decoder.session_key
        if key is not None and not run.key_journaled:
            run.key_journaled = True
            self.journal.append("JobProgress", {"job_id": run.job_id, "session_key": key})
        now = self.clock.monotonic()
        due = run.activity_sent_at is None or (
            now - run.activity_sent_at >= self.limits.status_interval
        )
        if run.activity_dirty and due:
            run.activity_dirty = False
            run.activity_sent_at = now
            self._notices.activity(run.job_id, run.activity())
        if self.text_held(run) == 0.0:
            stream = run.decoder.stream
            run.stream_sent, run.stream_sent_at = stream.version, now
            self._notices.text(run.job_id, stream.text)

    def text_held(self, run: JobRun) -> float | None:
        """Seconds until the job's newer streamed text may be queued (0: now; None: there is
        none to send): the first at once, then at most every ``TEXT_PACE_S``
        (:mod:`~discord_mcp.runs.engine.streaming`)."""
        if not run.stream_on or run.decoder.stream.version == run.stream_sent:
            return None
        if run.stream_sent_at is None:
            return 0.0
        return max(0.0, run.stream_sent_at + TEXT_PACE_S - self.clock.monotonic())

    def _complete(self, run: JobRun, outcome: Outcome) -> None:
        run.close()
        self.runs.pop(run.job_id, None)
        self._finish(run.job_id, outcome)

    def _finish(self, job_id: str, outcome: Outcome) -> None:
        job = self.state.jobs[job_id]
        if outcome.resume_failed:
            action = "clear"
        elif outcome.session_key:
            action = "set"
        else:
            action = "keep"
        started = parse_iso(job.started_at)
        duration = round(max(0.0, self.clock.time() - started.timestamp()), 3) if started else None
        excerpt = (
            truncate(outcome.final_text.strip(), self.limits.result_excerpt)
            if outcome.final_text
            else None
        )
        failure = None if outcome.ok else classify(outcome, self.clock.time())
        resets = failure.resets_at if failure is not None else None
        self.journal.append(
            "JobCompleted" if outcome.ok else "JobFailed",
            {
                "job_id": job_id,
                "state": "success" if outcome.ok else "failed",
                "error_code": outcome.error_code,
                "error_message": outcome.error_message,
                "session_key": outcome.session_key,
                "session_key_action": action,
                "result_excerpt": excerpt,
                "usage": outcome.usage.to_dict() if outcome.usage else None,
                "cost_usd": outcome.cost_usd,
                "exit_code": outcome.exit_code,
                "duration": duration,
                **({"resets_at": utc_iso(resets)} if resets is not None else {}),
            },
        )
        if outcome.error_code == SILENT_CODE:  # the watchdog: the session ends with the turn
            self.acp.close_silent(job.thread_id)
        if failure is not None and self.after_failure is not None:
            self.after_failure(job_id, failure)
        self._after_finish(job_id, outcome.final_text)

    def _finish_failed(self, job_id: str, code: str, message: str) -> None:
        self._finish(job_id, _failure(code, message))

    def _after_finish(self, job_id: str, final_text: str | None) -> None:
        shutil.rmtree(JobPaths.for_job(self.state_dir, job_id).job_dir, ignore_errors=True)
        job = self.state.jobs.get(job_id)
        preparer = self.prepared.wants(job.thread_id) if job is not None else None
        if (
            job is not None
            and preparer is not None
            and job.tool is not None
            and not is_builtin(job.tool)
            and self.prepared.fresh(preparer, job.thread_id)
            and self.group is not None
        ):  # a chat turn's session ends with it: an agent keeps none for the next
            self.group.create_task(self.acp.release(job.thread_id), name="runs-acp-release")
        if job is not None:
            self._notices.post(
                "job_finished", job.view(final_text=final_text), self._session_view(job.thread_id)
            )
        self.pump()


def _held_until(job: Job) -> float:
    held = parse_iso(job.not_before)
    return held.timestamp() if held is not None else 0.0


def _failure(code: str, message: str) -> Outcome:
    return Outcome(
        ok=False,
        error_code=code,
        error_message=message,
        session_key=None,
        final_text=None,
        usage=None,
        cost_usd=None,
        exit_code=None,
    )
