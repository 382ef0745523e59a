"""Processes of one state directory share one bot token's rate limits through a ledger file.

Each ``FileLedger`` here stands for a process: they share nothing but the file (and, where a
test needs time to pass, a fake clock).
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from discord_mcp.config import Secret
from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import RateLimited
from discord_mcp.state.files import locked
from discord_mcp.transport import ledger as book
from discord_mcp.transport.ledger import RESERVATION_S
from discord_mcp.transport.ratelimit import RateLimiter
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.routes import Route
from discord_mcp.transport.shared_ledger import (
    ALONE_S,
    LOCK_WAIT_S,
    FileLedger,
    ledger_path,
    process_alive,
)
from tests.support.clock import FakeClock
from tests.support.people import People

THREADS = Route.of("POST", "/channels/{channel_id}/threads", channel_id="1")
SEND = Route.of("POST", "/channels/{channel_id}/messages", channel_id="1")
DEAD_PID = 4_000_000
"""Above Linux's largest pid: a process that cannot exist."""


def headers(limit: int, remaining: int, reset_after: float, bucket: str = "h") -> dict[str, str]:
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
def path(tmp_path: Path) -> Path:
    return ledger_path(tmp_path / "home", Secret("a.bot.token"))


@pytest.fixture
def process(path: Path, clock: FakeClock) -> Callable[..., RateLimiter]:
    """A limiter as one process has it: its own FileLedger on the shared file."""

    def make(
        *, alive: Callable[[int], bool] = process_alive, lock_wait: float = LOCK_WAIT_S
    ) -> RateLimiter:
        ledger = FileLedger(path, clock=clock, alive=alive, lock_wait=lock_wait)
        return RateLimiter(sleep=clock.sleep, ledger=ledger)

    return make


async def test_twenty_thread_creates_from_two_processes_get_no_429(
    make_emulator: Callable[..., RunningEmulator], tmp_path: Path
) -> None:
    discord = make_emulator(rate_limit_scale=0.02)
    shared = ledger_path(tmp_path / "home", Secret(discord.token))
    clients = [
        RestClient(
            Secret(discord.token),
            api_base=discord.api_base,
            limiter=RateLimiter(ledger=FileLedger(shared)),
        )
        for _ in range(2)
    ]
    people = People(discord)
    try:
        threads = await asyncio.gather(
            *(clients[n % 2].create_thread(discord.channel_id, f"ask {n}") for n in range(20))
        )
        assert len({thread["id"] for thread in threads}) == 20
        assert people.state()["stats"]["rest_429"] == 0
    finally:
        for client in clients:
            await client.aclose()
        people.close()


async def test_a_limit_one_process_learned_lets_another_send_a_full_window_at_once(
    process: Callable[..., RateLimiter], clock: FakeClock
) -> None:
    first, second = process(), process()
    probe = await first.acquire(THREADS, max_wait=10)
    await first.release(probe, headers(5, 4, 5.0))
    other_channel = Route.of("POST", "/channels/{channel_id}/threads", channel_id="2")
    for _ in range(5):
        await asyncio.wait_for(second.acquire(other_channel, max_wait=10), timeout=5)
    assert clock.slept == []


async def test_a_bucket_emptied_by_one_process_makes_the_other_wait_for_its_window(
    process: Callable[..., RateLimiter], clock: FakeClock
) -> None:
    first, second = process(), process()
    probe = await first.acquire(THREADS, max_wait=10)
    await first.release(probe, headers(5, 4, 5.0))
    for remaining in (3, 2, 1, 0):
        ticket = await first.acquire(THREADS, max_wait=10)
        await first.release(ticket, headers(5, remaining, 5.0))
    start = clock.now
    await second.acquire(THREADS, max_wait=10)
    assert clock.now - start == pytest.approx(5.0)


async def test_the_global_budget_counts_every_processs_sends(path: Path, clock: FakeClock) -> None:
    limiters = [
        RateLimiter(sleep=clock.sleep, global_per_second=5, ledger=FileLedger(path, clock=clock))
        for _ in range(2)
    ]
    for n in range(12):
        route = Route.of("GET", "/channels/{channel_id}", channel_id=str(n))
        ticket = await limiters[n % 2].acquire(route, max_wait=10)
        await limiters[n % 2].release(ticket, None)
    assert sum(clock.slept) == pytest.approx(2.0)


async def test_a_probe_of_a_process_that_died_does_not_hold_the_others(
    process: Callable[..., RateLimiter], path: Path, clock: FakeClock
) -> None:
    dead = FileLedger(path, clock=clock)
    await dead.apply(
        functools.partial(book.reserve, route=THREADS, ticket=f"{DEAD_PID}:1", global_per_second=50)
    )
    survivor = process(alive=lambda pid: pid != DEAD_PID)
    ticket = await asyncio.wait_for(survivor.acquire(THREADS, max_wait=10), timeout=5)
    assert ticket is not None
    # The dead process's reservation was not waited out (that would sleep RESERVATION_S).
    assert sum(clock.slept) < RESERVATION_S


async def test_a_reservation_without_a_response_lapses_after_its_bound(
    process: Callable[..., RateLimiter], clock: FakeClock
) -> None:
    hung, other = process(), process()
    await hung.acquire(THREADS, max_wait=10)  # a probe whose response never comes
    waiting = asyncio.create_task(other.acquire(THREADS, max_wait=RESERVATION_S * 2))
    await asyncio.sleep(0)
    assert not waiting.done()
    clock.now += RESERVATION_S
    await asyncio.wait_for(waiting, timeout=5)


