"""The owner's controls over the run engine (issue 11): a base class of
:class:`~discord_mcp.runs.engine.engine.RunEngine`.

- **Debounce.** With ``limits.debounce`` > 0, a new job waits that long before it may start
  (``not_before``); a message arriving in the same thread meanwhile joins it (``JobAmended``:
  its text is appended, the wait starts again, but never beyond three windows from the first
  message). So a thought typed as three quick messages is one job.
- **Automatic retries.** When a job fails, :mod:`discord_mcp.runs.engine.failures` says whether the
  failure was temporary or a usage limit. A temporary failure is run again once, after
  ``limits.retry_pause`` seconds; a usage limit is held until its reset time (at most
  ``limits.max_holds`` times in a row). Either way the retry is a new job (``attempt + 1``,
  ``retry_of``, ``reason``) placed at the FRONT of its thread's queue, so the owner's later
  messages still run after it; the failed job's ``retried_by`` names it.
- ``retry``, ``stop`` (a thread's running job), ``stop_run`` (a whole run: issue 23),
  ``set_model``, ``cancel`` (waiting jobs), ``close_session`` / ``reopen_session``, and the
  usage ledger (:meth:`EngineControls.usage_rows`).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.runs.contract import Clock, RunLimits
from discord_mcp.runs.engine.failures import Failure
from discord_mcp.runs.folders.recorder import RunRecorder
from discord_mcp.runs.journal.journal import Journal
from discord_mcp.runs.journal.model import RunState, Session, parse_iso, utc_iso
from discord_mcp.runs.journal.views import JobView, SessionView

log = logging.getLogger(__name__)

_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@\[\]-]{0,99}$")
HOLD_MARGIN_S = 10.0
"""A held job starts this long after the stated reset (clocks differ a little)."""
DEBOUNCE_WINDOWS = 3
"""A debounced job waits at most this many windows after its first message."""


@dataclass(frozen=True)
class UsageRow:
    """A day's usage of one thread (UTC day, ``YYYY-MM-DD``)."""

    day: str
    project: str
    thread_id: str
    jobs: int
    input_tokens: int
    output_tokens: int
    total_tokens: int
    cost_usd: float


def with_model(args: Sequence[str], model: str | None) -> tuple[str, ...]:
    """A project's argv fragment with ``--model`` set to ``model`` (all three CLIs take it),
    replacing any model the project's own arguments chose."""
    if model is None:
        return tuple(args)
    kept: list[str] = []
    skip = False
    for part in args:
        if skip:
            skip = False
            continue
        if part in ("--model", "-m"):
            skip = True
            continue
        if part.startswith("--model="):
            continue
        kept.append(part)
    return (*kept, "--model", model)


