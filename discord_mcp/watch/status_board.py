"""Where each running job's status message is (``<state>/watch/status-messages.json``), so a
"Running" message never outlives its job: after a crash or a restart, the next daemon edits
the old message (a reattached job keeps it; a job that ended meanwhile has it marked final)
instead of leaving it saying "Running" forever.

Version 1::

    {"version": 1, "jobs": {"job_20260226_0001": {"thread_id": "...", "message_id": "..."}}}

Only the daemon writes it (the engine lock makes it the only one); writes go off the event loop.
"""

from __future__ import annotations

from pathlib import Path

from discord_mcp.state.files import off_loop, read_json, write_json

VERSION = 1


class StatusBoard:
    """Job id -> (thread id, status message id), kept in memory and on disk."""

    def __init__(self, home: Path | None) -> None:
        self.path = home / "watch" / "status-messages.json" if home else None
        self.entries: dict[str, tuple[str, str]] = {}
        if self.path is not None:
            document = read_json(self.path, max_version=VERSION) or {}
            for job_id, where in (document.get("jobs") or {}).items():
                if isinstance(where, dict) and where.get("thread_id") and where.get("message_id"):
                    self.entries[job_id] = (str(where["thread_id"]), str(where["message_id"]))

    def get(self, job_id: str) -> tuple[str, str] | None:
        return self.entries.get(job_id)

    async def put(self, job_id: str, thread_id: str, message_id: str) -> None:
        self.entries[job_id] = (thread_id, message_id)
        await self._save()

    async def pop(self, job_id: str) -> tuple[str, str] | None:
        where = self.entries.pop(job_id, None)
        if where is not None:
            await self._save()
        return where

    async def _save(self) -> None:
        if self.path is None:
            return
        document = {
            "version": VERSION,
            "jobs": {
                job: {"thread_id": thread, "message_id": message}
                for job, (thread, message) in self.entries.items()
            },
        }
        await off_loop(write_json, self.path, document)