async def test_a_restarted_machine_forgets_the_windows_but_keeps_the_limits(
    path: Path,
) -> None:
    before = FakeClock(start=100_000.0)
    limiter = RateLimiter(sleep=before.sleep, ledger=FileLedger(path, clock=before))
    ticket = await limiter.acquire(THREADS, max_wait=10)
    await limiter.release(ticket, headers(5, 0, 600.0))
    after = FakeClock(start=50.0)  # the monotonic clock restarted with the machine
    limiter = RateLimiter(sleep=after.sleep, ledger=FileLedger(path, clock=after))
    for _ in range(5):
        await asyncio.wait_for(limiter.acquire(THREADS, max_wait=10), timeout=5)
    assert after.slept == []


async def test_an_unreadable_ledger_is_replaced_not_quarantined(
    process: Callable[..., RateLimiter], path: Path
) -> None:
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    limiter = process()
    await limiter.acquire(THREADS, max_wait=10)
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == 1
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, path.name + ".lock"])


@pytest.fixture
def stuck_lock(path: Path) -> Iterator[None]:
    """Another process holding the ledger's lock and never letting go (until teardown)."""
    taken, done = threading.Event(), threading.Event()

    def hold() -> None:
        with locked(path):
            taken.set()
            done.wait(30)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert taken.wait(10)
    yield
    done.set()
    holder.join(10)


@pytest.mark.usefixtures("stuck_lock")
async def test_a_ledger_whose_lock_stays_taken_leaves_the_process_counting_alone(
    process: Callable[..., RateLimiter],
) -> None:
    limiter = process(lock_wait=0.05)
    ticket = await asyncio.wait_for(limiter.acquire(THREADS, max_wait=10), timeout=5)
    await limiter.release(ticket, headers(1, 0, 5.0))
    with pytest.raises(RateLimited):
        await limiter.acquire(THREADS, max_wait=1)


async def test_the_ledger_names_the_token_by_a_digest_and_never_holds_it(
    tmp_path: Path, clock: FakeClock
) -> None:
    token = Secret("MTIz.secret-part.of-the-token")
    path = ledger_path(tmp_path, token)
    limiter = RateLimiter(sleep=clock.sleep, ledger=FileLedger(path, clock=clock))
    ticket = await limiter.acquire(SEND, max_wait=10)
    await limiter.release(ticket, headers(5, 4, 5.0))
    assert path.parent == tmp_path / "ratelimits"
    assert "secret" not in path.name
    assert "secret" not in path.read_text(encoding="utf-8")
    assert ledger_path(tmp_path, Secret("another.bot.token")) != path


async def test_a_global_429_one_process_met_pauses_the_others(
    process: Callable[..., RateLimiter], clock: FakeClock
) -> None:
    first, second = process(), process()
    ticket = await first.acquire(SEND, max_wait=10)
    await first.release(ticket, headers(5, 4, 5.0))
    await first.on_429(ticket, retry_after=1.5, is_global=True)
    start = clock.now
    await second.acquire(Route.of("GET", "/channels/{channel_id}", channel_id="7"), max_wait=10)
    assert clock.now - start == pytest.approx(1.5)


async def test_a_bucket_one_process_learned_from_a_429_waits_in_the_others(
    process: Callable[..., RateLimiter], clock: FakeClock
) -> None:
    first, second = process(), process()
    ticket = await first.acquire(THREADS, max_wait=10)
    await first.release(ticket, headers(5, 4, 1.0))
    await first.on_429(ticket, retry_after=3.0, is_global=False)
    start = clock.now
    await second.acquire(THREADS, max_wait=10)
    assert clock.now - start == pytest.approx(3.0)


async def test_windows_that_are_over_leave_only_the_hashes_and_limits_in_the_file(
    process: Callable[..., RateLimiter], path: Path, clock: FakeClock
) -> None:
    limiter = process()
    for channel in range(10):
        route = Route.of("POST", "/channels/{channel_id}/threads", channel_id=str(channel))
        ticket = await limiter.acquire(route, max_wait=10)
        await limiter.release(ticket, headers(5, 4, 5.0))
    assert len(json.loads(path.read_text(encoding="utf-8"))["buckets"]) == 10
    clock.now += 5.0
    ticket = await limiter.acquire(SEND, max_wait=10)
    await limiter.release(ticket, None)
    clock.now += RESERVATION_S
    await limiter.acquire(THREADS, max_wait=10)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert list(document["buckets"]) == [f"h:{THREADS.major}"]  # the request just reserved
    assert document["global_sent"] == [clock.now]
    assert document["hashes"] == {THREADS.key: "h"}
    assert document["limits"] == {"h": 5}


async def test_a_process_that_found_the_lock_stuck_tries_the_file_again_only_after_a_while(
    process: Callable[..., RateLimiter], path: Path, clock: FakeClock
) -> None:
    taken, done = threading.Event(), threading.Event()

    def hold() -> None:
        with locked(path):
            taken.set()
            done.wait(30)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert taken.wait(10)
    limiter = process(lock_wait=0.05)
    try:
        ticket = await limiter.acquire(THREADS, max_wait=10)
    finally:
        done.set()
        holder.join(10)
    await limiter.release(ticket, headers(5, 4, 5.0))
    assert not path.exists()  # counted alone, though the lock is free again
    clock.now += ALONE_S
    await limiter.acquire(SEND, max_wait=10)
    assert f"{SEND.key}:{SEND.major}" in json.loads(path.read_text(encoding="utf-8"))["buckets"]
