"""Delivering notifications to the :class:`~discord_mcp.runs.contract.RunNotifier`.

One queue, delivered in order, one call at a time, each bounded by ``timeout``: a notifier that
raises or hangs is logged and skipped, and the engine never waits for Discord. Activity is
coalesced: while a job's activity waits in the queue, a newer one replaces it, and it is
dropped if the job has finished by the time its turn comes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from discord_mcp.runs.contract import RunNotifier
from discord_mcp.runs.journal.views import Activity, JobView

log = logging.getLogger(__name__)


class Notices:
    """The notification queue of one engine; :meth:`run` delivers until :meth:`close`."""

    def __init__(
        self,
        notifier: RunNotifier,
        *,
        timeout: float,
        running_view: Callable[[str], JobView | None],
        tap: Callable[[str, tuple[Any, ...]], None] | None = None,
    ) -> None:
        self.notifier = notifier
        self._tap = tap  # told of every post at once (the run folders' recorder)
        self.timeout = timeout
        self._running_view = running_view
        self._queue: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue()
        self._activity: dict[str, Activity] = {}
        self._text: dict[str, str] = {}

    def post(self, method: str, *args: Any) -> None:
        """Queue ``notifier.<method>(*args)``."""
        if self._tap is not None:
            self._tap(method, args)
        self._queue.put_nowait((method, args))

    def activity(self, job_id: str, activity: Activity) -> None:
        """Queue a job's activity, replacing one of the same job still waiting."""
        if job_id not in self._activity:
            self._queue.put_nowait(("job_activity", job_id))
        self._activity[job_id] = activity

    def text(self, job_id: str, text: str) -> None:
        """Queue a job's streamed text, replacing one of the same job still waiting."""
        if job_id not in self._text:
            self._queue.put_nowait(("job_text", job_id))
        self._text[job_id] = text

    def close(self) -> None:
        """Deliver what is queued, then let :meth:`run` return."""
        self._queue.put_nowait(None)

    async def settled(self) -> None:
        """Return once everything queued so far has been delivered (or skipped)."""
        await self._queue.join()

    async def run(self) -> None:
        while True:
            item = await self._queue.get()
            try:
                if item is None:
                    return
                await self._deliver(item)
            finally:
                self._queue.task_done()

    async def _deliver(self, item: tuple[str, Any]) -> None:
        method, args = item
        if method == "job_activity":
            activity = self._activity.pop(args, None)
            job = self._running_view(args)
            if activity is None or job is None:
                return
            args = (job, activity)
        elif method == "job_text":
            text = self._text.pop(args, None)
            job = self._running_view(args)
            if text is None or job is None:
                return
            args = (job, text)
        call = getattr(self.notifier, method, None)
        if call is None:
            return  # a notifier without streaming (job_text is optional)
        try:
            async with asyncio.timeout(self.timeout):
                await call(*args)
        except Exception:
            log.exception("the run notifier failed in %s; carrying on", method)
