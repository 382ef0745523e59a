"""A fake monotonic clock whose sleep advances time instantly (inject it; never patch time)."""

from __future__ import annotations

import asyncio


class FakeClock:
    """``clock()`` returns the fake time; ``await clock.sleep(s)`` advances it by ``s``."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += max(seconds, 0.0)
        await asyncio.sleep(0)
