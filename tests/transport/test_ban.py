"""A Cloudflare ban stops every process of the state directory, not only the one that met it:
they share it through the rate-limit ledger, send nothing until it should have lifted, then let
exactly one request through to see. Invalid answers (401, 403, 429 but shared ones) are counted
per 10 minutes, with a warning at a quarter and at three quarters of Discord's limit.

Each ``RestClient`` here stands for a process: they share nothing but the ledger file. The
emulator counts the requests that reached it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Secret
from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import CloudflareBanned, Forbidden, RateLimited
from discord_mcp.transport import ledger as book
from discord_mcp.transport.ban import BAN_S, INVALID_WINDOW_S, BanState
from discord_mcp.transport.ledger import LedgerState, status_of
from discord_mcp.transport.ratelimit import RateLimiter
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.routes import Route
from discord_mcp.transport.shared_ledger import FileLedger, ledger_path
from tests.support.clock import FakeClock
from tests.support.people import People

ME = Route.of("GET", "/users/@me")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ledger_file(discord: RunningEmulator, tmp_path: Path) -> Path:
    return ledger_path(tmp_path / "home", Secret(discord.token))


@pytest.fixture
async def make_client(
    discord: RunningEmulator, ledger_file: Path, clock: FakeClock
) -> AsyncIterator[Callable[..., RestClient]]:
    """Clients ("processes") sharing one state directory's ledger, on the test's clock."""
    clients: list[RestClient] = []

    def make(**limits: int) -> RestClient:
        client = RestClient(
            Secret(discord.token),
            api_base=discord.api_base,
            limiter=RateLimiter(
                ledger=FileLedger(ledger_file, clock=clock), sleep=clock.sleep, **limits
            ),
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


@pytest.fixture
def clients(make_client: Callable[..., RestClient]) -> list[RestClient]:
    return [make_client(), make_client()]


async def ledger_status(ledger_file: Path, clock: FakeClock) -> Any:
    return await FileLedger(ledger_file, clock=clock).apply(status_of)


def sent(people: People) -> int:
    return int(people.state()["stats"]["rest_requests"])


async def test_a_ban_one_process_meets_stops_the_others_before_they_send(
    clients: list[RestClient], people: People
) -> None:
    first, second = clients
    people.fault(cloudflare_ban=True)
    with pytest.raises(CloudflareBanned):
        await first.get_current_user()
    before = sent(people)

    with pytest.raises(CloudflareBanned) as refused:
        await second.get_current_user()
    with pytest.raises(CloudflareBanned):
        # Interaction callbacks have no rate limit, but Cloudflare's ban is on everything.
        await second.create_interaction_response("1", "token", 6)
    with pytest.raises(CloudflareBanned):
        await first.list_messages(people.state()["channel_id"])

    assert sent(people) == before  # nothing more reached Discord to make the ban longer
    assert "every process of this state directory waits" in str(refused.value)


async def test_one_probe_near_the_end_then_everyone_goes_again(
    clients: list[RestClient], people: People, clock: FakeClock, ledger_file: Path
) -> None:
    first, second = clients
    people.fault(cloudflare_ban=True)
    with pytest.raises(CloudflareBanned):
        await first.get_current_user()
    people.fault(cloudflare_ban=False)  # Discord lifted it meanwhile; nobody knows yet
    lasts = (await ledger_status(ledger_file, clock)).banned_for  # its Retry-After (scaled)

    clock.now += lasts / 2
    before = sent(people)
    with pytest.raises(CloudflareBanned):
        await second.request(ME, max_wait=1)  # it would wait longer than that
    assert sent(people) == before

    clock.now += lasts / 2
    await first.get_current_user()  # the one probe: it passed
    assert sent(people) == before + 1
    await second.get_current_user()
    assert sent(people) == before + 2


async def test_a_probe_that_meets_the_ban_again_starts_it_again(
    clients: list[RestClient], people: People, clock: FakeClock, ledger_file: Path
) -> None:
    first, second = clients
    people.fault(cloudflare_ban=True)
    with pytest.raises(CloudflareBanned):
        await first.get_current_user()
    lasts = (await ledger_status(ledger_file, clock)).banned_for  # its Retry-After (scaled)
    clock.now += lasts
    before = sent(people)
    with pytest.raises(CloudflareBanned):
        await second.get_current_user()  # the probe, still banned
    assert sent(people) == before + 1
    clock.now += lasts / 2
    with pytest.raises(CloudflareBanned):
        await first.request(ME, max_wait=1)
    assert sent(people) == before + 1


async def test_invalid_answers_are_counted_with_warnings_at_a_quarter_and_three_quarters(
    make_client: Callable[..., RestClient],
    people: People,
    clock: FakeClock,
    ledger_file: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = make_client(invalid_limit=8)
    people.fault(route="GET /gateway/bot", status=429, count=3, scope="shared", retry_after=0)
    people.fault(route="GET /users/@me", status=403, count=6)
    with caplog.at_level(logging.WARNING, logger="discord_mcp.transport.ratelimit"):
        await client.get_gateway_bot()  # three shared 429s (not counted), then it went
        for _ in range(6):
            with pytest.raises(Forbidden):
                await client.get_current_user()
    warnings = [r.getMessage() for r in caplog.records if "invalid requests" in r.getMessage()]

    assert len(warnings) == 2
    assert "2 of the 8" in warnings[0]
    assert "6 of the 8" in warnings[1]
    status = await ledger_status(ledger_file, clock)
    assert status.invalid == 6
    assert status.banned_for == 0.0
    clock.now += INVALID_WINDOW_S
    assert (await ledger_status(ledger_file, clock)).invalid == 0


def test_the_ban_and_the_count_are_kept_in_the_ledger_file_and_older_files_still_read() -> None:
    state = LedgerState()
    state.ban = BanState(invalid_since=5.0, invalid_count=3, warned=25, banned_until=99.0)
    again = LedgerState.from_json(state.to_json())
    assert again.ban == state.ban
    older = state.to_json()
    del older["ban"]
    assert LedgerState.from_json(older).ban == BanState()


def test_while_the_probe_is_out_nobody_else_goes() -> None:
    state = LedgerState()
    book.banned(state, 0.0)
    assert isinstance(book.admit(state, 10.0, ticket="a"), book.Hold)
    assert isinstance(book.admit(state, BAN_S, ticket="a"), book.Grant)  # the probe
    held = book.admit(state, BAN_S + 1, ticket="b")
    assert isinstance(held, book.Hold)
    assert held.banned
    book.settle_unlimited(state, BAN_S + 2, ticket="a", status=200)
    assert isinstance(book.admit(state, BAN_S + 3, ticket="b"), book.Grant)


async def test_a_long_rate_limit_is_not_a_ban(
    clients: list[RestClient], people: People, ledger_file: Path, clock: FakeClock
) -> None:
    first, _ = clients
    people.fault(route="GET /users/@me", status=429, retry_after=120)
    with pytest.raises(RateLimited):
        await first.get_current_user()
    status = await ledger_status(ledger_file, clock)
    assert status.banned_for == 0.0
    assert status.invalid == 1
