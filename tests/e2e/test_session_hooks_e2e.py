"""The Stop and SessionStart hooks with the real Claude Code in ``-p`` mode (hooks fire there),
against the scripted model: what the hooks say reaches the model.

- Stop: the agent ends its turn while its question is pending; the hook sends it back to
  ``wait_decision`` (the reason arrives as a new turn), and the owner's answer reaches it.
- SessionStart: an answer given while no session was listening is in the new session's first
  request, and is given to that session only.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from tests.e2e.test_approvals_hooks_e2e import env_file
from tests.e2e.test_decisions_e2e import CALL_TIMEOUT, discord_mcp, thread_appears
from tests.support.agent_clis import AgentCliFactory
from tests.support.model_server import ModelRequest, ModelServer, Text, ToolCall, quote_tool_result
from tests.support.people import People

pytestmark = pytest.mark.e2e

HOOK = [sys.executable, "-m", "discord_mcp", "hook"]
WAIT_REASON = "call wait_decision with decision_id"


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05)


def hooks_settings(path: Path, dotenv: Path, *events: tuple[str, str]) -> Path:
    """A ``--settings`` file wiring our hooks as ``install claude --hooks`` does."""
    hooks = {
        event: [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": shlex.join([*HOOK, name, "--env-file", str(dotenv)]),
                        "timeout": 30,
                    }
                ]
            }
        ]
        for event, name in events
    }
    path.write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    return path


def wait_for_the_named_decision(request: ModelRequest) -> ToolCall:
    """The model does what the Stop hook told it: wait_decision with the id it was given."""
    texts = "\n".join(request.user_texts())
    found = re.search(r"decision_id '(\d{8}-\d{6}-[0-9a-f]{6})'", texts)
    assert found, texts
    return ToolCall("discord", "wait_decision", {"decision_id": found.group(1)})


def test_the_stop_hook_sends_an_agent_back_to_wait_for_its_pending_question(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    dotenv = env_file(discord, home)
    settings = hooks_settings(tmp_path / "settings.json", dotenv, ("Stop", "stop"))
    question = {"question": "Drop the legacy table?", "options": ["Drop it", "Keep it"]}
    model_server.script(
        ToolCall("discord", "ask_decision", question),
        Text("No answer yet, so I will stop here."),
        wait_for_the_named_decision,
        quote_tool_result("The owner decided: {result}"),
    )
    server = discord_mcp(discord, home, DISCORD_MCP_MAX_BLOCK_SECONDS="6")
    cli = agent_cli("claude", [server], extra_args=["--settings", str(settings)])
    running = cli.start("Ask the owner about the legacy table.", timeout=120)

    thread = running.wait_for(thread_appears(people), timeout=CALL_TIMEOUT, what="the question")
    running.wait_for(
        lambda: model_server.requests_containing(WAIT_REASON),
        timeout=CALL_TIMEOUT,
        what="the Stop hook's reason at the model",
    )
    people.say(thread["id"], "B")
    result = running.wait()

    assert result.succeeded, result.describe() + "\n" + model_server.describe()
    assert model_server.errors == []
    told = model_server.requests_containing(WAIT_REASON)[0]
    assert any("Drop the legacy table?" in t for t in told.user_texts())
    last = model_server.turn_requests()[-1]
    assert sum(WAIT_REASON in t for t in last.user_texts()) == 1  # blocked once
    final = result.final_text()
    assert final is not None
    assert "The owner decided:" in final
    assert "Keep it" in final
    (decision,) = DecisionStore(home).open_decisions()
    assert decision.delivered


def test_the_session_start_hook_gives_a_new_session_the_answer_that_came_while_away(
    discord: RunningEmulator,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    dotenv = env_file(discord, home)
    store = DecisionStore(home)
    away = Decision(
        id="20261123-120000-5e55a0",
        project="proj",
        session="gone1234",
        question="Which region for the new bucket?",
        context=None,
        options=("eu-west-1", "us-east-1"),
        channel_id=discord.channel_id,
        thread_id=discord.channel_id,
        card_message_id="100000000000000003",
        thread_url="",
        asked_at="2026-11-23T12:00:00.000+00:00",
        status="answered",
        answer="B",
        selected_option="us-east-1",
        selected_index=1,
        answered_by_name="Ann",
    )
    store.create(away)
    settings = hooks_settings(tmp_path / "settings.json", dotenv, ("SessionStart", "session-start"))
    model_server.script(Text("Noted."), Text("Noted again."))
    first = agent_cli("claude", [], extra_args=["--settings", str(settings)])
    result = first.run("Start working.", timeout=90)
    assert result.succeeded, result.describe()
    opening = model_server.turn_requests()[0]
    assert opening.contains("Which region for the new bucket?")
    assert opening.contains("us-east-1")
    assert opening.contains(away.id)
    assert store.load(away.id).delivered

    second = agent_cli("claude", [], extra_args=["--settings", str(settings)])
    assert second.run("Start again.", timeout=90).succeeded
    assert not model_server.turn_requests()[-1].contains(away.id)  # given once only
