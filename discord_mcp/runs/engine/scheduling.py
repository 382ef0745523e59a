"""What the scheduler's helpers need of it: :class:`~discord_mcp.runs.acp.acp_jobs.AcpJobs`
(an ACP agent's jobs) and :class:`~discord_mcp.runs.engine.prepared.PreparedStarts` (turns
composed when they start) are handed the :class:`~discord_mcp.runs.engine.scheduler.Scheduler`
that owns them, and see it as a :class:`SchedulerParts`. The lower modules define what they
need; nothing imports the scheduler back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from discord_mcp.runs.adapters.base import McpRegistration, Outcome
from discord_mcp.runs.contract import Clock, PreparedTurn, RunLimits
from discord_mcp.runs.journal.journal import Journal
from discord_mcp.runs.journal.model import Job, RunState, Session
from discord_mcp.runs.journal.views import SessionView, Tool
from discord_mcp.runs.processes.runner import JobPaths, JobRun
from discord_mcp.runs.processes.spawner import Spawner
from discord_mcp.runs.projects import ProjectRegistry


class SchedulerParts(Protocol):
    """The scheduler, as the jobs it starts through its helpers use it."""

    state_dir: Path
    journal: Journal
    projects: ProjectRegistry
    spawner: Spawner
    clock: Clock
    limits: RunLimits
    mcp: McpRegistration | None
    runs: dict[str, JobRun]
    group: asyncio.TaskGroup | None

    @property
    def state(self) -> RunState: ...

    @property
    def env(self) -> Mapping[str, str]: ...

    @property
    def environ(self) -> Mapping[str, str]: ...

    @property
    def tool_env(self) -> Mapping[Tool, Mapping[str, str]]: ...

    def launch(
        self,
        job: Job,
        tool: Tool,
        resume_key: str | None,
        paths: JobPaths,
        turn: PreparedTurn | None = None,
    ) -> None: ...

    def text_held(self, run: JobRun) -> float | None: ...

    def _session_view(self, thread_id: str) -> SessionView: ...

    def _timeout_for(self, session: Session, job: Job) -> float: ...

    async def _timed_out(self, run: JobRun) -> bool: ...

    def _progress(self, run: JobRun) -> None: ...

    def _complete(self, run: JobRun, outcome: Outcome) -> None: ...

    def _finish_failed(self, job_id: str, code: str, message: str) -> None: ...
