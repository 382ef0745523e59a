"""Identifies are spaced and capped for the whole machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from discord_mcp.errors import GatewayError
from discord_mcp.relay.budget import IdentifyBudget
from tests.support.clock import FakeClock


async def test_identifies_are_spaced_five_seconds_apart_across_instances(tmp_path: Path) -> None:
    clock = FakeClock(start=1_000_000.0)
    path = tmp_path / "identifies.json"
    first = IdentifyBudget(path, wall=clock, sleep=clock.sleep)
    second = IdentifyBudget(path, wall=clock, sleep=clock.sleep)  # another process, same file
    await first.acquire()
    await second.acquire()
    assert clock.slept == [pytest.approx(5.0)]
    assert first.used_today() == 2


async def test_the_daily_ceiling_refuses_instead_of_risking_a_token_reset(tmp_path: Path) -> None:
    clock = FakeClock(start=1_000_000.0)
    budget = IdentifyBudget(
        tmp_path / "identifies.json", ceiling=3, spacing=0.0, wall=clock, sleep=clock.sleep
    )
    for _ in range(3):
        await budget.acquire()
    with pytest.raises(GatewayError, match="ceiling"):
        await budget.acquire()
    clock.now += 86_401
    await budget.acquire()


async def test_discords_own_count_is_respected(tmp_path: Path) -> None:
    async def nothing_left() -> tuple[int, float]:
        return 0, 3600.0

    budget = IdentifyBudget(tmp_path / "identifies.json", remaining=nothing_left)
    with pytest.raises(GatewayError, match="session_start_limit"):
        await budget.acquire()
    assert budget.used_today() == 0
