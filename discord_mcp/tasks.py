"""Small structured-concurrency helpers shared by the long-running parts."""

from __future__ import annotations

import asyncio
from typing import Any


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