class EngineControls:
    """The control commands; RunEngine provides the attributes declared here."""

    journal: Journal
    limits: RunLimits
    clock: Clock
    recorder: RunRecorder

    @property
    def state(self) -> RunState:
        raise NotImplementedError

    def _require_open(self) -> None:
        raise NotImplementedError

    def _session(self, thread_id: str) -> Session:
        raise NotImplementedError

    def _session_view(self, thread_id: str) -> SessionView:
        raise NotImplementedError

    def _enqueue(
        self,
        session: Session,
        message_id: str,
        prompt: str,
        author: str,
        attempt: int,
        retry_of: str | None,
        dedupe_key: str | None,
        attachments: Sequence[Mapping[str, Any]] = (),
        *,
        not_before: float | None = None,
        reason: str | None = None,
        front: bool = False,
        timeout_s: float | None = None,
        restricted: bool = False,
    ) -> JobView:
        raise NotImplementedError

    async def _stop_job(self, job_id: str) -> None:
        raise NotImplementedError

    # -- commands

    async def retry(self, thread_id: str, job_id: str) -> JobView:
        """Run a failed or crash-lost job again, as a new job with ``attempt + 1``.

        Raises:
            RunError: E_NOT_IN_MANAGED_THREAD, E_JOB_NOT_FOUND, E_JOB_NOT_RETRYABLE,
                E_QUEUE_FULL.
        """
        self._require_open()
        session = self._session(str(thread_id))
        job = self.state.jobs.get(job_id)
        if job is None or job.thread_id != session.thread_id:
            raise RunError(
                "E_JOB_NOT_FOUND",
                f"thread {session.thread_id} has no job {job_id!r}: check the id in the "
                "thread's status",
            )
        if job.retried_by is not None:
            raise RunError(
                "E_JOB_NOT_RETRYABLE",
                f"job {job_id} was retried already as {job.retried_by}: retry that one if it "
                "failed too",
            )
        if job.state not in ("failed", "unknown_after_crash"):
            raise RunError(
                "E_JOB_NOT_RETRYABLE",
                f"job {job_id} is {job.state}; only failed jobs and jobs lost in a crash can "
                "be retried",
            )
        return self._enqueue(
            session,
            job.message_id,
            job.prompt,
            job.author,
            job.attempt + 1,
            job.job_id,
            None,
            job.attachments,
            timeout_s=job.timeout_s,
            restricted=job.restricted,  # a retry of a stranger's turn is still theirs
        )

    async def stop(self, thread_id: str) -> JobView | None:
        """End the thread's running job (its whole process group); it fails with E_STOPPED.

        Returns the finished job, or None when nothing was running. Waiting jobs stay queued.

        Raises:
            RunError: E_NOT_IN_MANAGED_THREAD.
        """
        self._require_open()
        session = self._session(str(thread_id))
        job_id = session.running_job_id
        if job_id is None:
            return None
        await self._stop_job(job_id)
        job = self.state.jobs.get(job_id)
        return job.view() if job else None

    async def stop_run(self, run_id: str) -> SessionView:
        """End a run: its waiting turns are taken back and its running one is stopped; its
        result says ``stopped`` (a stop asked for is no failure).

        Raises:
            RunError: E_RUN_NOT_FOUND.
        """
        self._require_open()
        found = self.state.session_of_run(run_id)
        if found is None:
            raise RunError("E_RUN_NOT_FOUND", f"there is no run {run_id}: check the id")
        thread_id = found.thread_id
        busy = found.running_job_id is not None or bool(found.queue)
        if busy:
            self.recorder.stopping(self._session_view(thread_id))
        running = found.running_job_id
        for job in await self.cancel(thread_id):
            self.recorder.cancelled(job, self._session_view(thread_id))
        if running is not None:
            await self._stop_job(running)
        return self._session_view(thread_id)

    async def set_model(self, thread_id: str, model: str | None) -> SessionView:
        """The model the thread's next jobs ask for (None or "default": the CLI's default).

        Raises:
            RunError: E_NOT_IN_MANAGED_THREAD, E_INVALID_MODEL.
        """
        self._require_open()
        session = self._session(str(thread_id))
        chosen = check_model(model)
        self._check_offered(session.tool, chosen)
        if chosen != session.model:
            self.journal.append("ModelChanged", {"thread_id": session.thread_id, "model": chosen})
        return self._session_view(session.thread_id)

    async def cancel(self, thread_id: str, job_id: str | None = None) -> list[JobView]:
        """Take waiting jobs out of the thread's queue: ``job_id``, or all of them.

        Raises:
            RunError: E_NOT_IN_MANAGED_THREAD, E_JOB_NOT_FOUND, E_JOB_NOT_CANCELLABLE.
        """
        self._require_open()
        session = self._session(str(thread_id))
        if job_id is None:
            chosen = list(session.queue)
        else:
            job = self.state.jobs.get(job_id)
            if job is None or job.thread_id != session.thread_id:
                raise RunError(
                    "E_JOB_NOT_FOUND",
                    f"thread {session.thread_id} has no job {job_id!r}: see its queue with status",
                )
            if job.state != "queued":
                hint = "stop it instead" if job.state == "running" else "it is over"
                raise RunError(
                    "E_JOB_NOT_CANCELLABLE",
                    f"job {job_id} is {job.state}; only waiting jobs can be cancelled: {hint}",
                )
            chosen = [job_id]
        for item in chosen:
            self.journal.append("JobCancelled", {"job_id": item})
        return [self.state.jobs[item].view() for item in chosen if item in self.state.jobs]

    async def close_session(self, thread_id: str) -> SessionView:
        """Close the thread's session: its waiting jobs are cancelled; it takes no new ones.

        Raises:
            RunError: E_NOT_IN_MANAGED_THREAD, E_SESSION_BUSY (a job is running).
        """
        self._require_open()
        session = self._session(str(thread_id))
        if session.running_job_id is not None:
            raise RunError(
                "E_SESSION_BUSY",
                f"job {session.running_job_id} is running in this session: stop it first, or "
                "wait for it to finish",
            )
        await self.cancel(session.thread_id)
        if not session.closed:
            self.journal.append("SessionClosed", {"thread_id": session.thread_id})
        await self._session_ended(session.thread_id)
        return self._session_view(session.thread_id)

    async def _session_ended(self, thread_id: str) -> None:
        """The session closed: whatever the engine keeps alive for it may go (ACP agents)."""

    def _check_offered(self, tool: str, model: str | None) -> None:
        """Refuse a model the thread's engine is known not to offer (an ACP agent's session
        lists its models).

        Raises:
            RunError: E_INVALID_MODEL.
        """

    async def reopen_session(self, thread_id: str) -> SessionView:
        """Let a closed session take jobs again.

        Raises:
            RunError: E_SESSION_NOT_FOUND.
        """
        self._require_open()
        session = self.state.sessions.get(str(thread_id))
        if session is None:
            raise RunError(
                "E_SESSION_NOT_FOUND",
                f"no session has the thread id {thread_id}: list them with session list",
            )
        if session.closed:
            self.journal.append("SessionReopened", {"thread_id": session.thread_id})
        return self._session_view(session.thread_id)

    # -- views

    def usage_rows(self, project: str | None = None, since: str | None = None) -> list[UsageRow]:
        """The usage ledger, newest day first (``since``: a ``YYYY-MM-DD`` day, included)."""
        rows = []
        for key, totals in self.state.usage.items():
            day, name, thread_id = key.split("|", 2)
            if (project is not None and name != project) or (since is not None and day < since):
                continue
            rows.append(
                UsageRow(
                    day=day,
                    project=name,
                    thread_id=thread_id,
                    jobs=int(totals.get("jobs", 0)),
                    input_tokens=int(totals.get("input_tokens", 0)),
                    output_tokens=int(totals.get("output_tokens", 0)),
                    total_tokens=int(totals.get("total_tokens", 0)),
                    cost_usd=float(totals.get("cost_usd", 0.0)),
                )
            )
        return sorted(rows, key=lambda r: (r.day, r.project, r.thread_id), reverse=True)

    # -- the engine's own use

    def _check_accepting(self, session: Session) -> None:
        if session.closed:
            raise RunError(
                "E_SESSION_CLOSED",
                f"the session in thread {session.thread_id} is closed: reopen it first "
                "(/session reopen), or start a new one",
            )

    def _debounced(
        self,
        session: Session,
        message_id: str,
        prompt: str,
        author: str,
        key: str,
        attachments: Sequence[Mapping[str, Any]] = (),
    ) -> JobView | None:
        """Merge the message into the thread's last job while that job waits in its debounce
        window; None when it must be a job of its own."""
        window = self.limits.debounce
        if window <= 0 or not session.queue:
            return None
        job = self.state.jobs[session.queue[-1]]
        now = self.clock.time()
        waits_until = parse_iso(job.not_before)
        first = parse_iso(job.enqueued_at)
        if (
            job.reason is not None
            or job.author != author
            or waits_until is None
            or first is None
            or waits_until.timestamp() <= now
        ):
            return None
        until = min(now + window, first.timestamp() + DEBOUNCE_WINDOWS * window)
        self.journal.append(
            "JobAmended",
            {
                "job_id": job.job_id,
                "message_id": message_id,
                "prompt": prompt,
                "dedupe_key": key,
                "not_before": utc_iso(until),
                **({"attachments": [dict(a) for a in attachments]} if attachments else {}),
            },
        )
        return self.state.jobs[job.job_id].view()

    def _debounce_until(self) -> float | None:
        return self.clock.time() + self.limits.debounce if self.limits.debounce > 0 else None

    def _on_failure(self, job_id: str, failure: Failure) -> None:
        """Queue the automatic retry a temporary failure or a usage limit calls for."""
        job = self.state.jobs.get(job_id)
        session = self.state.sessions.get(job.thread_id) if job else None
        if job is None or session is None or job.retried_by is not None or session.closed:
            return
        now = self.clock.time()
        if failure.kind == "temporary":
            if not self.limits.retry_temporary or job.reason == "temporary":
                return
            not_before = now + self.limits.retry_pause
        else:
            if failure.resets_at is None or self._holds(job_id) >= self.limits.max_holds:
                return
            not_before = max(failure.resets_at, now) + HOLD_MARGIN_S
        try:
            self._enqueue(
                session,
                job.message_id,
                job.prompt,
                job.author,
                job.attempt + 1,
                job.job_id,
                None,
                not_before=not_before,
                reason=failure.kind,
                front=True,
                timeout_s=job.timeout_s,
                restricted=job.restricted,
            )
        except RunError as exc:
            log.warning("could not retry job %s on its own: %s", job_id, exc)

    def _holds(self, job_id: str) -> int:
        """How many usage-limit holds in a row led to this job."""
        count = 0
        job = self.state.jobs.get(job_id)
        while job is not None and job.reason == "usage_limit":
            count += 1
            job = self.state.jobs.get(job.retry_of) if job.retry_of else None
        return count


