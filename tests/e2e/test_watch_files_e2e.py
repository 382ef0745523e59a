"""The owner's screenshot in a run thread reaches the real CLI's model: discord-watch keeps the
file, the run engine hands it to claude, codex or gemini their own way, and the scripted model
server sees the image (Codex, Gemini) or its path (Claude Code opens it with its Read tool)."""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs import Tool
from tests.support.agent_clis import CLAUDE_MODEL, CLI_CLASSES
from tests.support.model_server import ModelServer, Text
from tests.support.people import People
from tests.support.waiting import until
from tests.support.watch_world import FAST_DISCORD, WatchWorld, texts

pytestmark = pytest.mark.e2e

# A real 1x1 PNG, so every CLI accepts it as an image.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
ARGS: dict[Tool, list[str]] = {"claude": ["--model", CLAUDE_MODEL], "codex": [], "gemini": []}


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(**FAST_DISCORD)


@pytest.mark.parametrize("tool", ["claude", "codex", "gemini"])
async def test_the_owners_screenshot_in_a_run_thread_reaches_the_model(
    tool: Tool,
    people: People,
    model_server: ModelServer,
    watch_world: Callable[..., WatchWorld],
) -> None:
    world = watch_world()
    await world.add_project([tool], tool, {tool: ARGS[tool]})
    model_server.script(Text("I see the screenshot."))
    cli = world.cli(CLI_CLASSES[tool])
    async with world.watching({tool: cli.env()}):
        await world.connected(people, seconds=90.0)
        thread_id = people.say(world.discord.channel_id, "!start app")["id"]
        await until(
            lambda: any("Session started" in t for t in texts(people, thread_id)), seconds=90.0
        )
        people.send_files(thread_id, [("phone.png", PNG, "image/png")], content="see this?")
        await until(
            lambda: any("I see the screenshot" in t for t in texts(people, thread_id)),
            seconds=90.0,
        )
    assert not model_server.outbound_attempts, model_server.outbound_attempts
    [kept] = list((world.home / "files").glob("*/*-phone.png"))
    assert kept.read_bytes() == PNG
    requests = model_server.turn_requests()
    assert any("see this?" in t for r in requests for t in r.user_texts())
    if tool == "claude":
        assert any(r.contains(str(kept)) for r in requests)
    else:
        encoded = base64.b64encode(PNG).decode()
        assert any(r.contains(encoded) for r in requests), model_server.describe()
