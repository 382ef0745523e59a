"""The rate limiter waits before Discord has to say no, on a fake clock."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

import pytest

from discord_mcp.errors import RateLimited
from discord_mcp.transport.ledger import LedgerState, MemoryLedger
from discord_mcp.transport.ratelimit import (
    DISCORD_GLOBAL_PER_SECOND,
    GLOBAL_REQUESTS_PER_SECOND,
    RateLimiter,
)
from discord_mcp.transport.routes import Route
from tests.support.clock import FakeClock

SEND = Route.of("POST", "/channels/{channel_id}/messages", channel_id="1")
SEND_OTHER = Route.of("POST", "/channels/{channel_id}/messages", channel_id="2")
_T = TypeVar("_T")


def headers(limit: int, remaining: int, reset_after: float, bucket: str = "abc") -> dict[str, str]:
    return {
        "x-ratelimit-limit": str(limit),
        "x-ratelimit-remaining": str(remaining),
        "x-ratelimit-reset-after": str(reset_after),
        "x-ratelimit-reset": f"{time.time() + reset_after:.3f}",
        "x-ratelimit-bucket": bucket,
    }


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def limiter(clock: FakeClock) -> RateLimiter:
    return RateLimiter(clock=clock, sleep=clock.sleep)


async def test_unknown_bucket_lets_one_probe_through_and_holds_the_rest(
    limiter: RateLimiter,
) -> None:
    first = await limiter.acquire(SEND, max_wait=10)
    second = asyncio.create_task(limiter.acquire(SEND, max_wait=10))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert not second.done()
    await limiter.release(first, headers(5, 4, 5.0))
    async with asyncio.timeout(2):
        await second


async def test_empty_bucket_waits_until_the_window_resets(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    ticket = await limiter.acquire(SEND, max_wait=10)
    await limiter.release(ticket, headers(1, 0, 2.5))
    started = clock.now
    await limiter.acquire(SEND, max_wait=10)
    assert clock.now - started == pytest.approx(2.5)


async def test_five_per_window_then_a_wait_for_the_next(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    probe = await limiter.acquire(SEND, max_wait=60)
    await limiter.release(probe, headers(5, 4, 5.0))
    for remaining in (3, 2, 1, 0):
        ticket = await limiter.acquire(SEND, max_wait=60)
        await limiter.release(ticket, headers(5, remaining, 5.0))
    assert clock.slept == []
    await limiter.acquire(SEND, max_wait=60)
    assert sum(clock.slept) == pytest.approx(5.0)


async def test_each_channel_has_its_own_copy_of_a_bucket(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    ticket = await limiter.acquire(SEND, max_wait=10)
    await limiter.release(ticket, headers(1, 0, 5.0))
    await limiter.acquire(SEND_OTHER, max_wait=10)
    assert clock.slept == []


async def test_a_wait_longer_than_the_bound_raises_instead_of_sleeping(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    ticket = await limiter.acquire(SEND, max_wait=10)
    await limiter.release(ticket, headers(1, 0, 30.0))
    with pytest.raises(RateLimited) as caught:
        await limiter.acquire(SEND, max_wait=10)
    assert caught.value.retry_after == pytest.approx(30.0)
    assert clock.slept == []


async def test_a_429_closes_the_bucket_for_retry_after(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    ticket = await limiter.acquire(SEND, max_wait=10)
    await limiter.release(ticket, headers(5, 0, 0.5))
    await limiter.on_429(ticket, retry_after=3.0, is_global=False)
    start = clock.now
    await limiter.acquire(SEND, max_wait=10)
    assert clock.now - start == pytest.approx(3.0)


async def test_a_global_429_pauses_every_route(limiter: RateLimiter, clock: FakeClock) -> None:
    ticket = await limiter.acquire(SEND, max_wait=10)
    await limiter.release(ticket, headers(5, 4, 5.0))
    await limiter.on_429(ticket, retry_after=1.5, is_global=True)
    start = clock.now
    await limiter.acquire(SEND_OTHER, max_wait=10)
    assert clock.now - start == pytest.approx(1.5)


async def test_interaction_callbacks_are_never_held(limiter: RateLimiter, clock: FakeClock) -> None:
    ticket = await limiter.acquire(SEND, max_wait=10)
    await limiter.on_429(ticket, retry_after=5.0, is_global=True)
    callback = Route(
        "POST",
        "/interactions/{interaction_id}/{interaction_token}/callback",
        {"interaction_id": "1", "interaction_token": "t"},
        rate_limited=False,
        global_limited=False,
    )
    for _ in range(100):
        await limiter.acquire(callback, max_wait=0.01)
    assert clock.slept == []


async def test_global_budget_spreads_a_burst_over_seconds(
    clock: FakeClock,
) -> None:
    limiter = RateLimiter(clock=clock, sleep=clock.sleep, global_per_second=10)
    for channel in range(25):
        route = Route.of("GET", "/channels/{channel_id}", channel_id=str(channel))
        ticket = await limiter.acquire(route, max_wait=10)
        await limiter.release(ticket, None)
    assert sum(clock.slept) == pytest.approx(2.0)


async def test_the_default_global_budget_keeps_a_margin_below_discords_fifty(
    clock: FakeClock,
) -> None:
    limiter = RateLimiter(clock=clock, sleep=clock.sleep)
    start = clock.now
    sent_within_the_first_second = 0
    for channel in range(DISCORD_GLOBAL_PER_SECOND):
        route = Route.of("GET", "/channels/{channel_id}", channel_id=str(channel))
        ticket = await limiter.acquire(route, max_wait=10)
        sent_within_the_first_second += clock.now - start < 1.0
        await limiter.release(ticket, None)
    assert sent_within_the_first_second == GLOBAL_REQUESTS_PER_SECOND < DISCORD_GLOBAL_PER_SECOND


async def test_routes_sharing_a_bucket_hash_share_its_limit(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    edit = Route.of(
        "PATCH", "/channels/{channel_id}/messages/{message_id}", channel_id="1", message_id="9"
    )
    delete = Route.of(
        "DELETE", "/channels/{channel_id}/messages/{message_id}", channel_id="1", message_id="9"
    )
    ticket = await limiter.acquire(edit, max_wait=10)
    await limiter.release(ticket, headers(1, 0, 4.0, bucket="shared"))
    ticket = await limiter.acquire(delete, max_wait=10)
    await limiter.release(ticket, headers(1, 0, 4.0, bucket="shared"))
    start = clock.now
    await limiter.acquire(edit, max_wait=10)
    assert clock.now - start == pytest.approx(4.0)


class _Slow:
    """A ledger whose answers reach the caller only when ``delivered`` is set, as a worker
    thread's result may arrive after its caller was cancelled."""

    poll_interval: float | None = None

    def __init__(self, clock: FakeClock) -> None:
        self.inner = MemoryLedger(clock=clock)
        self.delivered = asyncio.Event()
        self.answered = asyncio.Event()

    async def apply(self, operation: Callable[[LedgerState, float], _T]) -> _T:
        result = await self.inner.apply(operation)
        self.answered.set()
        await self.delivered.wait()
        return result


