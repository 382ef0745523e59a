"""discord.py's application commands, a client we did not write, against the emulator.

A discord.py bot syncs an ``app_commands.CommandTree`` to the emulator's guild
(``PUT .../guilds/{guild_id}/commands``), hears invocations a person makes through
``POST /_emulator/interactions`` on the gateway, and answers them its own way: an ephemeral
message, a deferral filled in later with a followup carrying a file, autocomplete choices.
"""

from __future__ import annotations

import asyncio
import io
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import yarl

from discord_mcp.emulator import RunningEmulator
from tests.emulator.gateway_client import control

with warnings.catch_warnings():
    # discord.py imports the standard library's audioop (for voice, unused here), which warns
    # of its removal in Python 3.13. Only that warning, only during this import, is ignored.
    warnings.filterwarnings(
        "ignore", message="'audioop' is deprecated", category=DeprecationWarning
    )
    import discord
    import discord.gateway
    import discord.http
    from discord import app_commands

WAIT = 10.0
PROJECTS = ("api", "app", "web")


class Bot:
    """A discord.py client with a command tree for the emulator's guild."""

    def __init__(self, guild_id: str) -> None:
        self.client = discord.Client(intents=discord.Intents.default(), guild_ready_timeout=0.05)
        self.tree = app_commands.CommandTree(self.client)
        self.guild = discord.Object(id=int(guild_id))
        self.ready = asyncio.Event()
        self.followed_up = asyncio.Event()
        self.errors: list[BaseException] = []
        client, tree = self.client, self.tree

        @client.event
        async def on_ready() -> None:
            self.ready.set()

        @tree.error
        async def on_error(interaction: discord.Interaction, error: Exception) -> None:
            self.errors.append(error)

        @tree.command(name="start", description="Start a run", guild=self.guild)
        @app_commands.describe(project="The project", prompt="What to do", budget="Turns")
        async def start(
            interaction: discord.Interaction,
            project: str,
            prompt: str,
            budget: app_commands.Range[int, 1, 10] = 3,
        ) -> None:
            await interaction.response.send_message(
                f"Starting {project}: {prompt} ({budget} turns)", ephemeral=True
            )

        @start.autocomplete("project")
        async def project_names(
            interaction: discord.Interaction, current: str
        ) -> list[app_commands.Choice[str]]:
            return [app_commands.Choice(name=p, value=p) for p in PROJECTS if p.startswith(current)]

        sessions = app_commands.Group(name="session", description="Sessions")

        @sessions.command(name="list", description="List the sessions")
        async def list_sessions(interaction: discord.Interaction) -> None:
            await interaction.response.defer(ephemeral=True, thinking=True)
            await interaction.edit_original_response(content="Two sessions.")
            log = discord.File(io.BytesIO(b"session 1\nsession 2\n"), filename="sessions.txt")
            await interaction.followup.send("Details attached.", file=log, ephemeral=True)
            self.followed_up.set()

        tree.add_command(sessions, guild=self.guild)


@pytest.fixture
def running(
    make_emulator: Callable[..., RunningEmulator], monkeypatch: pytest.MonkeyPatch
) -> RunningEmulator:
    emulator = make_emulator(rate_limit_scale=0.001)
    monkeypatch.setattr(discord.http.Route, "BASE", emulator.api_base)
    monkeypatch.setattr(
        discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(emulator.gateway_url)
    )
    return emulator


@asynccontextmanager
async def connected(running: RunningEmulator) -> AsyncIterator[Bot]:
    bot = Bot(running.guild_id)
    task = asyncio.create_task(bot.client.start(running.token))
    try:
        async with asyncio.timeout(WAIT):
            ready = asyncio.create_task(bot.ready.wait())
            await asyncio.wait({ready, task}, return_when=asyncio.FIRST_COMPLETED)
            ready.cancel()
        if task.done():
            task.result()  # start() ended early: raise its error
        yield bot
    finally:
        await bot.client.close()
        async with asyncio.timeout(WAIT):
            await asyncio.wait({task})


async def _run(running: RunningEmulator, command: str, **fields: Any) -> dict[str, Any]:
    """The owner runs a command in #agents; answers the control API's report."""
    body = {
        "user_id": running.owner_user_id,
        "channel_id": running.channel_id,
        "command": command,
    } | fields
    async with control(running) as client:
        response = await client.post("/interactions", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_discordpy_syncs_its_command_tree_to_the_guild(running: RunningEmulator) -> None:
    async with connected(running) as bot, control(running) as ctl:
        synced = await bot.tree.sync(guild=bot.guild)
        registered = (await ctl.get("/commands")).json()
        again = await bot.tree.sync(guild=bot.guild)
        unchanged = (await ctl.get("/commands")).json()

    assert sorted(c.name for c in synced) == ["session", "start"]
    assert [c.id for c in again] == [c.id for c in synced]
    # The same tree synced again changes nothing, not even a version.
    assert unchanged == registered
    start = next(c for c in registered if c["name"] == "start")
    assert start["guild_id"] == running.guild_id
    assert [
        (o["name"], o.get("required", False), o.get("autocomplete", False))
        for o in start["options"]
    ] == [
        ("project", True, True),
        ("prompt", True, False),
        ("budget", False, False),
    ]
    assert (start["options"][2]["min_value"], start["options"][2]["max_value"]) == (1, 10)


async def test_discordpy_answers_a_slash_command_with_an_ephemeral_message(
    running: RunningEmulator,
) -> None:
    async with connected(running) as bot:
        await bot.tree.sync(guild=bot.guild)
        options = [
            {"name": "project", "value": "api"},
            {"name": "prompt", "value": "fix the tests"},
            {"name": "budget", "value": 5},
        ]
        report = await _run(running, "start", options=options)

    assert bot.errors == []
    assert (report["response_type"], report["ephemeral"]) == (4, True)
    assert report["message"]["content"] == "Starting api: fix the tests (5 turns)"
    assert report["message"]["type"] == 20


async def test_discordpy_defers_then_fills_in_and_follows_up_with_a_file(
    running: RunningEmulator,
) -> None:
    async with connected(running) as bot:
        await bot.tree.sync(guild=bot.guild)
        deferred = await _run(running, "session", options=[{"name": "list"}])
        async with asyncio.timeout(WAIT):
            await bot.followed_up.wait()
        async with control(running) as ctl:
            report = (await ctl.get(f"/interactions/{deferred['interaction_id']}")).json()

    assert bot.errors == []
    assert deferred["response_type"] == 5
    assert report["message"]["content"] == "Two sessions."
    assert report["ephemeral"] is True
    [followup] = report["followups"]
    assert followup["content"] == "Details attached."
    [attachment] = followup["attachments"]
    assert attachment["filename"] == "sessions.txt"
    async with httpx.AsyncClient() as client:
        served = await client.get(attachment["url"])
    assert served.content == b"session 1\nsession 2\n"


async def test_discordpy_autocompletes_an_option_as_the_user_types(
    running: RunningEmulator,
) -> None:
    async with connected(running) as bot:
        await bot.tree.sync(guild=bot.guild)
        report = await _run(
            running, "start", options=[{"name": "project", "value": "ap"}], focused="project"
        )

    assert bot.errors == []
    assert report["response_type"] == 8
    assert report["choices"] == [{"name": "api", "value": "api"}, {"name": "app", "value": "app"}]
