"""The run engine's records: a process, a job, a session (mutable, internal to the state).

They are changed only by the reducer (:class:`discord_mcp.runs.journal.model.RunState`) and
serialized in the snapshot; callers get views (:mod:`discord_mcp.runs.journal.views`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from discord_mcp.runs.journal.views import JobState, JobView, Tool, Usage

# The name each CLI gives its session key (seed 000 §4.2).
SESSION_KEY_NAMES: Mapping[str, str] = {
    "claude": "session_id",
    "codex": "thread_id",
    "gemini": "session_id",
}


def utc_iso(seconds: float) -> str:
    """``2026-02-26T14:21:00.000Z`` for a wall-clock time in seconds since the epoch."""
    moment = dt.datetime.fromtimestamp(seconds, tz=dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_iso(text: str | None) -> dt.datetime | None:
    if text is None:
        return None
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


# --------------------------------------------------------------------------------------------
# Mutable records (internal)


@dataclass
class ProcessInfo:
    """Who runs a job's CLI: the wrapper process (group leader), told apart from a reused pid
    by its start time (``/proc/<pid>/stat`` field 22) and the boot it belongs to."""

    pid: int
    start_time: int | None
    boot_id: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "start_time": self.start_time, "boot_id": self.boot_id}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProcessInfo:
        return cls(int(data["pid"]), data.get("start_time"), data.get("boot_id"))


@dataclass
class Job:
    job_id: str
    number: int  # enqueue order, across all threads
    thread_id: str
    message_id: str
    author: str
    prompt: str
    attempt: int
    retry_of: str | None
    enqueued_at: str
    state: JobState = "queued"
    retried_by: str | None = None
    tool: Tool | None = None
    project_name: str | None = None
    resume_key: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    duration: float | None = None
    session_key: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    result_excerpt: str | None = None
    usage: dict[str, int] | None = None
    cost_usd: float | None = None
    exit_code: int | None = None
    process: ProcessInfo | None = None
    reattached: bool = False
    # The owner's controls (issue 11).
    not_before: str | None = None  # held (debounce window, usage limit) until then
    reason: str | None = None  # why a retry exists: "manual", "temporary", "usage_limit"
    resets_at: str | None = None  # a usage limit's reset time the CLI reported
    message_ids: list[str] = field(default_factory=list)  # more messages merged into it
    attachments: list[dict[str, Any]] = field(default_factory=list)
    """The owner's files for this job (entries of :mod:`discord_mcp.files.store`)."""
    timeout_s: float | None = None  # this turn's own time limit (``resume --timeout``)
    restricted: bool = False
    """A stranger's turn (issue 25): no shell, no writes, no network, only the chat tools
    (:mod:`discord_mcp.runs.restricted`). Once set, never cleared."""

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["discord_message_id"] = data.pop("message_id")
        data["process"] = self.process.to_dict() if self.process else None
        data["message_ids"] = list(self.message_ids)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Job:
        fields_ = dict(data)
        fields_["message_id"] = fields_.pop("discord_message_id")
        process = fields_.pop("process", None)
        job = cls(**fields_)
        job.process = ProcessInfo.from_dict(process) if process else None
        return job

    def view(self, *, final_text: str | None = None) -> JobView:
        enqueued = parse_iso(self.enqueued_at)
        assert enqueued is not None
        return JobView(
            job_id=self.job_id,
            thread_id=self.thread_id,
            message_id=self.message_id,
            author=self.author,
            prompt=self.prompt,
            state=self.state,
            attempt=self.attempt,
            retry_of=self.retry_of,
            retried_by=self.retried_by,
            tool=self.tool,
            project_name=self.project_name,
            error_code=self.error_code,
            error_message=self.error_message,
            enqueued_at=enqueued,
            started_at=parse_iso(self.started_at),
            finished_at=parse_iso(self.finished_at),
            duration=self.duration,
            session_key=self.session_key,
            resumed=self.resume_key is not None,
            result_excerpt=self.result_excerpt,
            usage=Usage.from_dict(self.usage),
            cost_usd=self.cost_usd,
            exit_code=self.exit_code,
            pid=self.process.pid if self.process else None,
            reattached=self.reattached,
            final_text=final_text,
            not_before=parse_iso(self.not_before),
            reason=self.reason,
            resets_at=parse_iso(self.resets_at),
            restricted=self.restricted,
            message_ids=(self.message_id, *self.message_ids),
        )


@dataclass
class Session:
    thread_id: str
    project_name: str
    tool: Tool
    created_at: str
    updated_at: str
    last_activity_at: str
    adapter_state: dict[str, dict[str, str]] = field(default_factory=dict)
    queue: list[str] = field(default_factory=list)
    running_job_id: str | None = None
    last_job_id: str | None = None
    finished_job_ids: list[str] = field(default_factory=list)
    model: str | None = None  # passed as --model to every job (None: the CLI's default)
    closed: bool = False
    # Issue 23: the run this session is (its folder ``runs/<run_id>/``), and the constraints
    # every job of it runs under (``allow_network``, ``timeout_s``; None: the project's).
    run_id: str | None = None
    constraints: dict[str, Any] | None = None
    # Issue 35: the run's own git worktree (where its CLI works), and what became of it.
    workdir: str | None = None
    landed: str | None = None

    def session_key(self, tool: Tool) -> str | None:
        return self.adapter_state.get(tool, {}).get(SESSION_KEY_NAMES.get(tool, "session_id"))

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["adapter_state"] = {k: dict(v) for k, v in self.adapter_state.items()}
        data["queue"] = list(self.queue)
        data["finished_job_ids"] = list(self.finished_job_ids)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Session:
        session = cls(**dict(data))
        session.adapter_state = {k: dict(v) for k, v in session.adapter_state.items()}
        session.queue = list(session.queue)
        session.finished_job_ids = list(session.finished_job_ids)
        return session
