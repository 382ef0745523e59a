"""Small structured-concurrency helpers shared by the long-running parts."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


async def cancel_and_wait(task: asyncio.Task[Any], *, within: float | None = None) -> None:
    """Cancel ``task`` and wait until it has finished (at most ``within`` seconds).

    Unlike ``with suppress(CancelledError): await task``, this never swallows a cancellation
    aimed at the *caller*: ``asyncio.wait`` does not raise the task's outcome, so if the caller
    is cancelled while waiting, that CancelledError propagates as it should. The task's own
    exception, if any, is retrieved so it is not reported as never retrieved.
    """
    task.cancel()
    await asyncio.wait({task}, timeout=within)
    if task.done() and not task.cancelled():
        task.exception()


class Background:
    """A home for tasks that outlive the call that started them (reactions, card edits).

    Use as an async context manager; leaving it waits a bounded time for the tasks, then
    cancels what is left.
    """

    def __init__(self, *, drain_timeout: float = 5.0) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        self._drain_timeout = drain_timeout

    def spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        """Run ``work`` in the background; its failure is logged, never raised."""
        task = asyncio.get_running_loop().create_task(self._guard(work, name), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _guard(work: Coroutine[Any, Any, None], name: str) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("background task %s failed", name)

    async def __aenter__(self) -> Background:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.drain()

    async def drain(self) -> None:
        """Wait (bounded) for running tasks, then cancel the rest."""
        if not self._tasks:
            return
        _done, pending = await asyncio.wait(set(self._tasks), timeout=self._drain_timeout)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=1.0)
