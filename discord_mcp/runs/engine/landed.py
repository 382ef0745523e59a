"""Landing a run's worktree from the engine (issue 35): a base class of
:class:`~discord_mcp.runs.engine.engine.RunEngine`.

Merge, Open PR and Discard (:mod:`discord_mcp.runs.git.landing`) act only on a run at rest (nothing
of it running or waiting: its agent must not write while its work is landed) whose last turn
the run folder has recorded. Every attempt, done or refused, is journaled as ``RunLanded``
``{thread_id, run_id, action, ok, message}`` (``action``: ``merged``, ``pr`` or
``discarded``); one that removed the worktree closes the run to new turns (E_RUN_LANDED).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from discord_mcp.errors import RunError
from discord_mcp.runs.contract import Clock
from discord_mcp.runs.folders.recorder import RunRecorder
from discord_mcp.runs.git import landing
from discord_mcp.runs.journal.journal import Journal
from discord_mcp.runs.journal.model import RunState, utc_iso

RECORDED_WITHIN_S = 60.0
"""How long a landing waits for the run folder to record the run's last turn."""
OUTCOMES = {"merge": "merged", "pr": "pr", "discard": "discarded"}


class EngineLanding:
    """The engine's side of landing (see the module doc)."""

    journal: Journal
    clock: Clock
    state_dir: Path
    recorder: RunRecorder

    @property
    def state(self) -> RunState:
        return self.journal.state

    def _require_open(self) -> None:
        raise NotImplementedError

    async def land(
        self, run_id: str, action: str, *, by: str, via: str, squash: bool = False
    ) -> landing.Landed:
        """Merge (``squash``: as one commit), open a PR for, or discard run ``run_id``'s work.

        Raises:
            RunError: E_RUN_NOT_FOUND, E_RUN_BUSY, or the landing's own refusal (a sentence
                saying that nothing was lost).
        """
        self._require_open()
        session = self.state.session_of_run(run_id)
        if session is None:
            raise RunError("E_RUN_NOT_FOUND", f"there is no run {run_id}: check the id")
        if session.running_job_id is not None or session.queue:
            raise RunError(
                "E_RUN_BUSY",
                f"run {run_id} is still working (a turn runs or waits): wait until it is done, "
                "or stop it, then try again",
            )
        if session.last_job_id is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(RECORDED_WITHIN_S):
                    await self.recorder.recorded(session.last_job_id)
        entry = {"thread_id": session.thread_id, "run_id": run_id, "action": OUTCOMES[action]}
        now = utc_iso(self.clock.time())
        try:
            done = await landing.land(
                self.state_dir, run_id, action, by=by, via=via, now=now, squash=squash
            )
        except RunError as exc:
            self.journal.append("RunLanded", {**entry, "ok": False, "message": exc.message})
            raise
        self.journal.append("RunLanded", {**entry, "ok": True, "message": done.message})
        return done
