"""One session, one label: the question a real Codex or Gemini CLI asks through ``discord-mcp``
(stdio) and the approval its hook asks for carry the same ``session `…``` on their cards,
the CLI's own session id (:mod:`discord_mcp.session_labels`).

Codex names its session in every tool call's ``_meta``; Gemini CLI names it to no server, so
its ``SessionStart`` hook records it for the Gemini process the server runs under.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.hooks import before_tool
from discord_mcp.session_labels import id_label
from tests.e2e.test_approvals_hooks_e2e import cards, env_file
from tests.e2e.test_decisions_e2e import CALL_TIMEOUT, discord_mcp, thread_appears
from tests.support.agent_clis import AgentCliFactory
from tests.support.model_server import ModelServer, ShellCall, ToolCall, quote_tool_result
from tests.support.people import People

pytestmark = pytest.mark.e2e

HOOK = [sys.executable, "-m", "discord_mcp", "hook"]
QUESTION = {"question": "Clean the build folder?", "options": ["yes", "no"]}
QUESTION_LABEL = re.compile(r"\*\*Decision needed\*\* · `[^`]*` · session `([^`]+)`")
APPROVAL_LABEL = re.compile(r"\*\*Approval needed\*\* · `[^`]*` · (\w+) session `([^`]+)`")


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05)


def question_card(people: People) -> dict[str, Any] | None:
    thread = thread_appears(people)()
    if thread is None:
        return None
    first = people.messages(thread["id"])[0]
    return first if QUESTION_LABEL.search(first["content"]) else None


def answer_then_allow(running: Any, people: People) -> tuple[str, str, str]:
    """Answer the question, allow the command; the question's label, the approval's client and
    label."""
    card = running.wait_for(lambda: question_card(people), timeout=CALL_TIMEOUT, what="question")
    people.say(card["channel_id"], "yes")
    [approval] = running.wait_for(lambda: cards(people), timeout=CALL_TIMEOUT, what="approval")
    people.react(approval["channel_id"], approval["id"], "✅")
    asked = QUESTION_LABEL.search(card["content"])
    approved = APPROVAL_LABEL.search(approval["content"])
    assert asked is not None, card
    assert approved is not None, approval
    return asked.group(1), approved.group(1), approved.group(2)


def test_a_codex_sessions_question_and_approval_carry_its_thread_id(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    dotenv = env_file(discord, home)
    command = shlex.join(
        [*HOOK, "permission-request", "--client", "codex", "--env-file", str(dotenv)]
    )
    handler = f'{{type="command", command={json.dumps(command)}, timeout=90}}'
    hooks = f"hooks.PermissionRequest=[{{hooks=[{handler}]}}]"
    cli = agent_cli(
        "codex",
        [discord_mcp(discord, home)],
        extra_args=["--approve-for-me", "--dangerously-bypass-hook-trust", "-c", hooks],
    )
    escalate = {"sandbox_permissions": "require_escalated", "justification": "clean it"}
    model_server.script(
        ToolCall("discord", "ask_decision", QUESTION),
        ShellCall("echo cleaned > cleaned.txt", codex_arguments=escalate),
        quote_tool_result(),
    )
    running = cli.start("Ask, then clean.", timeout=120)

    asked, client, approved = answer_then_allow(running, people)
    result = running.wait()

    assert result.succeeded, result.describe() + "\n" + model_server.describe()
    thread_id = result.session_id()
    assert thread_id is not None
    assert client == "codex"
    assert asked == approved == id_label(thread_id)


def test_a_gemini_sessions_question_and_approval_carry_its_session_id(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    dotenv = env_file(discord, home)
    cli = agent_cli("gemini", [discord_mcp(discord, home)], extra_args=["--approval-mode", "yolo"])
    settings_path = cli.home / ".gemini" / "settings.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8"))

    def hook(*args: str) -> dict[str, Any]:
        line = shlex.join([*HOOK, *args, "--env-file", str(dotenv)])
        return {"type": "command", "command": line, "timeout": 90_000}

    settings["hooks"] = {
        "SessionStart": [{"hooks": [hook("session-start")]}],
        "BeforeTool": [
            {"matcher": before_tool.matcher(ask_all=False), "hooks": [hook("before-tool")]}
        ],
    }
    settings_path.write_text(json.dumps(settings), encoding="utf-8")
    model_server.script(
        ToolCall("discord", "ask_decision", QUESTION),
        ShellCall("echo cleaned > cleaned.txt"),
        quote_tool_result(),
    )
    running = cli.start("Ask, then clean.", timeout=120)

    asked, client, approved = answer_then_allow(running, people)
    result = running.wait()

    assert result.succeeded, result.describe() + "\n" + model_server.describe()
    session_id = result.session_id()
    assert session_id is not None
    assert client == "gemini"
    assert asked == approved == id_label(session_id)
