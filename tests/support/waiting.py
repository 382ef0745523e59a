"""Waiting on a condition, bounded: the one way tests wait (never a fixed sleep).

``until`` (async) and ``until_sync`` poll ``condition`` until it returns something truthy and
return that; past ``seconds`` they fail the test, naming ``what`` was awaited. They look again
after 20 ms, then half again as long each time, up to every 100 ms (:func:`pauses`): a
condition met at once is seen at once, and one that takes a CLI's whole turn is not asked fifty
times a second. Most conditions are a request to the emulator, answered by the same two cores
the processes under test need (measured once on the chat end-to-end and slash-command files:
a fifth less CPU; on the whole suite, within its run-to-run spread).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

T = TypeVar("T")
POLL_S = 0.02
"""The first pause between two looks."""
POLL_MAX_S = 0.1
"""The longest pause between two looks (unless the first asked for is longer)."""


def pauses(first: float = POLL_S) -> Iterator[float]:
    """The pauses between looks: ``first``, then each half again as long, up to
    :data:`POLL_MAX_S` (or ``first``, if longer)."""
    longest = max(first, POLL_MAX_S)
    pause = first
    while True:
        yield pause
        pause = min(pause * 1.5, longest)


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
    waits = pauses(poll)
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {limit:g} s")
        await asyncio.sleep(next(waits))
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
    waits = pauses(poll)
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {limit:g} s")
        time.sleep(next(waits))
    return value
