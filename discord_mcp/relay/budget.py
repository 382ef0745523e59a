"""The identify budget, shared by every process of a bot token on this machine.

Discord allows ``session_start_limit.total`` identifies a day (1000) and resets the token when a
bot goes over; ``max_concurrency`` allows one identify per 5 seconds. Every process records its
identifies in one locked file, so together they never exceed our own ceiling, and the holder
also checks what Discord says is left before each identify.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from discord_mcp.errors import GatewayError
from discord_mcp.state.files import locked, off_loop, read_json, write_json

DAILY_CEILING = 900
"""Our own ceiling, under Discord's 1000, leaving room for another machine or a mistake."""
SPACING_S = 5.0
"""One identify per 5 s (max_concurrency 1)."""
_DAY_S = 86_400.0
_FORMAT = 1

Remaining = Callable[[], Awaitable[tuple[int, float]]]
"""Asks Discord: (identifies remaining, seconds until the count resets)."""


class IdentifyBudget:
    """Permission to identify, for :class:`discord_mcp.transport.gateway.Gateway`.

    Args:
        path: the shared ledger (``gateway/identifies.json``).
        remaining: asks ``GET /gateway/bot`` for ``session_start_limit``.
    """

    def __init__(
        self,
        path: Path,
        *,
        remaining: Remaining | None = None,
        ceiling: int = DAILY_CEILING,
        spacing: float = SPACING_S,
        wall: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._path = path
        self._remaining = remaining
        self._ceiling = ceiling
        self._spacing = spacing
        self._wall = wall
        self._sleep = sleep

    def used_today(self) -> int:
        """How many identifies this machine recorded in the last 24 hours."""
        document = read_json(self._path, max_version=_FORMAT) or {}
        now = self._wall()
        return sum(1 for t in document.get("at", []) if now - float(t) < _DAY_S)

    async def acquire(self) -> None:
        """Wait for the 5 s spacing and record an identify; refuse when the budget is spent.

        Raises:
            GatewayError: the day's budget (ours or Discord's) is spent.
        """
        if self._remaining is not None:
            left, reset_after = await self._remaining()
            if left <= 0:
                raise GatewayError(
                    f"Discord allows no more gateway logins for {reset_after / 3600:.1f} h "
                    "(session_start_limit). Answers are read by polling until then"
                )
        while True:
            wait = await off_loop(self._reserve)
            if wait <= 0:
                return
            await self._sleep(wait)

    def _reserve(self) -> float:
        with locked(self._path):
            document = read_json(self._path, max_version=_FORMAT) or {"version": _FORMAT}
            now = self._wall()
            recent = [float(t) for t in document.get("at", []) if now - float(t) < _DAY_S]
            if len(recent) >= self._ceiling:
                raise GatewayError(
                    f"{len(recent)} gateway logins in 24 h on this machine, at the ceiling of "
                    f"{self._ceiling} (Discord resets a token past 1000). Answers are read by "
                    "polling until the count drops"
                )
            if recent and now - max(recent) < self._spacing:
                return self._spacing - (now - max(recent))
            recent.append(now)
            write_json(self._path, {"version": _FORMAT, "at": recent})
            return 0.0
