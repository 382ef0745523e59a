"""discord-watch with the real CLIs: the owner starts a run in Discord, its agent asks the owner a
decision in the same thread, the answer reaches the model; ``!tool`` switches CLIs.

Everything is real but Discord (the emulator) and the model (the scripted server): the daemon,
its gateway, the run engine, claude and codex, and the discord-mcp server each run registers.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.support.agent_clis import CLAUDE_MODEL, ClaudeCli, CodexCli
from tests.support.model_server import ModelServer, Text, ToolCall, quote_tool_result
from tests.support.people import People
from tests.support.waiting import until
from tests.support.watch_world import FAST_DISCORD, WatchWorld, texts

pytestmark = pytest.mark.e2e


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(**FAST_DISCORD)


async def test_a_runs_agent_asks_in_its_thread_and_tool_switches(
    people: People, model_server: ModelServer, watch_world: Callable[..., WatchWorld]
) -> None:
    world = watch_world()
    await world.add_project(["claude", "codex"], "claude", {"claude": ["--model", CLAUDE_MODEL]})
    claude, codex = world.cli(ClaudeCli), world.cli(CodexCli)
    model_server.script(
        ToolCall(
            "discord", "ask_decision", {"question": "Deploy to prod?", "options": ["Yes", "No"]}
        ),
        quote_tool_result("The owner decided: {result}"),
        Text("Codex here, picking up."),
    )
    async with world.watching({"claude": claude.env(), "codex": codex.env()}):
        await world.connected(people)
        thread_id = people.say(world.discord.channel_id, "!start app")["id"]
        await until(
            lambda: any("Session started" in t for t in texts(people, thread_id)), seconds=60.0
        )
        people.say(thread_id, "deploy the release")
        card = await until(
            # the card, not the run's status line that also names the question
            lambda: [t for t in texts(people, thread_id) if "**Question:** Deploy to prod?" in t],
            what="the agent's question in the run thread",
            seconds=60.0,
        )
        assert "decision `" in card[0]
        assert len(people.threads()) == 1  # asked in the run thread, not a new one
        people.say(thread_id, "no")  # an answer, not a new job
        await until(
            lambda: any(
                "The owner decided" in t and "Reply in this" in t for t in texts(people, thread_id)
            ),
            what="the final answer",
            seconds=60.0,
        )
        people.say(thread_id, "!tool codex")
        await until(
            lambda: any("uses `codex`" in t for t in texts(people, thread_id)), seconds=60.0
        )
        people.say(thread_id, "carry on")
        await until(  # the final answer, not its streamed preview
            lambda: any(
                "Codex here" in t and "Reply in this" in t for t in texts(people, thread_id)
            ),
            what="codex",
            seconds=60.0,
        )
    [result] = [r for r in model_server.tool_results() if '"status"' in r.text]
    answer = json.loads(result.text)
    assert (answer["status"], answer["selected_option"]) == ("answered", "No")
    prompts = [t for r in model_server.turn_requests() for t in r.user_texts()]
    assert "no" not in prompts  # the answer never became a job
    assert "carry on" in prompts
    finals = [t for t in texts(people, thread_id) if "Reply in this thread" in t]
    assert len(finals) == 2
