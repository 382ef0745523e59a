"""How a job's CLI is invoked, and the jobs whose prompt is composed when they start.

A thread whose turns a :class:`~discord_mcp.runs.contract.TurnPreparer` composes (a chat
channel of the watch daemon, issue 25) starts each job in two steps: the job is journaled as
started at once (it holds its thread and a slot like any running job), then its prompt is
composed (which may read Discord, bounded by ``limits.prepare_timeout``), then its CLI or agent
is launched as any other. A job stopped while its prompt is being composed ends as stopped; a
composition that fails fails the job (E_PREPARE_FAILED). A restricted job (a stranger's turn)
runs only on an engine that can be locked down (:mod:`discord_mcp.runs.restricted`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import TYPE_CHECKING

from discord_mcp.errors import RunError
from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.base import (
    ARTIFACTS_VARIABLE,
    THREAD_VARIABLE,
    InvocationRequest,
    check_no_secrets_in_argv,
)
from discord_mcp.runs.adapters.codex_home import VARIABLE as CODEX_HOME
from discord_mcp.runs.adapters.codex_home import chat_home
from discord_mcp.runs.constraints import Constraints
from discord_mcp.runs.contract import PreparedTurn, TurnPreparer
from discord_mcp.runs.engine.controls import with_model
from discord_mcp.runs.engine.launch import (
    attached_files,
    check_tool_enabled,
    private_dirs,
    run_cwd,
    write_private,
)
from discord_mcp.runs.folders.folders import RunFolder
from discord_mcp.runs.journal.model import STOPPED_CODE, Job, Session
from discord_mcp.runs.journal.views import Tool
from discord_mcp.runs.processes.runner import JobPaths
from discord_mcp.runs.processes.spawner import SpawnSpec
from discord_mcp.runs.processes.wrap import FIRST_INPUT
from discord_mcp.runs.restricted import check_engine

if TYPE_CHECKING:
    from discord_mcp.runs.engine.scheduling import SchedulerParts

log = logging.getLogger(__name__)

NAMESPACED = frozenset({"claude", "gemini"})
"""The CLIs whose commands a run without network puts in a namespace (Codex has its sandbox)."""
WITHHELD_VARIABLES = frozenset({"DISCORD_BOT_TOKEN"})
"""Never in a CLI's environment: an agent's shell can print it. The run's discord-mcp server
gets the token by reference (``DISCORD_MCP_ENV_FILE``)."""


def spawn_spec(
    s: SchedulerParts,
    job: Job,
    session: Session,
    tool: Tool,
    resume_key: str | None,
    paths: JobPaths,
    turn: PreparedTurn | None = None,
) -> tuple[SpawnSpec, float]:
    """The spawn spec of ``job``'s CLI and its timeout (the project's, or the default).

    Raises:
        RunError: the project, the tool or the constraints do not allow the run.
    """
    project = s.projects.get(session.project_name)
    check_tool_enabled(tool, project.name, project.tools)
    if job.restricted:
        check_engine(tool)
    cwd = run_cwd(session.workdir) if session.workdir else s.projects.check_path(project.path)
    constraints = Constraints.from_dict(session.constraints)
    offline = not (constraints.allow_network and project.allow_network)
    base = {k: v for k, v in s.env.items() if k not in WITHHELD_VARIABLES}
    env = {**base, **s.tool_env.get(tool, {}), THREAD_VARIABLE: session.thread_id}
    if tool == "codex" and turn is not None and turn.own_folder is not None:
        env[CODEX_HOME] = str(chat_home(turn.own_folder, env))  # never the owner's
    if session.run_id:  # Gemini's shared settings name it as ${...}: each run's own
        env[ARTIFACTS_VARIABLE] = str(RunFolder.of(s.state_dir, session.run_id).artifacts)
    private_dirs(paths.job_dir)
    private_dirs(paths.stdout.parent)
    # No network: the agent's commands get a namespace (runs/offline.py); probed before it starts.
    jail = (
        s.spawner.network_jail() if offline and tool in NAMESPACED and not job.restricted else None
    )
    invocation = adapter_for(tool).invocation(
        InvocationRequest(
            executable=tool,
            prompt=turn.prompt if turn is not None else job.prompt,
            resume_key=resume_key,
            default_args=with_model(project.args_for(tool), session.model),
            job_dir=paths.job_dir,
            shared_dir=s.state_dir / "runs" / "cli-homes",
            thread_id=session.thread_id,
            env=env,
            mcp=s.mcp,
            attachments=attached_files(job.attachments),
            approvals=project.approvals,
            allow_network=not offline,
            workdir=cwd,
            artifacts_dir=RunFolder.of(s.state_dir, session.run_id).artifacts
            if session.run_id
            else None,
            stream=project.stream == "on",
            # A chat turn takes messages mid-turn where its engine can (Claude Code's stdin).
            steer=project.busy == "steer" or turn is not None,
            instructions=turn.instructions if turn is not None else None,
            restricted=job.restricted,
            mcp_extra=dict(turn.mcp_env) if turn is not None else {},
            jail=jail,
        )
    )
    secrets = {**(s.mcp.env if s.mcp else {}), **invocation.env}
    check_no_secrets_in_argv(invocation.argv, secrets)
    for path, content in invocation.files.items():
        write_private(path, content)
    for path, content in invocation.programs.items():
        write_private(path, content, executable=True)
    if invocation.input is not None:  # the prompt, on stdin (see runs/processes/wrap.py)
        write_private(paths.input / FIRST_INPUT, invocation.input)
    for link, target in invocation.links.items():
        private_dirs(link.parent)
        with contextlib.suppress(FileExistsError):
            os.symlink(target, link)
    spec = SpawnSpec(
        job_id=job.job_id,
        tool=tool,
        argv=invocation.argv,
        cwd=cwd,
        env={k: v for k, v in {**env, **invocation.env}.items() if k not in WITHHELD_VARIABLES},
        stdout_path=paths.stdout,
        stderr_path=paths.stderr,
        status_path=paths.status,
        input_dir=paths.input if invocation.input is not None else None,
    )
    return spec, s._timeout_for(session, job)


class PreparedStarts:
    """The jobs of one scheduler whose prompt is being composed (see the module doc)."""

    def __init__(self, scheduler: SchedulerParts) -> None:
        self.scheduler = scheduler
        self.preparer: TurnPreparer | None = None
        self.tasks: dict[str, asyncio.Task[None]] = {}

    def wants(self, thread_id: str) -> TurnPreparer | None:
        """The preparer of ``thread_id``'s turns, if it has one (never raises)."""
        preparer = self.preparer
        if preparer is None:
            return None
        try:
            return preparer if preparer.prepares(thread_id) else None
        except Exception:  # a broken preparer must not stop the engine; the job runs plain
            log.exception("asking whether thread %s composes its turns failed", thread_id)
            return None

    def fresh(self, preparer: TurnPreparer, thread_id: str) -> bool:
        try:
            return preparer.fresh(thread_id)
        except Exception:
            log.exception("asking whether thread %s keeps its session failed", thread_id)
            return True

    def start(
        self,
        job: Job,
        tool: Tool,
        resume_key: str | None,
        paths: JobPaths,
        preparer: TurnPreparer,
    ) -> None:
        """Compose ``job``'s prompt (already journaled as started), then launch it."""
        group = self.scheduler.group
        assert group is not None
        self.tasks[job.job_id] = group.create_task(
            self._start(job.job_id, tool, resume_key, paths, preparer),
            name=f"runs-prepare-{job.job_id}",
        )

    async def _start(
        self,
        job_id: str,
        tool: Tool,
        resume_key: str | None,
        paths: JobPaths,
        preparer: TurnPreparer,
    ) -> None:
        s = self.scheduler
        job = s.state.jobs[job_id]
        try:
            async with asyncio.timeout(s.limits.prepare_timeout):
                turn = await preparer.prepare(job.view(), s._session_view(job.thread_id))
        except asyncio.CancelledError:
            self.tasks.pop(job_id, None)
            raise
        except Exception as exc:
            self.tasks.pop(job_id, None)
            log.warning("composing the prompt of job %s failed: %r", job_id, exc)
            what = "it took too long" if isinstance(exc, TimeoutError) else str(exc) or repr(exc)
            s._finish_failed(job_id, "E_PREPARE_FAILED", f"the turn could not be composed: {what}")
            return
        self.tasks.pop(job_id, None)
        current = s.state.jobs.get(job_id)
        if current is None or current.state != "running":
            return
        s.launch(current, tool, resume_key, paths, turn)

    def stop(self, job_id: str, code: str = STOPPED_CODE) -> bool:
        """End a job whose prompt is still being composed; False when it is not one."""
        task = self.tasks.pop(job_id, None)
        if task is None:
            return False
        task.cancel()
        why = "interrupted by a newer message" if code == "E_INTERRUPTED" else "stopped on request"
        self.scheduler._finish_failed(job_id, code, f"the turn was {why} before it began")
        return True

    async def detach(self) -> None:
        """Shutdown: stop composing (the jobs stay running in the journal, lost at the next
        start like any job whose CLI never began)."""
        tasks = list(self.tasks.values())
        self.tasks.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


def check_restricted_engine(job: Job, tool: Tool) -> None:
    """Raises RunError E_RESTRICTED_NOT_ENFORCEABLE for a restricted job on an ACP agent."""
    if job.restricted:
        check_engine(tool)


def check_agent_network(s: SchedulerParts, session: Session, tool: Tool) -> None:
    """Refuse a run without network on an ACP agent: its own tools reach the network from its
    own process, which needs its model API, so no namespace can hold it.

    Raises:
        RunError: E_NETWORK_NOT_ENFORCEABLE.
    """
    constraints = Constraints.from_dict(session.constraints)
    try:
        project_allows = s.projects.get(session.project_name).allow_network
    except RunError:
        project_allows = False
    if not (constraints.allow_network and project_allows):
        raise RunError(
            "E_NETWORK_NOT_ENFORCEABLE",
            f"the run asks for no network, and {tool} is an ACP agent whose own tools reach "
            "the network from its own process: use claude, codex or gemini, or run with "
            "network",
        )


__all__ = [
    "WITHHELD_VARIABLES",
    "PreparedStarts",
    "RunError",
    "check_agent_network",
    "check_restricted_engine",
]
