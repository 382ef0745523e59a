"""Tool approvals from Discord, with the real agent CLIs against the scripted model server.

The model asks to run a shell command; the CLI asks for permission through its route (Claude
Code's permission-prompt tool ``approve``, its ``PermissionRequest`` hook, Codex's
``PermissionRequest`` hook, Gemini CLI's ``BeforeTool`` hook); the approval card appears in a
Discord thread; a stranger's click is refused; the owner's click decides, and the command's
effect on disk (or its absence) shows what the CLI did.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.support.agent_clis import AgentCliFactory, McpServer, RunningAgent
from tests.support.model_server import BuiltinCall, ModelServer, ShellCall, quote_tool_result
from tests.support.people import People
from tests.support.settings import env_for

pytestmark = pytest.mark.e2e

CARD_TIMEOUT = 40.0
"""The CLI starts, connects discord-mcp, and the model's tool call posts the card."""
PROMPT_TOOL = ["--permission-prompt-tool", "mcp__discord__approve"]


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05)


def discord_mcp(discord: RunningEmulator, home: Path, **env: str) -> McpServer:
    return McpServer(
        "discord", [sys.executable, "-m", "discord_mcp"], env_for(discord, home, **env)
    )


def approval_card(people: People) -> Callable[[], dict[str, Any] | None]:
    """A condition: an approval card with its buttons is in a thread."""

    def check() -> dict[str, Any] | None:
        for thread in people.threads():
            for message in people.messages(thread["id"]):
                if "**Approval needed**" in message["content"] and message.get("components"):
                    return {**message, "thread_id": thread["id"]}
        return None

    return check


def button(card: dict[str, Any], label: str) -> str:
    """The custom_id of the card's button whose label starts with ``label``."""
    for row in card["components"]:
        for component in row["components"]:
            if str(component.get("label", "")).startswith(label):
                return str(component["custom_id"])
    raise AssertionError(f"no button {label!r} on the card: {card['components']}")


def last_tool_result(model_server: ModelServer) -> str:
    [result] = model_server.turn_requests()[-1].latest_tool_results()
    return result.text


def start_claude(
    agent_cli: AgentCliFactory, discord: RunningEmulator, home: Path, command: str, **env: str
) -> tuple[RunningAgent, Path]:
    cli = agent_cli("claude", [discord_mcp(discord, home, **env)], extra_args=PROMPT_TOOL)
    return cli.start(f"Please run: {command}", timeout=90), cli.workdir


def test_claude_asks_with_its_prompt_tool_and_the_owners_allow_runs_the_command(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    stranger = people.new_user("stranger")
    model_server.script(
        ShellCall("echo approved > made.txt"), quote_tool_result("Tool said: {result}")
    )
    running, workdir = start_claude(agent_cli, discord, tmp_path / "home", "echo")

    card = running.wait_for(approval_card(people), timeout=CARD_TIMEOUT, what="the card")
    assert "echo approved > made.txt" in card["content"]
    assert str(workdir) in card["content"]
    refused = people.click(card["id"], button(card, "Allow once"), user=stranger)
    assert "only" in json.dumps(refused).lower()
    assert running.running()
    assert not (workdir / "made.txt").exists()

    people.click(card["id"], button(card, "Allow once"))
    result = running.wait()

    assert result.succeeded, result.describe() + "\n" + model_server.describe()
    assert (workdir / "made.txt").read_text(encoding="utf-8") == "approved\n"
    final = people.messages(card["thread_id"])[0]["content"]
    assert "Allowed once" in final
    assert not people.messages(card["thread_id"])[0].get("components")


def test_claude_is_told_when_the_owner_denies_and_the_command_never_runs(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    model_server.script(ShellCall("rm -rf build && echo gone > gone.txt"), quote_tool_result())
    running, workdir = start_claude(agent_cli, discord, tmp_path / "home", "rm")

    card = running.wait_for(approval_card(people), timeout=CARD_TIMEOUT, what="the card")
    assert "recursive delete" in card["content"]
    opened = people.click(card["id"], button(card, "Deny with a note"))
    assert opened["modal"], opened
    people.submit_modal(card["id"], opened["modal"]["custom_id"], {"note": "use make clean"})
    result = running.wait()

    assert result.succeeded, result.describe()
    assert not (workdir / "gone.txt").exists()
    told = last_tool_result(model_server)
    assert "denied" in told
    assert "use make clean" in told
    assert "Denied" in people.messages(card["thread_id"])[0]["content"]


def test_no_answer_is_never_reported_as_a_refusal(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    model_server.script(ShellCall("echo late > late.txt"), quote_tool_result())
    running, workdir = start_claude(
        agent_cli,
        discord,
        tmp_path / "home",
        "late",
        DISCORD_MCP_APPROVAL_WAIT_SECONDS="3",
    )

    card = running.wait_for(approval_card(people), timeout=CARD_TIMEOUT, what="the card")
    result = running.wait()

    assert result.succeeded, result.describe()
    assert not (workdir / "late.txt").exists()
    told = last_tool_result(model_server)
    assert "No one answered" in told
    assert "3 seconds" in told
    assert "not a refusal" in told
    assert "denied" not in told.lower()
    shown = people.messages(card["thread_id"])[0]
    assert "No one answered within 3 seconds" in shown["content"]
    assert shown.get("components")  # still answerable


def test_with_ask_all_even_a_read_asks_the_owner(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    hook = shlex.join([sys.executable, "-m", "discord_mcp", "hook", "pre-tool-use", "--ask-all"])
    settings = {
        "hooks": {
            "PreToolUse": [
                {"matcher": "*", "hooks": [{"type": "command", "command": hook, "timeout": 30}]}
            ]
        }
    }
    cli = agent_cli(
        "claude",
        [discord_mcp(discord, tmp_path / "home")],
        extra_args=[*PROMPT_TOOL, "--settings", json.dumps(settings)],
    )
    (cli.workdir / "notes.txt").write_text("the secret plan\n", encoding="utf-8")
    model_server.script(
        BuiltinCall("Read", {"file_path": str(cli.workdir / "notes.txt")}),
        quote_tool_result("Read: {result}"),
    )
    running = cli.start("Read the notes.", timeout=90)

    card = running.wait_for(approval_card(people), timeout=CARD_TIMEOUT, what="the card")
    assert "`Read`" in card["content"]
    assert "notes.txt" in card["content"]
    people.click(card["id"], button(card, "Allow once"))
    result = running.wait()

    assert result.succeeded, result.describe()
    assert "the secret plan" in last_tool_result(model_server)
