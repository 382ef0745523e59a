"""The run engine's public contract besides the engine itself: its limits, its clock, the
notifier the Discord side implements, and the project summary. An ACP agent's permission asks
are the approvals' (:mod:`discord_mcp.approvals.asks`, re-exported here)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from discord_mcp.runs.journal.views import Activity, JobView, SessionView

if TYPE_CHECKING:
    from discord_mcp.approvals.asks import FileDiff as FileDiff
    from discord_mcp.approvals.asks import PermissionAsk as PermissionAsk
    from discord_mcp.approvals.asks import PermissionAsker as PermissionAsker
    from discord_mcp.approvals.asks import PermissionChoice as PermissionChoice
    from discord_mcp.approvals.asks import PermissionOption as PermissionOption

_FROM_APPROVALS = frozenset(
    {"FileDiff", "PermissionAsk", "PermissionAsker", "PermissionChoice", "PermissionOption"}
)


def __getattr__(name: str) -> Any:
    """The approval asks, re-exported when first asked for (PEP 562): importing them loads the
    approval machinery (its decision kind, cards, httpx), which a ``discord-watch`` command that
    needs only :class:`RunLimits` should not pay for."""
    if name not in _FROM_APPROVALS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from discord_mcp.approvals import asks

    value = getattr(asks, name)
    globals()[name] = value
    return value


@dataclass(frozen=True)
class RunLimits:
    """The engine's constants (seed 000 §13), plus the bounds of its own waits."""

    global_max_running: int = 2
    queue_cap: int = 20  # waiting jobs per thread (the running one not counted)
    job_timeout: float = 900.0  # seconds per job from the CLI's start (a project may differ),
    # not counting the time its agent waits for the owner (see OwnerWait)
    wait_check_interval: float = 2.0  # how often a running job asks whether it waits
    status_interval: float = 1.2  # at most one job_activity per job per interval
    result_excerpt: int = 400
    snapshot_every_events: int = 50
    snapshot_every_seconds: float = 5.0
    kill_grace: float = 5.0  # SIGTERM to SIGKILL
    poll_interval: float = 0.05  # how often a running job's log and process are checked
    notify_timeout: float = 10.0  # per notifier call
    shutdown_timeout: float = 5.0  # for notifications still queued at shutdown
    keep_finished_jobs: int = 200  # per thread, in the state (older ones are dropped)
    # The owner's controls (issue 11), see discord_mcp/runs/engine/controls.py.
    debounce: float = 0.0  # messages this close together in one thread become one job
    retry_temporary: bool = True  # run a job once more when it failed on a temporary error
    retry_pause: float = 5.0  # seconds before that second attempt
    max_holds: int = 5  # usage-limit holds in a row before a job just fails
    timer_tick: float = 1.0  # how often waiting jobs' start times are checked at most
    # ACP agents (issue 24), see discord_mcp/runs/acp/acp_runs.py.
    agent_idle: float = 600.0  # an agent process with no turn for this long is ended
    agent_cancel_grace: float = 10.0  # after session/cancel, how long until the process ends
    agent_request_timeout: float = 120.0  # initialize, session/new, session/load
    # The watchdog (issue 34, seed 003): an ACP turn with no session/update for this long
    # (the owner's answer to a permission request not counted) ends its session.
    agent_silence: float = 1800.0
    # Chat channels (issue 25): a turn's prompt is composed when it starts.
    prepare_timeout: float = 30.0  # reading the channel's history, the persona files


class Clock(Protocol):
    """Time as the engine sees it (inject a fake in tests)."""

    def time(self) -> float:
        """Wall-clock seconds since the epoch (timestamps)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never jumps (intervals, deadlines)."""
        ...


class SystemClock:
    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


OwnerWait = Callable[[str, float], Awaitable[float]]
"""``await owner_wait(thread_id, since)``: how many seconds the agent running in ``thread_id``
has waited for the owner (a question pending in that thread) since the wall-clock time
``since`` (the job's start). That time does not count against the job's timeout."""


class RunNotifier(Protocol):
    """What the engine tells the Discord side (each call bounded; exceptions are logged)."""

    async def job_queued(self, job: JobView, position: int) -> None:
        """A job was accepted; ``position`` is its 1-based place in the thread's queue."""
        ...

    async def job_started(self, job: JobView, session: SessionView) -> None:
        """The job's CLI started (``job.reattached``: picked up again after a restart)."""
        ...

    async def job_activity(self, job: JobView, activity: Activity) -> None:
        """Progress of a running job, at most every ``limits.status_interval`` per job."""
        ...

    async def job_text(self, job: JobView, text: str) -> None:
        """The agent's answer so far (the project streams it): the whole text, newest only."""
        ...

    async def job_finished(self, job: JobView, session: SessionView) -> None:
        """success, failed (``error_code``, ``error_message``) or unknown_after_crash;
        ``job.final_text`` holds the CLI's whole answer when there is one."""
        ...


@dataclass(frozen=True)
class ProjectStatus:
    """Seed 000 §11.3."""

    project_name: str
    session_total: int
    running_sessions: int
    queued_jobs: int
    failed_jobs_24h: int
    last_error: str | None


@dataclass(frozen=True)
class PreparedTurn:
    """A turn's prompt as composed when it starts (:class:`TurnPreparer`).

    ``prompt`` replaces the job's stored text for this turn; ``instructions`` are added to the
    agent's own instructions (Claude Code ``--append-system-prompt``, Codex
    ``developer_instructions``; the other engines get them at the head of the prompt).
    """

    prompt: str
    instructions: str | None = None
    mcp_env: Mapping[str, str] = field(default_factory=dict)
    """More variables for the turn's discord server (where it marks that its agent spoke)."""
    own_folder: Path | None = None
    """The folder of the conversation the turn belongs to (a chat channel's): its Codex gets a
    home of its own there, never the owner's (:mod:`discord_mcp.runs.codex_home`)."""


class TurnPreparer(Protocol):
    """Composes the turns of some threads when they start (the watch daemon's chat channels).

    ``prepares`` and ``fresh`` are asked synchronously when a job of the thread is about to
    start (they read settings kept in memory or on disk, nothing remote); ``prepare`` may read
    Discord, and is bounded by ``limits.prepare_timeout``: a failure fails the job.
    """

    def prepares(self, thread_id: str) -> bool:
        """Whether this thread's turns are composed here."""
        ...

    def fresh(self, thread_id: str) -> bool:
        """Whether each turn starts a new agent session (none is resumed)."""
        ...

    async def prepare(self, job: JobView, session: SessionView) -> PreparedTurn:
        """The turn's prompt (``job.prompt`` holds the messages it answers)."""
        ...
