"""discord.py reads the emulator's guild and member, and takes its 403s as ``Forbidden``.

Only discord.py's REST layer is used (as in ``test_discordpy.py``); ``Route.BASE`` points it
at the emulator.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator

with warnings.catch_warnings():
    # discord.py imports the standard library's audioop (for voice, unused here), which warns
    # of its removal in Python 3.13. Only that warning, only during this import, is ignored.
    warnings.filterwarnings(
        "ignore", message="'audioop' is deprecated", category=DeprecationWarning
    )
    import discord
    import discord.http


@pytest.fixture
def running(
    make_emulator: Callable[..., RunningEmulator], monkeypatch: pytest.MonkeyPatch
) -> RunningEmulator:
    emulator = make_emulator(rate_limit_scale=0.1)
    monkeypatch.setattr(discord.http.Route, "BASE", emulator.api_base)
    return emulator


@asynccontextmanager
async def logged_in(running: RunningEmulator) -> AsyncIterator[discord.Client]:
    client = discord.Client(intents=discord.Intents.default())
    await client.login(running.token)
    try:
        yield client
    finally:
        await client.close()


def _deny_on_bot_role(running: RunningEmulator, *names: str) -> None:
    response = httpx.post(
        f"{running.base_url}/_emulator/roles/{running.bot_role_id}", json={"deny": list(names)}
    )
    assert response.status_code == 200, response.text


async def test_discordpy_fetches_the_guild_and_the_bots_member(running: RunningEmulator) -> None:
    async with logged_in(running) as client:
        guild = await client.fetch_guild(int(running.guild_id))
        member = await guild.fetch_member(int(running.bot_user_id))
        roles = await guild.fetch_roles()

    assert guild.owner_id == int(running.owner_user_id)
    assert guild.approximate_member_count == 2
    assert {role.id for role in roles} == {int(running.guild_id), int(running.bot_role_id)}
    bot_role = next(role for role in roles if role.id == int(running.bot_role_id))
    assert bot_role.is_bot_managed()
    assert bot_role.permissions.send_messages
    assert bot_role.permissions.manage_threads
    assert member.id == int(running.bot_user_id)
    assert member.bot is True
    # The member's role ids resolve against the guild's roles.
    assert [role.id for role in member.roles] == [int(running.guild_id), int(running.bot_role_id)]


async def test_discordpy_sees_missing_permissions_as_forbidden(running: RunningEmulator) -> None:
    async with logged_in(running) as client:
        channel = await client.fetch_channel(int(running.channel_id))
        assert isinstance(channel, discord.TextChannel)
        _deny_on_bot_role(running, "SEND_MESSAGES")
        with pytest.raises(discord.Forbidden) as refused:
            await channel.send("not allowed")
        _deny_on_bot_role(running, "VIEW_CHANNEL")
        with pytest.raises(discord.Forbidden) as hidden:
            await client.fetch_channel(int(running.channel_id))

    assert refused.value.status == 403
    assert refused.value.code == 50013
    assert hidden.value.code == 50001
