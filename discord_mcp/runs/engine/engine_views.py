"""What the run engine shows: its sessions, jobs and projects, as views (frozen snapshots).

A base class of :class:`~discord_mcp.runs.engine.engine.RunEngine`, which provides the attributes
declared here.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.contract import Clock, ProjectStatus
from discord_mcp.runs.journal.journal import Journal
from discord_mcp.runs.journal.model import STOPPED_CODE, RunState, parse_iso
from discord_mcp.runs.journal.views import JobView, SessionView
from discord_mcp.runs.processes.runner import JobPaths


class EngineViews:
    """The engine's read side."""

    journal: Journal
    clock: Clock
    state_dir: Path

    @property
    def state(self) -> RunState:
        return self.journal.state

    def session(self, thread_id: str) -> SessionView | None:
        """The thread's session, or None if the thread is not bound to a project."""
        session = self.state.sessions.get(str(thread_id))
        return self.state.session_view(session) if session else None

    def sessions(self, project: str | None = None) -> list[SessionView]:
        """All sessions (of one project), most recently active first."""
        views = [
            self.state.session_view(s)
            for s in self.state.sessions.values()
            if project is None or s.project_name == project
        ]
        return sorted(views, key=lambda v: v.last_activity_at, reverse=True)

    def jobs(self, thread_id: str | None = None) -> list[JobView]:
        """Jobs the state still holds (of one thread), oldest first."""
        jobs = sorted(self.state.jobs.values(), key=lambda j: j.number)
        return [j.view() for j in jobs if thread_id is None or j.thread_id == str(thread_id)]

    def job(self, job_id: str) -> JobView | None:
        job = self.state.jobs.get(job_id)
        return job.view() if job else None

    def final_text(self, job_id: str) -> str | None:
        """The final answer of a finished job, decoded again from its stdout log."""
        job = self.state.jobs.get(job_id)
        if job is None or job.tool is None:
            return None
        decoder = adapter_for(job.tool).decoder()
        try:
            with open(JobPaths.for_job(self.state_dir, job_id).stdout, "rb") as handle:
                for raw in handle:
                    decoder.feed(raw.decode("utf-8", errors="replace"))
        except OSError:
            return None
        return decoder.final_text

    def project_status(self, project: str) -> ProjectStatus:
        """Seed 000 §11.3: how busy a project is and its latest error."""
        sessions = [s for s in self.state.sessions.values() if s.project_name == project]
        threads = {s.thread_id for s in sessions}
        jobs = [j for j in self.state.jobs.values() if j.thread_id in threads]
        since = dt.datetime.fromtimestamp(self.clock.time(), tz=dt.UTC) - dt.timedelta(days=1)
        # A stop the owner asked for (/stop, E_STOPPED) is not a failure (issue 34).
        failed = [
            j
            for j in jobs
            if j.state in ("failed", "unknown_after_crash") and j.error_code != STOPPED_CODE
        ]
        recent = [j for j in failed if (parse_iso(j.finished_at) or since) > since]
        latest = max(failed, key=lambda j: j.number, default=None)
        return ProjectStatus(
            project_name=project,
            session_total=len(sessions),
            running_sessions=sum(1 for s in sessions if s.running_job_id),
            queued_jobs=sum(len(s.queue) for s in sessions),
            failed_jobs_24h=len(recent),
            last_error=(
                f"{latest.error_code}: {latest.error_message}" if latest is not None else None
            ),
        )

    def session_of_run(self, run_id: str) -> SessionView | None:
        """The session that is the run ``run_id`` (None: no such run in the state)."""
        session = self.state.session_of_run(run_id)
        return self.state.session_view(session) if session else None
