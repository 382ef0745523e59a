"""The owner's screenshot in a run thread reaches the real CLI's model: discord-watch keeps the
file, the run engine hands it to claude, codex or gemini their own way, and the scripted model
server sees the image (Codex, Gemini) or its path (Claude Code opens it with its Read tool)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs import ProjectRegistry, Tool
from discord_mcp.state.files import off_loop
from discord_mcp.watch.app import run_daemon
from tests.e2e.test_watch_e2e import texts
from tests.support.agent_clis import CLAUDE_MODEL, CLI_CLASSES
from tests.support.model_server import ModelServer, Text
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.waiting import until

pytestmark = pytest.mark.e2e

# A real 1x1 PNG, so every CLI accepts it as an image.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
ARGS: dict[Tool, list[str]] = {"claude": ["--model", CLAUDE_MODEL], "codex": [], "gemini": []}


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05, gateway_heartbeat_scale=0.01)


@contextlib.asynccontextmanager
async def watching(
    settings: Settings, environ: dict[str, str], tool_env: dict[Tool, dict[str, str]]
) -> AsyncIterator[None]:
    task = asyncio.create_task(run_daemon(settings, environ=environ, tool_env=tool_env))
    try:
        yield
    finally:
        task.cancel()
        await asyncio.wait({task}, timeout=20)


@pytest.mark.parametrize("tool", ["claude", "codex", "gemini"])
async def test_the_owners_screenshot_in_a_run_thread_reaches_the_model(
    tool: Tool, discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    workdir = tmp_path / "app"
    workdir.mkdir()
    settings = settings_for(discord, tmp_path / "home", POLL_INTERVAL_SECONDS="0.2")
    await off_loop(
        ProjectRegistry(settings.home, allowed_roots=[tmp_path]).add,
        "app",
        workdir,
        [tool],
        tool,
        {tool: ARGS[tool]},
    )
    with ModelServer(Text("I see the screenshot.")) as model_server:
        cli = CLI_CLASSES[tool](
            root=tmp_path / "clis",
            model_url=model_server.base_url,
            proxy_url=model_server.proxy_url,
        )
        environ = {**os.environ, "DISCORD_WATCH_ROOTS": str(tmp_path)}
        async with watching(settings, environ, {tool: cli.env()}):
            await until(
                lambda: people.state()["stats"]["gateway_connections_open"] == 1, seconds=90.0
            )
            thread_id = people.say(discord.channel_id, "!start app")["id"]
            await until(
                lambda: any("Session started" in t for t in texts(people, thread_id)), seconds=90.0
            )
            people.send_files(thread_id, [("phone.png", PNG, "image/png")], content="see this?")
            await until(
                lambda: any("I see the screenshot" in t for t in texts(people, thread_id)),
                seconds=90.0,
            )
        assert not model_server.outbound_attempts, model_server.outbound_attempts
        [kept] = list((settings.home / "files").glob("*/*-phone.png"))
        assert kept.read_bytes() == PNG
        requests = model_server.turn_requests()
        assert any("see this?" in t for r in requests for t in r.user_texts())
        if tool == "claude":
            assert any(r.contains(str(kept)) for r in requests)
        else:
            encoded = base64.b64encode(PNG).decode()
            assert any(r.contains(encoded) for r in requests), model_server.describe()
