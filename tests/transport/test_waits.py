"""One absurd wait from Discord cannot stop the machine for a day: a global wait is believed for
seconds, a route's for minutes, and a 429 asking for over an hour is handled as a ban (an hour,
then one probe), in every process that shares the rate-limit ledger.

Each ``RestClient`` stands for a process (the one that met the 429, and a hook started later):
they share nothing but the ledger file, on the test's fake clock.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from discord_mcp.config import Secret
from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import CloudflareBanned, RateLimited
from discord_mcp.transport.ban import BAN_S
from discord_mcp.transport.ledger import LedgerState, status_of
from discord_mcp.transport.ratelimit import RateLimiter
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.routes import Route
from discord_mcp.transport.shared_ledger import FileLedger, ledger_path
from discord_mcp.transport.waits import GLOBAL_CAP_S, ROUTE_CAP_S
from tests.support.clock import FakeClock
from tests.support.people import People

HOOK_WAIT_S = 90.0
"""Longer than the global cap, far shorter than an hour: what a hook could afford."""
API = "https://discord.test/api/v10"
ME_ROUTE = Route.of("GET", "/users/@me")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ledger_file(discord: RunningEmulator, tmp_path: Path) -> Path:
    return ledger_path(tmp_path / "home", Secret(discord.token))


@pytest.fixture
async def make_client(
    discord: RunningEmulator, ledger_file: Path, clock: FakeClock
) -> AsyncIterator[Callable[[], RestClient]]:
    clients: list[RestClient] = []

    def make() -> RestClient:
        client = RestClient(
            Secret(discord.token),
            api_base=discord.api_base,
            limiter=RateLimiter(ledger=FileLedger(ledger_file, clock=clock), sleep=clock.sleep),
            sleep=clock.sleep,
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


def sent(people: People) -> int:
    return int(people.state()["stats"]["rest_requests"])


async def test_a_global_429_asking_for_a_day_is_a_ban_of_an_hour_not_a_day(
    make_client: Callable[[], RestClient],
    people: People,
    clock: FakeClock,
    ledger_file: Path,
) -> None:
    watch, hook = make_client(), make_client()
    people.fault(route="GET /users/@me", status=429, retry_after=86_400, **{"global": True})
    with pytest.raises(CloudflareBanned) as met:
        await watch.get_current_user()
    assert met.value.asked == 86_400
    assert "over an hour" in str(met.value)
    status = await FileLedger(ledger_file, clock=clock).apply(status_of)
    assert 0 < status.banned_for <= BAN_S

    before = sent(people)
    with pytest.raises(CloudflareBanned):
        await hook.get_current_user()  # held by the ban's rules: nothing is sent meanwhile
    assert sent(people) == before

    clock.now += BAN_S
    await hook.get_current_user()  # the one probe: it went through, the ban is over
    await watch.get_current_user()
    assert sent(people) == before + 2


async def test_a_global_429_of_ten_minutes_holds_the_other_processes_seconds(
    make_client: Callable[[], RestClient], people: People, clock: FakeClock
) -> None:
    watch, hook = make_client(), make_client()
    people.fault(route="GET /users/@me", status=429, retry_after=600, **{"global": True})
    with pytest.raises(RateLimited) as met:
        await watch.get_current_user()
    assert met.value.retry_after == GLOBAL_CAP_S

    started = clock.now
    await _get_me_within(hook, HOOK_WAIT_S)
    assert 0 < clock.now - started <= GLOBAL_CAP_S


async def test_a_route_429_of_half_an_hour_holds_the_route_minutes(
    make_client: Callable[[], RestClient], people: People, clock: FakeClock
) -> None:
    watch, hook = make_client(), make_client()
    people.fault(route="GET /users/@me", status=429, retry_after=1_800)
    with pytest.raises(RateLimited) as met:
        await watch.get_current_user()
    assert met.value.retry_after == ROUTE_CAP_S

    started = clock.now
    with pytest.raises(RateLimited):
        await hook.get_current_user()  # a hook cannot wait minutes: it says so at once
    assert clock.now == started
    started = clock.now
    await _get_me_within(watch, ROUTE_CAP_S)
    assert 0 < clock.now - started <= ROUTE_CAP_S


async def _get_me_within(client: RestClient, seconds: float) -> Any:
    return await client.request(ME_ROUTE, max_wait=seconds)


async def test_a_ledger_holding_a_27_hour_global_wait_holds_a_hook_seconds(
    make_client: Callable[[], RestClient], clock: FakeClock, ledger_file: Path
) -> None:
    def written_by_an_older_version(state: LedgerState, now: float) -> None:
        state.global_until = now + 99_999

    await FileLedger(ledger_file, clock=clock).apply(written_by_an_older_version)
    hook = make_client()
    started = clock.now
    await _get_me_within(hook, HOOK_WAIT_S)
    assert 0 < clock.now - started <= GLOBAL_CAP_S


def scripted(router: respx.Router, clock: FakeClock) -> RestClient:
    return RestClient(
        Secret("scripted.token"),
        api_base=API,
        transport=httpx.MockTransport(router.async_handler),
        limiter=RateLimiter(clock=clock, sleep=clock.sleep),
        sleep=clock.sleep,
    )


ME = {"id": "1", "username": "bot"}


@pytest.mark.parametrize(
    ("body", "banned"),
    [
        (b'{"retry_after": 99999, "global": true}', True),
        (b'{"retry_after": Infinity, "global": true}', True),
        (b'{"retry_after": 1e308, "global": false}', True),
        (b'{"retry_after": NaN, "global": true}', False),
        (b'{"retry_after": -5, "global": true}', False),
    ],
)
async def test_absurd_retry_afters_are_a_ban_or_a_bounded_wait(
    clock: FakeClock, body: bytes, banned: bool
) -> None:
    router = respx.Router()
    router.get(f"{API}/users/@me").mock(
        side_effect=[
            # Through Discord's proxy (``Via``): Discord's own 429, not Cloudflare's ban.
            httpx.Response(
                429,
                content=body,
                headers={"content-type": "application/json", "via": "1.1 google"},
            ),
            httpx.Response(200, json=ME),
        ]
    )
    async with scripted(router, clock) as rest:
        if banned:
            with pytest.raises(CloudflareBanned):
                await rest.request(ME_ROUTE, max_wait=HOOK_WAIT_S)
            return
        started = clock.now
        assert await rest.request(ME_ROUTE, max_wait=HOOK_WAIT_S) == ME
        waited = clock.now - started
    assert math.isfinite(waited)
    assert 0 <= waited <= GLOBAL_CAP_S


async def test_a_bucket_whose_window_says_it_resets_in_a_day_is_waited_minutes(
    clock: FakeClock,
) -> None:
    router = respx.Router()
    window = {
        "x-ratelimit-bucket": "b",
        "x-ratelimit-limit": "1",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset-after": "99999",
        "x-ratelimit-reset": "99999999999",
    }
    router.get(f"{API}/users/@me").mock(return_value=httpx.Response(200, json=ME, headers=window))
    async with scripted(router, clock) as rest:
        await rest.request(ME_ROUTE)
        with pytest.raises(RateLimited) as held:
            await rest.request(ME_ROUTE, max_wait=HOOK_WAIT_S)
        assert held.value.retry_after <= ROUTE_CAP_S
        started = clock.now
        await rest.request(ME_ROUTE, max_wait=ROUTE_CAP_S)
    assert 0 < clock.now - started <= ROUTE_CAP_S
