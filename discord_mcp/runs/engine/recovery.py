"""Accounting for the jobs a previous daemon left running, at the engine's start (the policy is
in :mod:`discord_mcp.runs.engine.engine`): reattach the CLI that still runs, complete from its log
the job whose CLI ended meanwhile, mark unknown the one with neither. A base class of
:class:`~discord_mcp.runs.engine.scheduler.Scheduler`, which provides what is declared here.

Each job accounted for is one JSON line in ``<state>/logs/reconciliation.log`` (where the
CodeBridge seed logs its restart reconciliation, issue 34): ``time``, ``job_id``,
``thread_id``, ``run_id``, ``pid``, ``action`` (``reattached``, ``completed`` from its log, or
``unknown_after_crash``) and, for a completed one, ``state`` and ``error_code``. A line that
cannot be written is logged and never stops the recovery.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from discord_mcp.errors import StateError
from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.base import Outcome
from discord_mcp.runs.contract import Clock
from discord_mcp.runs.engine.launch import process_from_status
from discord_mcp.runs.engine.notices import Notices
from discord_mcp.runs.journal.journal import Journal
from discord_mcp.runs.journal.model import Job, ProcessInfo, RunState, Session, parse_iso, utc_iso
from discord_mcp.runs.journal.views import SessionView, Tool
from discord_mcp.runs.processes.runner import JobPaths, JobRun
from discord_mcp.runs.processes.spawner import exit_code_from_status, group_members, is_alive
from discord_mcp.state.files import append_line

log = logging.getLogger(__name__)


class Recovery:
    """The scheduler's part that runs once, before anything new starts."""

    state_dir: Path
    journal: Journal
    clock: Clock
    _notices: Notices

    @property
    def state(self) -> RunState:
        raise NotImplementedError

    def _session_view(self, thread_id: str) -> SessionView:
        raise NotImplementedError

    def _timeout_for(self, session: Session, job: Job) -> float:
        raise NotImplementedError

    def _finish(self, job_id: str, outcome: Outcome) -> None:
        raise NotImplementedError

    def _after_finish(self, job_id: str, final_text: str | None) -> None:
        raise NotImplementedError

    def _watch(
        self,
        job: Job,
        tool: Tool,
        process: ProcessInfo,
        paths: JobPaths,
        *,
        started: float,
        timeout: float,
        reattached: bool = False,
    ) -> None:
        raise NotImplementedError

    def recover(self) -> None:
        """Reattach, complete from the log, or mark unknown: every job the journal shows as
        running (see the module doc)."""
        for job in sorted(self.state.running_jobs(), key=lambda j: j.number):
            paths = JobPaths.for_job(self.state_dir, job.job_id)
            tool = job.tool or self.state.sessions[job.thread_id].tool
            process = job.process or process_from_status(paths.status)
            # A group with members whose leader is gone cannot have had its id reused.
            alive = process is not None and (
                is_alive(process) or (job.process is not None and bool(group_members(process.pid)))
            )
            if process is not None and alive:
                if job.process is None:
                    self.journal.append(
                        "JobProcessStarted", {"job_id": job.job_id, **process.to_dict()}
                    )
                self.journal.append("JobReattached", {"job_id": job.job_id, "pid": process.pid})
                started_at = parse_iso(job.started_at)
                ran = self.clock.time() - started_at.timestamp() if started_at else 0.0
                session = self.state.sessions[job.thread_id]
                self._watch(
                    job,
                    tool,
                    process,
                    paths,
                    started=self.clock.monotonic() - max(0.0, ran),
                    timeout=self._timeout_for(session, job),
                    reattached=True,
                )
                log.info("reattached job %s (pid %d)", job.job_id, process.pid)
                self._reconciled(job, "reattached", process.pid)
                self._notices.post("job_started", job.view(), self._session_view(job.thread_id))
                continue
            run = JobRun(
                job_id=job.job_id,
                thread_id=job.thread_id,
                tool=tool,
                process=process or ProcessInfo(0, None, None),
                paths=paths,
                decoder=adapter_for(tool).decoder(),
                resumed=job.resume_key is not None,
                started=0.0,
                deadline=0.0,
                monotonic=self.clock.monotonic,
            )
            run.read_new(final=True)
            run.close()
            code = exit_code_from_status(paths.status)
            if run.decoder.final_seen or code is not None:
                log.info("job %s ended while the daemon was down; completing it", job.job_id)
                outcome = run.outcome(code)
                self._reconciled(
                    job,
                    "completed",
                    process.pid if process is not None else None,
                    state="success" if outcome.ok else "failed",
                    error_code=outcome.error_code,
                )
                self._finish(job.job_id, outcome)
                continue
            self._reconciled(
                job,
                "unknown_after_crash",
                process.pid if process is not None else None,
                error_code="E_UNKNOWN_AFTER_CRASH",
            )
            self._mark_unknown(job.job_id, tool, run.decoder.session_key)

    def _reconciled(self, job: Job, action: str, pid: int | None, **more: Any) -> None:
        """One line of ``logs/reconciliation.log`` (see the module doc)."""
        session = self.state.sessions.get(job.thread_id)
        line = {
            "time": utc_iso(self.clock.time()),
            "job_id": job.job_id,
            "thread_id": job.thread_id,
            "run_id": session.run_id if session is not None else None,
            "pid": pid,
            "action": action,
            **more,
        }
        try:
            append_line(self.state_dir / "logs" / "reconciliation.log", line)
        except StateError as exc:
            log.warning("could not log the reconciliation of job %s: %s", job.job_id, exc)

    def _mark_unknown(self, job_id: str, tool: Tool, session_key: str | None) -> None:
        log.warning("job %s was running when the daemon stopped; outcome unknown", job_id)
        self.journal.append(
            "JobMarkedUnknownAfterCrash",
            {
                "job_id": job_id,
                "state": "unknown_after_crash",
                "error_code": "E_UNKNOWN_AFTER_CRASH",
                "error_message": (
                    f"the daemon stopped while {tool} ran this job, and the CLI left no result: "
                    "it may or may not have done its work. Check, then retry the job if it "
                    "should run again"
                ),
                "session_key": session_key,
                "session_key_action": "keep",
            },
        )
        self._after_finish(job_id, None)

    def cleanup_job_dirs(self) -> None:
        # Private per-job files (they may hold secrets) of jobs that are over.
        directory = self.state_dir / "runs" / "jobs"
        if not directory.is_dir():
            return
        for entry in directory.iterdir():
            job = self.state.jobs.get(entry.name)
            if job is None or job.state != "running":
                shutil.rmtree(entry, ignore_errors=True)