def check_model(model: str | None) -> str | None:
    """A model name as the CLIs take it, or None for the CLI's default.

    Raises:
        RunError: E_INVALID_MODEL.
    """
    if model is None or model.strip().lower() in ("", "default", "none"):
        return None
    chosen = model.strip()
    if not _MODEL.match(chosen):
        raise RunError(
            "E_INVALID_MODEL",
            f"{chosen!r} does not look like a model name (letters, digits and . _ : / @ - "
            "only, at most 100): e.g. sonnet, gpt-5-codex, gemini-2.5-pro",
        )
    return chosen


def since_day(period: str, now: float) -> str | None:
    """The first UTC day of a usage period: ``today``, ``7d``, ``30d``, ``all`` (None).

    Raises:
        RunError: E_INVALID_PERIOD.
    """
    today = dt.datetime.fromtimestamp(now, tz=dt.UTC).date()
    match = re.fullmatch(r"(\d{1,4})d", period.strip().lower())
    if period in ("", "all"):
        return None
    if period == "today":
        return today.isoformat()
    if match and int(match.group(1)) >= 1:
        return (today - dt.timedelta(days=int(match.group(1)) - 1)).isoformat()
    raise RunError(
        "E_INVALID_PERIOD", f"{period!r} is not a period: use today, 7d, 30d (any Nd) or all"
    )
