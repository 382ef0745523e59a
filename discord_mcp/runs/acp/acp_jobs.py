"""Starting and following ACP jobs for the scheduler (see :mod:`discord_mcp.runs.acp.acp_runs`).

The scheduler journals ``JobStarted`` as for any job, then hands an ACP job here: its project
and agent are looked up, the thread's agent host is acquired (started and its session opened
when needed), the prompt runs, and the outcome goes back through the scheduler's own
``_complete``, so journaling, notices, retries and the queue work as for a CLI.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from discord_mcp.errors import RunError, SpawnError
from discord_mcp.runs.acp.acp_endings import SHUTDOWN_CODE, SILENT_CODE
from discord_mcp.runs.acp.acp_runs import AcpRun, AgentHosts
from discord_mcp.runs.acp.agents import AgentRegistry
from discord_mcp.runs.adapters.acp import McpServerSpec
from discord_mcp.runs.adapters.acp_models import AgentModel
from discord_mcp.runs.adapters.base import THREAD_VARIABLE, Outcome, prompt_with_files
from discord_mcp.runs.contract import PermissionAsker, PreparedTurn
from discord_mcp.runs.engine.launch import attached_files, check_tool_enabled, private_dirs, run_cwd
from discord_mcp.runs.journal.model import Job, parse_iso

if TYPE_CHECKING:
    from discord_mcp.runs.engine.scheduling import SchedulerParts
    from discord_mcp.runs.processes.runner import JobPaths

log = logging.getLogger(__name__)
_WITHHELD = frozenset({"DISCORD_BOT_TOKEN"})


class AcpJobs:
    """The ACP side of one scheduler."""

    def __init__(self, scheduler: SchedulerParts, permissions: PermissionAsker | None) -> None:
        self.scheduler = scheduler
        self.permissions = permissions
        self.hosts = AgentHosts(
            logs=scheduler.state_dir / "logs" / "agents",
            limits=scheduler.limits,
            monotonic=scheduler.clock.monotonic,
        )
        self.agents = AgentRegistry(scheduler.state_dir, environ=scheduler.environ)

    def start(
        self,
        job: Job,
        tool: str,
        resume_key: str | None,
        paths: JobPaths,
        turn: PreparedTurn | None = None,
    ) -> None:
        """Start following ``job`` (already journaled as started); ``turn``: its prompt as
        composed when it started (the instructions head it: an agent has no other place)."""
        s = self.scheduler
        assert s.group is not None
        session = s.state.sessions[job.thread_id]
        private_dirs(paths.stdout.parent)
        began = parse_iso(job.started_at)
        try:
            project = s.projects.get(session.project_name)
            timeout = project.job_timeout or s.limits.job_timeout
        except RunError:
            project, timeout = None, s.limits.job_timeout
        run = AcpRun(
            job_id=job.job_id,
            thread_id=job.thread_id,
            project_name=session.project_name,
            tool=tool,
            prompt=_prompt(job, turn),
            stdout=paths.stdout,
            started=s.clock.monotonic(),
            timeout=timeout,
            started_wall=began.timestamp() if began else s.clock.time(),
            monotonic=s.clock.monotonic,
            resumed=resume_key is not None,
        )
        run._grace = s.limits.agent_cancel_grace
        run.kill_grace = s.limits.kill_grace
        run.silence = s.limits.agent_silence
        run.mcp_extra = dict(turn.mcp_env) if turn is not None else {}
        run.stream_on = project is None or project.stream == "on"
        s.runs[job.job_id] = run  # type: ignore[assignment]
        run.task = s.group.create_task(self._follow(run, resume_key), name=f"runs-{job.job_id}")

    async def _follow(self, run: AcpRun, resume_key: str | None) -> None:
        s = self.scheduler
        try:
            outcome = await self._run(run, resume_key)
        except asyncio.CancelledError:
            raise  # shutdown: the hosts are closed by the scheduler
        except Exception as exc:  # a bug here must not take the engine down
            log.exception("running ACP job %s failed", run.job_id)
            outcome = run._failure("E_INTERNAL", f"the engine lost track: {exc!r}")
        finally:
            if run.host is not None:
                run.host.busy = False
                run.host.last_used = s.clock.monotonic()
            run.done.set()
        if run.job_id in s.runs:
            s._progress(run)  # type: ignore[arg-type]
            s._complete(run, outcome)  # type: ignore[arg-type]

    async def _run(self, run: AcpRun, resume_key: str | None) -> Outcome:
        s = self.scheduler
        try:
            session = s.state.sessions[run.thread_id]
            project = s.projects.get(session.project_name)
            check_tool_enabled(run.tool, project.name, project.tools)
            agent = self.agents.get(run.tool)
            cwd = (
                run_cwd(session.workdir) if session.workdir else s.projects.check_path(project.path)
            )
            env = self._env(run)
            host = await self.hosts.acquire(
                thread_id=run.thread_id,
                agent=agent,
                cwd=cwd,
                env=env,
                mcp=self._mcp(run.thread_id, run.mcp_extra),
                resume=resume_key,
                model=session.model,
            )
        except (RunError, SpawnError) as exc:
            return run._failure(exc.code, exc.message)
        host.busy = True
        s.journal.append("JobProcessStarted", {"job_id": run.job_id, "pid": host.process.pid})
        watcher = asyncio.ensure_future(self._watch(run))
        try:
            return await run.turn(host, self.permissions, str(cwd))
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            if not host.process.alive:
                await self.hosts.release(run.thread_id)

    async def _watch(self, run: AcpRun) -> None:
        """Send activity and streamed text as the updates come; stop the turn on timeout."""
        s = self.scheduler
        while True:
            wait = s.limits.wait_check_interval
            held = s.text_held(run)  # type: ignore[arg-type]
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait if held is None else min(wait, held)):
                    await run.changed.wait()
            run.changed.clear()
            s._progress(run)  # type: ignore[arg-type]
            if run.stop_reason is None and await s._timed_out(run):  # type: ignore[arg-type]
                run.stop_reason = "E_CLI_TIMEOUT"
                run.wakeup.set()
            now = s.clock.monotonic()
            if run.stop_reason is None and run.silent_for(now) >= s.limits.agent_silence:
                log.warning("the agent of job %s is silent; the watchdog ends it", run.job_id)
                run.stop_reason = SILENT_CODE
                run.wakeup.set()

    def _env(self, run: AcpRun) -> dict[str, str]:
        s = self.scheduler
        base = {k: v for k, v in s.env.items() if k not in _WITHHELD}
        extra = s.tool_env.get(run.tool, {})
        return {**base, **extra, THREAD_VARIABLE: run.thread_id}

    def _mcp(self, thread_id: str, extra: Mapping[str, str]) -> list[McpServerSpec]:
        mcp = self.scheduler.mcp
        if mcp is None:
            return []
        env = {**mcp.env, **extra, THREAD_VARIABLE: thread_id}
        return [McpServerSpec("discord", mcp.argv[0], tuple(mcp.argv[1:]), env)]

    async def idle(self) -> None:
        """End idle agents; runs for the engine's lifetime."""
        tick = max(1.0, min(30.0, self.scheduler.limits.agent_idle / 4))
        while True:
            await asyncio.sleep(tick)
            await self.hosts.reap_idle()

    async def release(self, thread_id: str) -> None:
        """End the thread's agent (``/session close``, a tool switch)."""
        await self.hosts.release(thread_id)

    async def end_turns(self, reason: str) -> None:
        """End every running ACP turn (the daemon stops: its agents talk over our pipes), each
        finished with ``E_WATCH_STOPPED`` and ``reason``; wait (bounded) until they have."""
        runs: list[object] = list(self.scheduler.runs.values())  # ACP runs sit there as JobRuns
        piped = [run for run in runs if isinstance(run, AcpRun)]
        for run in piped:
            run.shutdown_reason = reason
            if run.stop_reason is None:
                run.stop_reason = SHUTDOWN_CODE
            run.wakeup.set()
        if not piped:
            return
        # Each ends within its cancel grace, then its process's (SIGTERM, SIGKILL); one that
        # does not is cancelled with the rest, and found lost at the next start.
        limits = self.scheduler.limits
        bound = limits.agent_cancel_grace + 3 * limits.kill_grace + 1.0
        waits = {asyncio.ensure_future(run.done.wait()) for run in piped}
        _, late = await asyncio.wait(waits, timeout=bound)
        for waiting in late:
            waiting.cancel()

    def close_silent(self, thread_id: str) -> None:
        """The watchdog ended the thread's turn: its session closes, its waiting jobs go."""
        s = self.scheduler
        session = s.state.sessions.get(thread_id)
        if session is None or session.closed:
            return
        for waiting in list(session.queue):
            s.journal.append("JobCancelled", {"job_id": waiting})
        s.journal.append("SessionClosed", {"thread_id": thread_id})

    def models(self, agent: str) -> tuple[AgentModel, ...]:
        """The models ``agent``'s sessions offered, as last seen (empty: none yet, or none)."""
        menu = self.hosts.offered.get(agent)
        return menu.models if menu is not None else ()


def _prompt(job: Job, turn: PreparedTurn | None) -> str:
    if turn is None:
        return prompt_with_files(job.prompt, attached_files(job.attachments))
    prompt = prompt_with_files(turn.prompt, attached_files(job.attachments))
    if not turn.instructions:
        return prompt
    return f"{turn.instructions.rstrip()}\n\n---\n\n{prompt}"
