"""The run engine of ``discord-watch``: Discord threads are agent sessions, owner messages are
jobs, and each job is one headless ``claude`` / ``codex`` / ``gemini`` turn (seed 000).

No Discord code lives here: the watch daemon calls :class:`RunEngine` and implements
:class:`RunNotifier` to post what happens. The rooms:

- ``engine/``: the commands (``engine``; ``controls`` the owner's), the scheduler (starting,
  following and finishing jobs; ``recovery`` after a restart; ``prepared`` turns composed when
  they start), notifications, schedules, the streamed text.
- ``processes/``: ``spawner`` the one place child processes start, ``wrap`` the per-job wrapper
  process, ``runner`` one running job's log and process.
- ``journal/``: ``runs/events.ndjson`` + ``runs/snapshot.json`` (``journal`` writes,
  ``journal_replay`` reads back), ``model`` the state machine and its one reducer, ``records``
  and ``views``.
- ``folders/``: run folders (issue 23): the layout and the request queue, the recorder, the
  result contract (``results``, ``error_codes``, ``schemas/``), transcripts, patches, retention.
- ``adapters/``: one per CLI (argv, tolerant decoding, success judgement), and ACP's wire side.
- ``acp/``: ACP agents (issue 24): the registry and their jobs.
- ``git/``: a worktree per run and landing it (issue 35); the one place git and gh start.
- Here: ``contract`` (the limits, the clock, the notifier the Discord side implements),
  ``projects`` (the project catalog, ``runs/config.json``), ``constraints`` (network, time),
  ``restricted`` (what a stranger's turn may do), ``offline`` and ``netns`` (no network).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES = {
    "McpRegistration": "adapters.base",
    **dict.fromkeys(
        ["Clock", "OwnerWait", "ProjectStatus", "RunLimits", "RunNotifier", "SystemClock"],
        "contract",
    ),
    "RunEngine": "engine.engine",
    "TOOLS": "journal.model",
    **dict.fromkeys(
        [
            "Activity",
            "JobState",
            "JobView",
            "SessionState",
            "SessionView",
            "Tool",
            "ToolCallSummary",
            "Usage",
        ],
        "journal.views",
    ),
    **dict.fromkeys(["ProcessSpawner", "Spawner", "SpawnSpec"], "processes.spawner"),
    **dict.fromkeys(["Project", "ProjectRegistry"], "projects"),
}
"""Where each name below lives. They load when first asked for (PEP 562), not with the
package: a module deep in ``runs`` (``journal.model`` for a ``discord-watch`` command that only
lists projects) would otherwise load the engine, the adapters and the approval machinery."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


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
