"""The run engine of ``discord-watch``: Discord threads are agent sessions, owner messages are
jobs, and each job is one headless ``claude`` / ``codex`` / ``gemini`` turn (seed 000).

No Discord code lives here: the watch daemon calls :class:`RunEngine` and implements
:class:`RunNotifier` to post what happens.

- ``projects``: the project catalog (``runs/config.json``).
- ``model``: the state machine and its one reducer; ``records``: sessions and jobs in it;
  ``views``: what callers see.
- ``journal``: ``runs/events.ndjson`` + ``runs/snapshot.json``, replay at startup.
- ``contract``: the limits, the clock, and the notifier the Discord side implements.
- ``engine``: the commands (``controls``: the owner's) and views (``engine_views``);
  ``scheduler``: starting, following and finishing jobs (``recovery``: after a restart);
  ``runner``: one running job's log and process; ``notices``: delivering notifications;
  ``launch``: private files and the engine lock.
- Run folders (issue 23): ``folders`` (the layout, the request queue, reading), ``recorder``
  (keeping them up to date), ``results``, ``transcript``, ``patches``, ``schemas/``;
  ``constraints`` (network, time) and ``error_codes`` (stable codes, ``retryable``).
- ``spawner``: the one place child processes start; ``wrap``: the per-job wrapper process.
- ``adapters``: one per CLI (argv, tolerant decoding, success judgement).
"""

from __future__ import annotations

from discord_mcp.runs.adapters.base import McpRegistration
from discord_mcp.runs.contract import (
    Clock,
    OwnerWait,
    ProjectStatus,
    RunLimits,
    RunNotifier,
    SystemClock,
)
from discord_mcp.runs.engine.engine import RunEngine
from discord_mcp.runs.journal.model import TOOLS
from discord_mcp.runs.journal.views import (
    Activity,
    JobState,
    JobView,
    SessionState,
    SessionView,
    Tool,
    ToolCallSummary,
    Usage,
)
from discord_mcp.runs.processes.spawner import ProcessSpawner, Spawner, SpawnSpec
from discord_mcp.runs.projects import Project, ProjectRegistry

__all__ = [
    "TOOLS",
    "Activity",
    "Clock",
    "JobState",
    "JobView",
    "McpRegistration",
    "OwnerWait",
    "ProcessSpawner",
    "Project",
    "ProjectRegistry",
    "ProjectStatus",
    "RunEngine",
    "RunLimits",
    "RunNotifier",
    "SessionState",
    "SessionView",
    "SpawnSpec",
    "Spawner",
    "SystemClock",
    "Tool",
    "ToolCallSummary",
    "Usage",
]
