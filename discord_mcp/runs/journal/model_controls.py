"""The reducer's part for the owner's controls (issue 11): merged messages, cancelled jobs, a
session's model, closed sessions, and the usage ledger.

Applied by :meth:`discord_mcp.runs.journal.model.RunState.apply` like every other event (this class
is one of its bases), with the same rule: check everything, then change.

- ``JobAmended`` ``{job_id, message_id, prompt, dedupe_key, not_before, attachments?}``: a
  message sent while the job still waited in its debounce window joins it (its text is
  appended, its files added).
- ``JobCancelled`` ``{job_id}``: a waiting job is taken out of its queue (state ``cancelled``).
- ``ModelChanged`` ``{thread_id, model}``: the model every later job of the thread asks for
  (``null``: the CLI's default).
- ``SessionClosed`` / ``SessionReopened`` ``{thread_id}``: a closed session takes no new jobs.

The usage ledger (``RunState.usage``, kept in the snapshot for :data:`USAGE_DAYS` days) adds up
every finished job's tokens and cost per UTC day, project and thread, so ``/usage`` still knows
jobs the state has dropped.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from discord_mcp.transport.snowflakes import made_at

if TYPE_CHECKING:
    from discord_mcp.runs.journal.records import Job, Session

USAGE_FIELDS = ("input_tokens", "output_tokens", "cached_input_tokens", "total_tokens")


class InvalidEvent(ValueError):
    """An event that does not fit the current state (a bug, or a damaged journal)."""


USAGE_DAYS = 400
"""Usage totals older than this many days (before the newest event's date) are dropped."""


DEDUPE_DAYS = 14
"""Dedupe keys of messages this many days older than the newest one remembered are dropped."""


def remember_message(dedupe: dict[str, str], key: str, job_id: str, keep: int) -> None:
    """Remember that message ``key`` (``<thread>:<message id>``) became ``job_id``, and forget
    the oldest keys beyond ``keep``, and those of messages written :data:`DEDUPE_DAYS` before
    this one (by the messages' own ids, not the clock: an old message read again after a
    downtime forgets nothing newer). A redelivered message is one read again by the daemon's
    catch-up, which starts at most at the last read before a downtime; so a year of messages
    costs the state (and every start that reads it) no more than two weeks of them."""
    dedupe[key] = job_id
    while len(dedupe) > keep:
        del dedupe[next(iter(dedupe))]
    written = _message_seconds(key)
    if written is None:
        return
    cutoff = written - DEDUPE_DAYS * 86400
    while dedupe:
        oldest = next(iter(dedupe))
        at = _message_seconds(oldest)
        if at is None or at >= cutoff:
            return
        del dedupe[oldest]


def _message_seconds(key: str) -> float | None:
    """When a Discord message was written, from its id in a dedupe key (None: not an id)."""
    message_id = key.rpartition(":")[2]
    return made_at(message_id) if len(message_id) >= 15 else None  # short: a local id


def add_usage(ledger: dict[str, dict[str, float]], job: Job, ts: str) -> None:
    """Count a finished job that ran into the ledger (key ``"<day>|<project>|<thread>"``)."""
    if job.tool is None:
        return
    day = ts[:10]
    key = f"{day}|{job.project_name or '?'}|{job.thread_id}"
    if key not in ledger and ledger:
        oldest = next(iter(ledger))[:10]
        if oldest < day:
            cutoff = (_dt.date.fromisoformat(day) - _dt.timedelta(days=USAGE_DAYS)).isoformat()
            for stale in [k for k in ledger if k[:10] < cutoff]:
                del ledger[stale]
    totals = ledger.setdefault(key, {"jobs": 0})
    totals["jobs"] = totals.get("jobs", 0) + 1
    for name in USAGE_FIELDS:
        value = (job.usage or {}).get(name)
        if value is not None:
            totals[name] = totals.get(name, 0) + int(value)
    if job.cost_usd is not None:
        totals["cost_usd"] = round(totals.get("cost_usd", 0.0) + float(job.cost_usd), 6)


class ControlReducers:
    """The reducers of the control events; a base of ``RunState``."""

    sessions: dict[str, Session]
    jobs: dict[str, Job]
    dedupe: dict[str, str]
    keep_dedupe: int

    def _session(self, thread_id: str) -> Session:
        raise NotImplementedError

    def _job(self, job_id: str, *states: str) -> Job:
        raise NotImplementedError

    def _prune(self, session: Session) -> None:
        raise NotImplementedError

    def control_reducers(self) -> dict[str, Callable[[Mapping[str, Any], str], None]]:
        return {
            "JobAmended": self._job_amended,
            "JobCancelled": self._job_cancelled,
            "JobSteered": self._job_steered,
            "ModelChanged": self._model_changed,
            "SessionClosed": self._session_closed,
            "SessionReopened": self._session_reopened,
        }

    def _job_amended(self, p: Mapping[str, Any], ts: str) -> None:
        job = self._job(p["job_id"], "queued")
        session = self._session(job.thread_id)
        key = p.get("dedupe_key")
        if key is not None and key in self.dedupe:
            raise InvalidEvent(f"message {key} was enqueued already")
        job.prompt = f"{job.prompt}\n\n{p['prompt']}"
        job.message_ids.append(str(p["message_id"]))
        job.attachments.extend(
            dict(a) for a in p.get("attachments") or [] if isinstance(a, Mapping)
        )
        job.not_before = p.get("not_before")
        if p.get("restricted", False) is not False:  # a stranger's words restrict the turn
            job.restricted = True
        if key is not None:
            remember_message(self.dedupe, key, job.job_id, self.keep_dedupe)
        session.updated_at = session.last_activity_at = ts

    def _job_steered(self, p: Mapping[str, Any], ts: str) -> None:
        """A message handed to a running turn (``busy: steer``): the running job takes it."""
        job = self._job(p["job_id"], "running")
        session = self._session(job.thread_id)
        key = p.get("dedupe_key")
        if key is not None and key in self.dedupe:
            raise InvalidEvent(f"message {key} was enqueued already")
        job.prompt = f"{job.prompt}\n\n{p['prompt']}"
        job.message_ids.append(str(p["message_id"]))
        if key is not None:
            remember_message(self.dedupe, key, job.job_id, self.keep_dedupe)
        session.updated_at = session.last_activity_at = ts

    def _job_cancelled(self, p: Mapping[str, Any], ts: str) -> None:
        job = self._job(p["job_id"], "queued")
        session = self._session(job.thread_id)
        if job.job_id not in session.queue:
            raise InvalidEvent(f"job {job.job_id} is not in its thread's queue")
        session.queue.remove(job.job_id)
        job.state = "cancelled"
        job.finished_at = ts
        job.error_code = "E_CANCELLED"
        job.error_message = "cancelled by the owner before it started"
        session.updated_at = ts
        session.finished_job_ids.append(job.job_id)
        self._prune(session)

    def _model_changed(self, p: Mapping[str, Any], ts: str) -> None:
        session = self._session(str(p["thread_id"]))
        model = p.get("model")
        if model is not None and not isinstance(model, str):
            raise InvalidEvent(f"model {model!r} is not a string")
        session.model = model
        session.updated_at = ts

    def _session_closed(self, p: Mapping[str, Any], ts: str) -> None:
        session = self._session(str(p["thread_id"]))
        if session.running_job_id is not None or session.queue:
            raise InvalidEvent(f"thread {session.thread_id} still has jobs")
        session.closed = True
        session.updated_at = ts

    def _session_reopened(self, p: Mapping[str, Any], ts: str) -> None:
        session = self._session(str(p["thread_id"]))
        session.closed = False
        session.updated_at = session.last_activity_at = ts
