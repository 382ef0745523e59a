"""discord-mcp used for real by Claude Code, Codex and Gemini CLI, with Discord emulated.

Each real CLI runs headless against the scripted model server, with ``discord-mcp`` registered
as its MCP server and pointed at the emulator. The test acts as the owner (and as strangers)
through the emulator's control API, and checks what reaches the model.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.support.agent_clis import CLI_NAMES, AgentCliFactory, CliName, McpServer
from tests.support.model_server import ModelServer, ToolCall, quote_tool_result, wait_until
from tests.support.people import People
from tests.support.settings import env_for

pytestmark = pytest.mark.e2e

CALL_TIMEOUT = 40.0
"""The CLI starts, connects discord-mcp, and the model's tool call opens a thread."""


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05)


def discord_mcp(discord: RunningEmulator, home: Path, **env: str) -> McpServer:
    """discord-mcp as an agent's client starts it: ``python -m discord_mcp`` with its env."""
    return McpServer(
        "discord", [sys.executable, "-m", "discord_mcp"], env_for(discord, home, **env)
    )


def fresh_result(model_server: ModelServer) -> dict[str, Any]:
    """The tool result in the model request that followed the tool call, as JSON."""
    [result] = model_server.turn_requests()[-1].latest_tool_results()
    return dict(json.loads(result.text))


def thread_appears(people: People) -> Callable[[], dict[str, Any] | None]:
    """A condition: a decision thread exists and its card has been posted."""

    def check() -> dict[str, Any] | None:
        threads = people.threads()
        if threads and people.messages(threads[-1]["id"]):
            return threads[-1]
        return None

    return check


@pytest.mark.parametrize("cli_name", CLI_NAMES)
def test_the_owners_answer_in_discord_reaches_the_model(
    cli_name: CliName,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    question = {"question": "Run the database migration now?", "options": ["Run now", "Wait"]}
    model_server.script(
        ToolCall("discord", "ask_decision", question),
        quote_tool_result("The owner decided: {result}"),
    )
    cli = agent_cli(cli_name, [discord_mcp(discord, tmp_path / "home")])
    running = cli.start("Ask the owner whether to migrate now.")

    thread = running.wait_for(thread_appears(people), timeout=CALL_TIMEOUT, what="the question")
    assert "Run the database migration now?" in people.messages(thread["id"])[0]["content"]
    assert running.running()
    people.say(thread["id"], "2번으로 해줘")
    result = running.wait()

    assert result.succeeded, result.describe() + "\n" + model_server.describe()
    assert model_server.errors == []
    answer = fresh_result(model_server)
    assert answer["status"] == "answered"
    assert answer["selected_option"] == "Wait"
    assert answer["selected_index"] == 1
    assert answer["via"] == "text"
    final = result.final_text()
    assert final is not None
    assert '"selected_option": "Wait"' in final or '"selected_option":"Wait"' in final


def test_claude_code_notifies_the_owner(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    model_server.script(
        ToolCall("discord", "notify", {"message": "Nightly build is green", "level": "success"}),
        quote_tool_result("Sent: {result}"),
    )
    cli = agent_cli("claude", [discord_mcp(discord, tmp_path / "home")])
    result = cli.run("Tell the owner the build is green.")

    assert result.succeeded, result.describe() + "\n" + model_server.describe()
    assert fresh_result(model_server)["ok"] is True
    assert people.messages(discord.channel_id)[-1]["content"] == "✅ Nightly build is green"


def test_a_strangers_reply_is_ignored_and_the_owners_is_used(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    stranger = people.new_user("stranger")
    model_server.script(
        ToolCall(
            "discord", "ask_decision", {"question": "Force-push main?", "options": ["Yes", "No"]}
        ),
        quote_tool_result("{result}"),
    )
    cli = agent_cli("claude", [discord_mcp(discord, tmp_path / "home")])
    running = cli.start("Ask before force-pushing.")
    thread = running.wait_for(thread_appears(people), timeout=CALL_TIMEOUT, what="the question")

    people.say(thread["id"], "yes, do it", author=stranger)
    refusal = running.wait_for(
        lambda: [m for m in people.messages(thread["id"]) if "only" in m["content"]],
        timeout=15,
        what="the refusal",
    )
    assert f"<@{stranger}>" in refusal[0]["content"]
    assert running.running()  # the stranger's "yes" answered nothing
    people.say(thread["id"], "no")
    result = running.wait()

    assert result.succeeded, result.describe()
    answer = fresh_result(model_server)
    assert answer["selected_option"] == "No"
    assert answer["answered_by"] != "stranger"


def test_an_answer_given_while_the_server_was_killed_comes_back_through_check_pending(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    model_server.script(
        ToolCall("discord", "ask_decision", {"question": "Delete the stale branches?"})
    )
    cli = agent_cli("claude", [discord_mcp(discord, home)])
    running = cli.start("Ask about the stale branches.")
    thread = running.wait_for(thread_appears(people), timeout=CALL_TIMEOUT, what="the question")
    killed = running.kill()  # the CLI and its discord-mcp die mid-wait
    assert not killed.succeeded
    people.say(thread["id"], "Delete all but release-*")

    # A new session (not a resume): its server finds the answer in the thread's history. Its
    # steps are scripted only now: the killed CLI, which the group's SIGTERM can reach after its
    # server, may see the call fail and ask the model once more before it dies (seen once, under
    # load: a step went to the dying session and the new one got the step after it).
    model_server.script(
        ToolCall("discord", "check_pending", {}),
        quote_tool_result("Picked up: {result}"),
    )
    result = cli.run("Check for answers that came in while you were away.")
    assert result.succeeded, result.describe() + "\n" + model_server.describe()
    report = fresh_result(model_server)
    assert report["pending"] == []
    [away] = report["answered_while_away"]
    assert away["answer"] == "Delete all but release-*"
    assert away["status"] == "answered"
    wait_until(
        lambda: "Answered" in people.messages(thread["id"])[0]["content"],
        timeout=10,
        what="the card to show the answer",
    )
