"""Sessions at rest for a week leave the run state; a message in their thread brings them back.

The run state (:class:`~discord_mcp.runs.model.RunState`) bounds its jobs, dedupe keys and
usage, but every session, and the last job of each, stayed in it for ever: after a year of runs
the snapshot that every start reads and every few seconds rewrites held ten thousand sessions
(23 MB; issue 38). Now a session with no job running or queued and no activity for
:data:`~discord_mcp.runs.retiring.RETIRE_AFTER_S` *retires*:

1. its record and the jobs the state still keeps of it are written to
   ``runs/retired/<last two characters of the thread id>/<thread id>.json``
   (``{"version": 1, "session": {...}, "jobs": [{...}]}``, the snapshot's own forms), and,
   for a run, ``runs/retired/runs/<run_id>.json`` (``{"version": 1, "thread_id"}``: a
   ``submit --resume`` names the run, not the thread);
2. then one journal event, ``SessionsRetired`` ``{thread_ids}``, takes them out of the state.
   A crash between the two leaves the session in the state (retired again next time) and a
   file that is written anew then; nothing is lost.

A message or a command in a retired session's thread, or a resumed run, first brings it
back (``SessionRevived`` ``{session, jobs}``; :mod:`.retiring`), so the owner resumes a
month-old session as before: its CLI session, tool, model, constraints and last job
are what they were. What looks at every session (``/session list``, its
autocomplete, the start-up reconcile of run folders, the threads discord-watch watches) sees
those of the last week, which is also what discord-watch reads without being asked. A
session whose worktree still waits to be landed (Merge, Open PR, Discard) never retires.

Retiring runs when the engine starts (the first start after an upgrade retires a year's
sessions, once) and every :data:`~discord_mcp.runs.retiring.RETIRE_EVERY_S` (:mod:`.retiring`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from discord_mcp.runs.journal.records import Job, Session

FORMAT_VERSION = 1
RETIRED_DIR = "retired"


_THREAD_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


def can_retire(thread_id: str) -> bool:
    """Whether a thread id can name a file (a Discord id, or a local session's name)."""
    return _THREAD_ID.fullmatch(thread_id) is not None


def run_pointer_path(runs_dir: Path, run_id: str) -> Path:
    """Where the thread of a retired run is noted (``run_id`` checked by the caller)."""
    return runs_dir / RETIRED_DIR / "runs" / f"{run_id}.json"


def retired_path(runs_dir: Path, thread_id: str) -> Path:
    """Where a retired session of ``thread_id`` is kept.

    Raises:
        ValueError: the id cannot name a file (:func:`can_retire`).
    """
    if not can_retire(thread_id):
        raise ValueError(f"{thread_id!r} is not a thread id")
    return runs_dir / RETIRED_DIR / thread_id[-2:].rjust(2, "_") / f"{thread_id}.json"


class RetireReducers:
    """The reducer's part for retiring and reviving sessions; one of ``RunState``'s bases (a
    ``ValueError`` here is the ``InvalidEvent`` its ``apply`` raises: nothing changed).

    - ``SessionsRetired`` ``{thread_ids}``: each session, at rest, leaves the state with the
      jobs the state kept of it (its dedupe keys stay: a redelivered message is still refused).
    - ``SessionRevived`` ``{session, jobs}``: the session and its kept jobs, as retired, are
      back; its thread must have no session.
    """

    sessions: dict[str, Session]
    jobs: dict[str, Job]
    finished: dict[str, None]

    def retire_reducers(self) -> dict[str, Callable[[Mapping[str, Any], str], None]]:
        return {"SessionsRetired": self._sessions_retired, "SessionRevived": self._revived}

    def _sessions_retired(self, p: Mapping[str, Any], ts: str) -> None:
        threads = [str(t) for t in p["thread_ids"]]
        for thread_id in threads:
            session = self.sessions.get(thread_id)
            if session is None:
                raise ValueError(f"no session for thread {thread_id}")
            if session.running_job_id is not None or session.queue:
                raise ValueError(f"thread {thread_id} has a job running or queued")
        for thread_id in threads:
            session = self.sessions.pop(thread_id)
            for job_id in kept_jobs(session):
                self.jobs.pop(job_id, None)
                self.finished.pop(job_id, None)

    def _revived(self, p: Mapping[str, Any], ts: str) -> None:
        session = Session.from_dict(p["session"])
        if session.thread_id in self.sessions:
            raise ValueError(f"thread {session.thread_id} already has a session")
        if session.running_job_id is not None or session.queue:
            raise ValueError(f"a retired session of {session.thread_id} has work in it")
        jobs = [Job.from_dict(j) for j in p.get("jobs") or ()]
        for job in jobs:
            if job.thread_id != session.thread_id:
                raise ValueError(f"job {job.job_id} is not of thread {session.thread_id}")
            if job.job_id in self.jobs:
                raise ValueError(f"job {job.job_id} exists already")
        self.sessions[session.thread_id] = session
        for job in sorted(jobs, key=lambda j: j.number):
            self.jobs[job.job_id] = job
            self.finished[job.job_id] = None


def kept_jobs(session: Session) -> list[str]:
    """The jobs the state keeps of a session at rest: its finished ones and its last."""
    ids = list(session.finished_job_ids)
    if session.last_job_id and session.last_job_id not in ids:
        ids.append(session.last_job_id)
    return ids


def record_of(session: Session, jobs: Mapping[str, Job]) -> dict[str, Any]:
    """What a retired session's file and its ``SessionRevived`` event hold."""
    return {
        "session": session.to_dict(),
        "jobs": [jobs[j].to_dict() for j in kept_jobs(session) if j in jobs],
    }
