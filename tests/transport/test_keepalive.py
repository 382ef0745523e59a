"""A kept-alive connection is never reused at the moment the server closes it.

The scale benchmark lost asks to ``could not reach Discord (ReadError)`` on ``POST /threads``:
a rate-limit wait of 5 s ended as uvicorn's 5 s keep-alive ran out, and the request went onto
a connection the server was closing. A POST that may have arrived is never sent twice, so the
client must not reuse a connection that long. ``KeepAliveRace`` makes the server lose that race
every time instead of by chance.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
import uvicorn

from discord_mcp.config import Secret
from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import DiscordTransportError
from discord_mcp.transport.rest import KEEPALIVE_EXPIRY_S, RestClient
from tests.support.keepalive_race import KeepAliveRace

KEEP_ALIVE_S = 0.3
"""The server's keep-alive timeout here: short, so a test idles past it quickly."""


async def idle_past(race: KeepAliveRace, seconds: float) -> None:
    """Until the connection has been idle ``seconds`` by the server's count (bounded)."""
    async with asyncio.timeout(seconds + 10):
        while race.idle_for() < seconds:
            await asyncio.sleep(0.01)


def behind(race: KeepAliveRace, discord: RunningEmulator, *, keepalive_expiry: float) -> RestClient:
    """A REST client that reaches ``discord`` through ``race``."""
    return RestClient(
        Secret(discord.token),
        api_base=f"http://127.0.0.1:{race.port}/api/v10",
        keepalive_expiry=keepalive_expiry,
    )


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.01)


async def test_a_thread_create_after_the_servers_keep_alive_ran_out_is_created(
    discord: RunningEmulator,
) -> None:
    async with (
        KeepAliveRace(discord.host, discord.port, keep_alive=KEEP_ALIVE_S) as race,
        behind(race, discord, keepalive_expiry=KEEP_ALIVE_S / 2) as rest,
    ):
        await rest.get_current_user()
        await idle_past(race, KEEP_ALIVE_S)
        thread = await rest.create_thread(discord.channel_id, "after the idle")
    assert thread["name"] == "after the idle"
    assert (race.dropped, race.connections) == (0, 2)


async def test_a_client_keeping_connections_as_long_as_the_server_loses_the_thread_create(
    discord: RunningEmulator,
) -> None:
    # The benchmark's failure, reproduced: httpx's default expiry (5 s) equals uvicorn's.
    async with (
        KeepAliveRace(discord.host, discord.port, keep_alive=KEEP_ALIVE_S) as race,
        behind(race, discord, keepalive_expiry=KEEP_ALIVE_S * 20) as rest,
    ):
        await rest.get_current_user()
        await idle_past(race, KEEP_ALIVE_S)
        with pytest.raises(DiscordTransportError, match="could not reach Discord"):
            await rest.create_thread(discord.channel_id, "lost in the race")
    assert race.dropped == 1


def test_connections_expire_before_the_emulators_keep_alive_timeout() -> None:
    # The emulator serves with uvicorn's default keep-alive (as do Node.js and Apache: 5 s).
    assert uvicorn.Config(app=None).timeout_keep_alive == 5
    assert uvicorn.Config(app=None).timeout_keep_alive > KEEPALIVE_EXPIRY_S
