"""Waiting on a condition, bounded: the one way tests wait (never a fixed sleep).

``until`` (async) and ``until_sync`` poll ``condition`` until it returns something truthy and
return that; past ``seconds`` they fail the test, naming ``what`` was awaited. Polling every
20 ms leaves the CPU to the processes under test.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
POLL_S = 0.02


async def until(
    condition: Callable[[], T],
    seconds: float = 30.0,
    what: str = "the condition",
    *,
    timeout: float | None = None,
    poll: float = POLL_S,
) -> T:
    """Await a truthy ``condition()`` (``timeout`` is another name for ``seconds``)."""
    limit = timeout if timeout is not None else seconds
    deadline = time.monotonic() + limit
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {limit:g} s")
        await asyncio.sleep(poll)
    return value


def until_sync(
    condition: Callable[[], T],
    seconds: float = 30.0,
    what: str = "the condition",
    *,
    timeout: float | None = None,
    poll: float = POLL_S,
) -> T:
    """:func:`until` for code that is not on an event loop (threads, subprocess tests)."""
    limit = timeout if timeout is not None else seconds
    deadline = time.monotonic() + limit
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {limit:g} s")
        time.sleep(poll)
    return value
