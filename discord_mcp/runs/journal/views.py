"""What callers see of the run state: frozen snapshots, never the state itself.

The field names follow seed 000 §5.2 and §10.2 (``/status`` and the snapshot format).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Tool = str
"""A tool's name: one of the three headless CLIs (:data:`BUILTIN_TOOLS`) or a registered ACP
agent's name (:mod:`discord_mcp.runs.acp.agents`)."""
BuiltinTool = Literal["claude", "codex", "gemini"]
JobState = Literal["queued", "running", "success", "failed", "unknown_after_crash", "cancelled"]
SessionState = Literal["idle", "running", "queued", "failed", "unknown_after_crash"]
RETRYABLE_STATES: frozenset[str] = frozenset({"failed", "unknown_after_crash"})


@dataclass(frozen=True)
class Usage:
    """Token counts a CLI reported for one job (None where it reported nothing)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    total_tokens: int | None = None
    cache_write_tokens: int | None = None  # input written to the prompt cache (Claude only)
    context_used: int | None = None  # tokens in the context window at the end (ACP agents)
    context_size: int | None = None  # the context window's size

    def to_dict(self) -> dict[str, int]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Usage | None:
        if not data:
            return None
        return cls(**{k: int(v) for k, v in data.items() if k in _USAGE_FIELDS})


_USAGE_FIELDS = frozenset(
    {
        "input_tokens",
        "output_tokens",
        "cached_input_tokens",
        "total_tokens",
        "cache_write_tokens",
        "context_used",
        "context_size",
    }
)


@dataclass(frozen=True)
class ToolCallSummary:
    """One tool call a CLI made: its name as the CLI reports it, and a short argument summary."""

    name: str
    summary: str


@dataclass(frozen=True)
class Activity:
    """What a running job is doing, for a status message (sent at most every status interval).

    Attributes:
        job_id: the job.
        elapsed: seconds since the CLI started.
        tool_calls: the most recent tool calls (at most 20), oldest first.
        tool_call_count: all tool calls seen so far.
        last_text: the latest assistant text, truncated.
        note: the latest notable thing that is not text: an API retry, a refused permission,
            an error line the CLI printed while carrying on.
        session_key: the CLI session key, once the CLI has reported it.
        events_seen: JSON events decoded so far.
    """

    job_id: str
    elapsed: float
    tool_calls: tuple[ToolCallSummary, ...]
    tool_call_count: int
    last_text: str | None
    note: str | None
    session_key: str | None
    events_seen: int


@dataclass(frozen=True)
class JobView:
    """A job as callers see it (seed 000 §10.2, plus outcome details).

    ``final_text`` (the CLI's whole final answer) is only set in the view passed to
    ``RunNotifier.job_finished``; the state keeps ``result_excerpt`` (its first
    ``limits.result_excerpt`` characters) and the raw output stays in the job's stdout log
    (:meth:`RunEngine.final_text` decodes it again).
    """

    job_id: str
    thread_id: str
    message_id: str
    author: str
    prompt: str
    state: JobState
    attempt: int
    retry_of: str | None
    retried_by: str | None
    tool: Tool | None  # decided when the job starts
    project_name: str | None
    error_code: str | None
    error_message: str | None
    enqueued_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    duration: float | None  # seconds the CLI ran
    session_key: str | None
    resumed: bool  # the job continued an existing CLI session
    result_excerpt: str | None
    usage: Usage | None
    cost_usd: float | None
    exit_code: int | None
    pid: int | None
    reattached: bool  # picked up again after a daemon restart
    final_text: str | None = None
    not_before: dt.datetime | None = None  # a queued job waits until then (debounce, a hold)
    reason: str | None = None  # a retry's reason: "manual", "temporary", "usage_limit"
    resets_at: dt.datetime | None = None  # a failed job's usage limit resets then
    restricted: bool = False  # a stranger's turn (issue 25, runs/restricted.py)
    message_ids: tuple[str, ...] = ()  # its message first, then those merged or steered in

    @property
    def retryable(self) -> bool:
        return self.state in RETRYABLE_STATES and self.retried_by is None


@dataclass(frozen=True)
class SessionView:
    """A thread session as ``!status`` shows it (seed 000 §5.2; state derived as §12.2).

    ``session_key`` and ``resume_ready`` are for the current tool. ``retry_job_id`` is the
    job to name in a retry hint when the last job failed or was lost in a crash.
    """

    thread_id: str
    project_name: str
    tool: Tool
    session_key: str | None
    session_keys: Mapping[str, str]
    state: SessionState
    pending: int
    queued_job_ids: tuple[str, ...]
    running_job_id: str | None
    last_job: JobView | None
    resume_ready: bool
    retry_job_id: str | None
    created_at: dt.datetime
    updated_at: dt.datetime
    last_activity_at: dt.datetime
    model: str | None = None  # None: the CLI's own default
    closed: bool = False  # closed sessions take no new jobs until reopened
    held_until: dt.datetime | None = None  # the next job waits until then
    run_id: str | None = None  # the run folder ``runs/<run_id>/`` (issue 23)
    constraints: Mapping[str, Any] = field(default_factory=dict)  # allow_network, timeout_s
    workdir: str | None = None  # the run's own worktree folder (issue 35); None: the project's
    landed: str | None = None  # its worktree was "merged", "discarded" (gone) or sent as a "pr"
