"""An ACP run's readable transcript under the real ``gemini --acp`` (issue 37).

A run whose agent is an ACP agent writes ACP transcript lines (``acp_update`` and the rest) in
its turns' logs; ``discord-watch logs`` and the run folder's ``events.md`` must read them as
they read a CLI's: the agent's answer and the shell call it made, not "(no output)".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.acp.agents import AgentRegistry
from discord_mcp.runs.folders.folders import RunFolder
from discord_mcp.state.files import off_loop
from discord_mcp.watch import run_client
from tests.support.agent_clis import GEMINI_MODEL, GeminiCli, bin_dir
from tests.support.model_server import ModelRequest, ModelServer, Reply, ShellCall, Text
from tests.support.people import People
from tests.support.requirements import missing
from tests.support.waiting import until
from tests.support.watch_world import FAST_DISCORD, WatchWorld, texts

pytestmark = pytest.mark.e2e

MADE = "The file is made, and this answer is in the transcript."


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(**FAST_DISCORD)


def _button(card: dict[str, Any], label: str) -> str:
    for row in card.get("components") or []:
        for component in row["components"]:
            if str(component.get("label", "")).startswith(label):
                return str(component["custom_id"])
    raise AssertionError(f"no button {label!r} on the card: {card.get('components')}")


def _messages(people: People, thread: str) -> list[dict[str, Any]]:
    try:
        return people.messages(thread)
    except httpx.HTTPStatusError:
        return []  # the thread is not made yet


def _brain(request: ModelRequest) -> Reply:
    if request.latest_tool_results():
        return Text(MADE)
    said = request.user_texts()
    if said and "make the file" in said[-1]:
        return ShellCall("touch made.txt")
    return Text("A short title")


async def test_logs_of_a_gemini_acp_run_show_its_shell_call_and_its_answer(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    watch_world: Callable[..., WatchWorld],
) -> None:
    binaries = bin_dir()
    if not (binaries / "gemini").exists():
        missing("gemini is not installed; run scripts/install-agent-clis")
    world = watch_world(APPROVAL_WAIT_SECONDS="120")
    home = world.settings.home
    cli = world.cli(GeminiCli)
    command = [str(binaries / "gemini"), "--acp", "-m", GEMINI_MODEL]
    await off_loop(AgentRegistry(home).add, "gemini-acp", command, None)
    await world.add_project(["gemini-acp"], "gemini-acp")
    model_server.script(_brain, repeat=True)
    async with world.watching({"gemini-acp": cli.env()}):
        await world.connected(people, seconds=90.0)
        thread = people.say(discord.channel_id, "!start app make the file now")["id"]
        card = await until(
            lambda: [
                m
                for m in _messages(people, thread)
                if "approval · decision" in m["content"] and m.get("components")
            ],
            what="the approval card",
            seconds=90.0,
        )
        await off_loop(people.click, card[0]["id"], _button(card[0], "Allow once"))
        await until(lambda: any(MADE in t for t in texts(people, thread)), seconds=90.0)
        assert (world.workdir / "made.txt").exists()
        run_id = await off_loop(run_client.run_of, home, thread)
        folder = RunFolder.of(home, run_id)
        await until(
            lambda: folder.result.exists() and folder.events.exists(),
            what="the run's result and transcript",
            seconds=60.0,
        )
    transcript = await off_loop(run_client.logs, home, run_id, raw=False)
    assert "(no output)" not in transcript, transcript
    assert "touch made.txt" in transcript, transcript
    assert MADE in transcript, transcript
    assert "acp_update" in (await off_loop(run_client.logs, home, run_id, raw=True))