async def test_a_request_cancelled_while_its_place_is_reserved_hands_the_place_back(
    clock: FakeClock,
) -> None:
    ledger = _Slow(clock)
    limiter = RateLimiter(sleep=clock.sleep, ledger=ledger)
    cancelled = asyncio.create_task(limiter.acquire(SEND, max_wait=10))
    async with asyncio.timeout(5):
        await ledger.answered.wait()
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    ledger.delivered.set()
    async with asyncio.timeout(5):
        await limiter.acquire(SEND, max_wait=1)  # the probe's place is free again
    assert clock.slept == []


async def test_a_place_reserved_before_the_bucket_was_named_is_freed_where_it_moved(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    unnamed = {k: v for k, v in headers(5, 4, 5.0).items() if k != "x-ratelimit-bucket"}
    ticket = await limiter.acquire(SEND, max_wait=10)
    await limiter.release(ticket, unnamed)
    first = await limiter.acquire(SEND, max_wait=10)
    second = await limiter.acquire(SEND, max_wait=10)
    await limiter.release(first, headers(5, 2, 5.0, bucket="named"))  # the bucket moves
    await limiter.release(second, headers(5, 2, 5.0, bucket="named"))
    clock.now += 5.0
    for _ in range(5):
        await limiter.acquire(SEND, max_wait=0.5)  # a whole window: nothing still in flight
    assert clock.slept == []


async def test_a_bucket_other_machines_spend_too_is_taken_only_a_share_of_a_window(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    """Issue 27: a 429 this machine's ledger did not foresee means another machine spends the
    bucket; with three machines sharing the token, each takes a third of each window."""
    probe = await limiter.acquire(SEND, max_wait=60)
    await limiter.release(probe, headers(5, 4, 5.0))
    await limiter.share_with(3)
    for remaining in (3, 2, 1, 0):  # a full window: not shared yet
        ticket = await limiter.acquire(SEND, max_wait=60)
        await limiter.release(ticket, headers(5, remaining, 5.0))
    assert clock.slept == []
    await limiter.on_429(ticket, retry_after=5.0, is_global=False)  # someone else took some
    sent_at = []
    for _ in range(3):
        ticket = await limiter.acquire(SEND, max_wait=60)
        sent_at.append(clock.now)
        await limiter.release(ticket, headers(5, 4, 5.0))
    # One (5 // 3) a window now, though Discord said four were left.
    assert sent_at[1] - sent_at[0] == pytest.approx(5.0)
    assert sent_at[2] - sent_at[1] == pytest.approx(5.0)


async def test_a_machine_alone_keeps_the_whole_window_after_a_429(
    limiter: RateLimiter, clock: FakeClock
) -> None:
    probe = await limiter.acquire(SEND, max_wait=60)
    await limiter.release(probe, headers(5, 4, 0.5))
    await limiter.on_429(probe, retry_after=1.0, is_global=False)
    for remaining in (4, 3, 2, 1, 0):
        ticket = await limiter.acquire(SEND, max_wait=60)
        await limiter.release(ticket, headers(5, remaining, 5.0))
    assert sum(clock.slept) == pytest.approx(1.0)  # the 429's wait, then the full window
