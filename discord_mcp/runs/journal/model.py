"""Sessions and jobs: the state machine and the one reducer that changes it.

Theory. A Discord thread is a session (seed 000 §2.3): it is bound to a project and a tool, and
keeps one CLI session key per tool (Claude/Gemini ``session_id``, Codex ``thread_id``). Every
owner message in the thread is a job. A job goes ``queued -> running -> success | failed |
unknown_after_crash`` (§12.1) and never changes after that: a retry is a new job.

All state changes are events (:data:`EVENT_TYPES`) applied by :meth:`RunState.apply`, the one
reducer. The live engine and the replay at startup run the very same code, so rebuilding from
the journal gives exactly the state the engine had. :meth:`RunState.apply` checks an event
completely before changing anything: an invalid event raises :class:`InvalidEvent` and leaves
the state untouched, so the engine never journals an event it could not apply.

Callers get views (:mod:`discord_mcp.runs.journal.views`), frozen snapshots; the state itself is
never shared.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any, get_args

from discord_mcp.runs.journal.model_controls import ControlReducers, add_usage, remember_message
from discord_mcp.runs.journal.model_controls import InvalidEvent as InvalidEvent
from discord_mcp.runs.journal.records import SESSION_KEY_NAMES as SESSION_KEY_NAMES
from discord_mcp.runs.journal.records import Job as Job
from discord_mcp.runs.journal.records import ProcessInfo as ProcessInfo
from discord_mcp.runs.journal.records import Session as Session
from discord_mcp.runs.journal.records import parse_iso as parse_iso
from discord_mcp.runs.journal.records import utc_iso as utc_iso
from discord_mcp.runs.journal.retired import RetireReducers
from discord_mcp.runs.journal.views import (
    RETRYABLE_STATES,
    BuiltinTool,
    SessionState,
    SessionView,
    Tool,
)

TOOLS: tuple[Tool, ...] = get_args(BuiltinTool)
"""The three headless CLIs; an ACP agent registered by name is a tool too."""
TOOL_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
STOPPED_CODE = "E_STOPPED"
"""The error code of a job stopped on request: it ends the job, but it is no failure (no ping,
no retry hint; a run folder's result says ``stopped``)."""
FINISHED_STATES: frozenset[str] = frozenset(
    {"success", "failed", "unknown_after_crash", "cancelled"}
)

EVENT_TYPES = (
    "SessionCreated",
    "ToolChanged",
    "JobEnqueued",
    "JobStarted",
    "JobProcessStarted",
    "JobReattached",
    "JobProgress",
    "JobCompleted",
    "JobFailed",
    "JobMarkedUnknownAfterCrash",
    # The owner's controls (issue 11): see discord_mcp/runs/engine/controls.py.
    "JobAmended",
    "JobCancelled",
    "JobSteered",
    "ModelChanged",
    "SessionClosed",
    "SessionReopened",
    # Issue 35: a run's worktree merged, sent as a pull request or discarded.
    "RunLanded",
)


def is_tool(value: object) -> bool:
    """Whether ``value`` can name a tool: a headless CLI or an ACP agent's name (whether that
    agent is registered is checked where a tool is chosen, not when the journal is replayed)."""
    return isinstance(value, str) and (value in TOOLS or bool(TOOL_NAME.match(value)))


def is_builtin(tool: str) -> bool:
    """Whether ``tool`` is one of the three headless CLIs (else: an ACP agent)."""
    return tool in TOOLS


def session_key_name(tool: str) -> str:
    """What ``tool`` calls its session key (an ACP agent: ``session_id``)."""
    return SESSION_KEY_NAMES.get(tool, "session_id")


# --------------------------------------------------------------------------------------------
# The state and its reducer


class RunState(ControlReducers, RetireReducers):
    """Sessions, jobs and the dedupe index; changed only by :meth:`apply`.

    What the state keeps does not grow with history, so a snapshot (and a start-up) costs the
    same after ten thousand jobs as after a million:

    - ``keep_finished`` finished jobs per session, and ``keep_finished_total`` in all (the
      oldest go first; a session's last job always stays, it says how the session stands);
    - the ``keep_dedupe`` newest dedupe keys, none of a message written two weeks before the
      newest (a redelivered message older than that is not something the daemon's catch-up
      reads; :func:`~discord_mcp.runs.model_controls.remember_message`);
    - usage totals for the last :data:`USAGE_DAYS` days (by the events' own dates).

    Every bound is applied by the reducers, so a replay and a snapshot agree.
    """

    def __init__(
        self,
        *,
        keep_finished: int = 200,
        keep_finished_total: int = 2000,
        keep_dedupe: int = 10000,
    ) -> None:
        self.keep_finished = keep_finished
        self.keep_finished_total = keep_finished_total
        self.keep_dedupe = keep_dedupe
        self.sessions: dict[str, Session] = {}
        self.jobs: dict[str, Job] = {}
        self.dedupe: dict[str, str] = {}
        self.finished: dict[str, None] = {}
        """Finished jobs still in the state, oldest first (an ordered set)."""
        self.job_counter = 0
        self.usage: dict[str, dict[str, float]] = {}  # "<day>|<project>|<thread>" -> totals
        self._reducers: dict[str, Callable[[Mapping[str, Any], str], None]] = {
            "SessionCreated": self._session_created,
            "ToolChanged": self._tool_changed,
            "JobEnqueued": self._job_enqueued,
            "JobStarted": self._job_started,
            "JobProcessStarted": self._job_process_started,
            "JobReattached": self._job_reattached,
            "JobProgress": self._job_progress,
            "JobCompleted": self._job_finished,
            "JobFailed": self._job_finished,
            "JobMarkedUnknownAfterCrash": self._job_finished,
            "RunLanded": self._run_landed,
            **self.control_reducers(),
            **self.retire_reducers(),
        }

    # -- serialisation

    def to_dict(self) -> dict[str, Any]:
        return {
            "job_counter": self.job_counter,
            "sessions": {k: s.to_dict() for k, s in self.sessions.items()},
            "jobs": {k: j.to_dict() for k, j in self.jobs.items()},
            "dedupe": dict(self.dedupe),
            "dedupe_order": list(self.dedupe),
            "finished": list(self.finished),
            "usage": {k: dict(v) for k, v in self.usage.items()},
        }

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        *,
        keep_finished: int = 200,
        keep_finished_total: int = 2000,
        keep_dedupe: int = 10000,
    ) -> RunState:
        state = cls(
            keep_finished=keep_finished,
            keep_finished_total=keep_finished_total,
            keep_dedupe=keep_dedupe,
        )
        state.job_counter = int(data.get("job_counter", 0))
        state.sessions = {k: Session.from_dict(v) for k, v in data["sessions"].items()}
        state.jobs = {k: Job.from_dict(v) for k, v in data["jobs"].items()}
        dedupe = dict(data["dedupe"])
        order = [k for k in data.get("dedupe_order") or () if k in dedupe]
        if len(order) == len(dedupe):  # files are written with sorted keys: keep the age order
            dedupe = {k: dedupe[k] for k in order}
        state.dedupe = dedupe
        state.usage = {k: dict(v) for k, v in (data.get("usage") or {}).items()}
        if "finished" in data:
            state.finished = dict.fromkeys(str(j) for j in data["finished"] if j in state.jobs)
        else:  # a snapshot from before the global bound: finished jobs in number order
            done = [j for s in state.sessions.values() for j in s.finished_job_ids]
            done.sort(key=lambda j: state.jobs[j].number if j in state.jobs else 0)
            state.finished = dict.fromkeys(j for j in done if j in state.jobs)
        return state

    # -- queries

    def running_jobs(self) -> list[Job]:
        return [j for j in self.jobs.values() if j.state == "running"]

    def session_state(self, session: Session) -> SessionState:
        """Seed 000 §12.2."""
        if session.running_job_id is not None:
            return "running"
        if session.queue:
            return "queued"
        last = self.jobs.get(session.last_job_id) if session.last_job_id else None
        if last is not None and last.state == "unknown_after_crash":
            return "unknown_after_crash"
        if last is not None and last.state == "failed" and last.error_code != STOPPED_CODE:
            return "failed"
        return "idle"

    def session_view(self, session: Session) -> SessionView:
        last = self.jobs.get(session.last_job_id) if session.last_job_id else None
        key = session.session_key(session.tool)
        retry = None
        if (
            last is not None
            and last.state in RETRYABLE_STATES
            and last.retried_by is None
            and last.error_code != STOPPED_CODE  # a stop the owner asked for is not a failure
        ):
            retry = last.job_id
        created, updated, active = (
            parse_iso(session.created_at),
            parse_iso(session.updated_at),
            parse_iso(session.last_activity_at),
        )
        assert created is not None
        assert updated is not None
        assert active is not None
        return SessionView(
            thread_id=session.thread_id,
            project_name=session.project_name,
            tool=session.tool,
            session_key=key,
            session_keys={
                tool: value[session_key_name(tool)]
                for tool, value in sorted(session.adapter_state.items())
                if session_key_name(tool) in value
            },
            state=self.session_state(session),
            pending=len(session.queue),
            queued_job_ids=tuple(session.queue),
            running_job_id=session.running_job_id,
            last_job=last.view() if last else None,
            resume_ready=key is not None,
            retry_job_id=retry,
            created_at=created,
            updated_at=updated,
            last_activity_at=active,
            model=session.model,
            closed=session.closed,
            held_until=self._held_until(session),
            run_id=session.run_id,
            constraints=dict(session.constraints or {}),
            workdir=session.workdir,
            landed=session.landed,
        )

    def _held_until(self, session: Session) -> dt.datetime | None:
        head = self.jobs.get(session.queue[0]) if session.queue else None
        return parse_iso(head.not_before) if head is not None else None

    # -- the reducer

    def apply(self, event_type: str, payload: Mapping[str, Any], ts: str) -> None:
        """Apply one event; raises :class:`InvalidEvent` (state unchanged) if it does not fit."""
        reducer = self._reducers.get(event_type)
        if reducer is None:
            raise InvalidEvent(f"unknown event type {event_type!r}")
        try:
            reducer(payload, ts)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, InvalidEvent):
                raise
            raise InvalidEvent(f"{event_type}: malformed payload ({exc!r})") from None

    def _session(self, thread_id: str) -> Session:
        session = self.sessions.get(thread_id)
        if session is None:
            raise InvalidEvent(f"no session for thread {thread_id}")
        return session

    def _job(self, job_id: str, *states: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise InvalidEvent(f"no job {job_id}")
        if states and job.state not in states:
            raise InvalidEvent(f"job {job_id} is {job.state}, expected {'/'.join(states)}")
        return job

    def _session_created(self, p: Mapping[str, Any], ts: str) -> None:
        thread_id = str(p["thread_id"])
        if thread_id in self.sessions:
            raise InvalidEvent(f"thread {thread_id} already has a session")
        tool = p["tool"]
        if not is_tool(tool):
            raise InvalidEvent(f"unknown tool {tool!r}")
        self.sessions[thread_id] = Session(
            thread_id=thread_id,
            project_name=str(p["project_name"]),
            tool=tool,
            created_at=ts,
            updated_at=ts,
            last_activity_at=ts,
            model=p.get("model"),
            run_id=_run_id(p.get("run_id")),
            constraints=_constraints(p.get("constraints")),
            workdir=_text_or_none(p.get("workdir"), "workdir"),
        )

    def _run_landed(self, p: Mapping[str, Any], ts: str) -> None:
        """``RunLanded`` {thread_id, run_id, action, ok, message}: a Merge, Open PR or Discard
        of the run's worktree, done (``ok``) or refused; a done one says what became of it."""
        session = self._session(str(p["thread_id"]))
        action = p["action"]
        if action not in ("merged", "pr", "discarded"):
            raise InvalidEvent(f"unknown landing {action!r}")
        if p.get("ok") is True:
            session.landed = str(action)
            session.updated_at = ts

    def session_of_run(self, run_id: str) -> Session | None:
        """The session that is the run ``run_id`` (None: no such run)."""
        for session in self.sessions.values():
            if session.run_id == run_id:
                return session
        return None

    def _tool_changed(self, p: Mapping[str, Any], ts: str) -> None:
        session = self._session(p["thread_id"])
        tool = p["tool"]
        if not is_tool(tool):
            raise InvalidEvent(f"unknown tool {tool!r}")
        session.tool = tool
        session.updated_at = ts

    def _job_enqueued(self, p: Mapping[str, Any], ts: str) -> None:
        session = self._session(p["thread_id"])
        job_id = str(p["job_id"])
        if job_id in self.jobs:
            raise InvalidEvent(f"job {job_id} exists already")
        dedupe_key = p.get("dedupe_key")
        if dedupe_key is not None and dedupe_key in self.dedupe:
            raise InvalidEvent(f"message {dedupe_key} was enqueued already")
        retry_of = p.get("retry_of")
        original = self._job(retry_of) if retry_of is not None else None
        if original is not None and original.retried_by is not None:
            raise InvalidEvent(f"job {retry_of} was retried already")
        number = int(p["number"])
        self.jobs[job_id] = Job(
            job_id=job_id,
            number=number,
            thread_id=session.thread_id,
            message_id=str(p["message_id"]),
            author=str(p["author"]),
            prompt=str(p["prompt"]),
            attempt=int(p["attempt"]),
            retry_of=retry_of,
            enqueued_at=ts,
            not_before=p.get("not_before"),
            reason=p.get("reason"),
            attachments=[dict(a) for a in p.get("attachments") or [] if isinstance(a, Mapping)],
            timeout_s=float(p["timeout_s"]) if p.get("timeout_s") is not None else None,
            # Anything but a plain false reads as restricted: a doubt never widens a turn.
            restricted=p.get("restricted", False) is not False,
        )
        if original is not None:
            original.retried_by = job_id
        if dedupe_key is not None:
            remember_message(self.dedupe, dedupe_key, job_id, self.keep_dedupe)
        self.job_counter = max(self.job_counter, number)
        if p.get("front"):
            session.queue.insert(0, job_id)  # an automatic retry keeps its place in line
        else:
            session.queue.append(job_id)
        session.updated_at = session.last_activity_at = ts

    def _job_started(self, p: Mapping[str, Any], ts: str) -> None:
        job = self._job(p["job_id"], "queued")
        session = self._session(job.thread_id)
        if session.running_job_id is not None:
            raise InvalidEvent(f"thread {job.thread_id} already runs {session.running_job_id}")
        if not session.queue or session.queue[0] != job.job_id:
            raise InvalidEvent(f"job {job.job_id} is not next in its thread's queue")
        tool = p["tool"]
        if not is_tool(tool):
            raise InvalidEvent(f"unknown tool {tool!r}")
        session.queue.pop(0)
        session.running_job_id = job.job_id
        session.updated_at = session.last_activity_at = ts
        job.state = "running"
        job.tool = tool
        job.project_name = p.get("project_name")
        job.resume_key = p.get("resume_key")
        job.started_at = ts

    def _job_process_started(self, p: Mapping[str, Any], ts: str) -> None:
        job = self._job(p["job_id"], "running")
        job.process = ProcessInfo(int(p["pid"]), p.get("start_time"), p.get("boot_id"))

    def _job_reattached(self, p: Mapping[str, Any], ts: str) -> None:
        job = self._job(p["job_id"], "running")
        job.reattached = True

    def _job_progress(self, p: Mapping[str, Any], ts: str) -> None:
        job = self._job(p["job_id"], "running")
        if p.get("session_key") is not None:
            job.session_key = str(p["session_key"])

    def _job_finished(self, p: Mapping[str, Any], ts: str) -> None:
        job = self._job(p["job_id"], "running")
        session = self._session(job.thread_id)
        state = p["state"]
        if state not in FINISHED_STATES:
            raise InvalidEvent(f"{state!r} is not a finished state")
        action = p.get("session_key_action", "keep")
        if action not in ("keep", "set", "clear"):
            raise InvalidEvent(f"unknown session_key_action {action!r}")
        if action == "set" and not p.get("session_key"):
            raise InvalidEvent("session_key_action 'set' without a session_key")
        usage = p.get("usage")
        job.state = state
        job.finished_at = ts
        job.duration = p.get("duration")
        if p.get("session_key") is not None:
            job.session_key = str(p["session_key"])
        job.error_code = p.get("error_code")
        job.error_message = p.get("error_message")
        job.result_excerpt = p.get("result_excerpt")
        job.usage = {k: int(v) for k, v in usage.items()} if usage else None
        job.cost_usd = p.get("cost_usd")
        job.exit_code = p.get("exit_code")
        job.resets_at = p.get("resets_at")
        add_usage(self.usage, job, ts)
        if job.tool is not None and action == "set":
            session.adapter_state[job.tool] = {session_key_name(job.tool): str(p["session_key"])}
        elif job.tool is not None and action == "clear":
            session.adapter_state.pop(job.tool, None)
        session.running_job_id = None
        session.last_job_id = job.job_id
        session.updated_at = session.last_activity_at = ts
        session.finished_job_ids.append(job.job_id)
        self._prune(session)

    def _prune(self, session: Session) -> None:
        # The dedupe keys of dropped jobs stay (up to keep_dedupe): a redelivered old message
        # is still refused.
        if session.finished_job_ids:
            self.finished[session.finished_job_ids[-1]] = None
        while len(session.finished_job_ids) > self.keep_finished:
            dropped = session.finished_job_ids.pop(0)
            self.jobs.pop(dropped, None)
            self.finished.pop(dropped, None)
        looked = 0
        while len(self.finished) > self.keep_finished_total and looked < len(self.finished):
            oldest = next(iter(self.finished))
            del self.finished[oldest]
            job = self.jobs.get(oldest)
            owner = self.sessions.get(job.thread_id) if job is not None else None
            if owner is not None and owner.last_job_id == oldest:
                self.finished[oldest] = None  # a session's last job stays: to the back
                looked += 1
                continue
            self.jobs.pop(oldest, None)
            if owner is not None and oldest in owner.finished_job_ids:
                owner.finished_job_ids.remove(oldest)


def _run_id(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidEvent(f"run_id {value!r} is not a string")
    return value


def _text_or_none(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidEvent(f"{name} {value!r} is not a string")
    return value


def _constraints(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InvalidEvent(f"constraints {value!r} is not an object")
    return dict(value)
