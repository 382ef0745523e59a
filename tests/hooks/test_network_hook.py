"""``discord-mcp hook network``: a run without network denies the calls that would use it,
and fails closed (issue 23)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from discord_mcp.hooks.cli import main
from discord_mcp.judge.network import command_network_use


def hook(client: str, payload: Any) -> dict[str, Any] | None:
    out = io.StringIO()
    stdin = io.StringIO(payload if isinstance(payload, str) else json.dumps(payload))
    code = main(
        ["network", "--client", client], stdin=stdin, stdout=out, stderr=io.StringIO(), environ={}
    )
    answer = json.loads(out.getvalue()) if out.getvalue().strip() else None
    # A denial may also exit 2 (the guard hooks' form for a failure, which every CLI honours).
    assert code == 0 or (code == 2 and answer is not None)
    return answer


def call(tool: str, **tool_input: Any) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input}


def test_claudes_shell_command_that_fetches_is_denied_with_a_reason() -> None:
    answer = hook("claude", call("Bash", command="echo hi > a.txt; curl -s https://x.test/"))
    assert answer is not None
    output = answer["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    assert "no network" in output["permissionDecisionReason"]


def test_claudes_local_command_and_edits_get_no_decision() -> None:
    assert hook("claude", call("Bash", command="python3 -m pytest -q && git diff")) is None
    assert hook("claude", call("Write", file_path="a.txt", content="x")) is None
    assert hook("claude", call("mcp__discord__ask_decision", question="?")) is None


def test_web_tools_and_other_mcp_servers_are_denied_for_gemini() -> None:
    assert hook("gemini", call("web_fetch", prompt="https://x"))["decision"] == "deny"  # type: ignore[index]
    assert hook("gemini", call("mcp_fetch_get", url="x"))["decision"] == "deny"  # type: ignore[index]
    assert hook("gemini", call("run_shell_command", command="ls")) == {}


@pytest.mark.parametrize("client", ["claude", "gemini"])
def test_an_unreadable_event_is_a_denial_never_a_pass(client: str) -> None:
    answer = hook(client, "this is not json")
    assert answer is not None
    text = json.dumps(answer)
    assert "deny" in text


@pytest.mark.parametrize(
    "command",
    [
        "wget -q http://x",
        "git push origin main",
        "cd app && sudo -u bob ssh host",
        "npm install left-pad",
        "python3 -m pip install requests",
        "python -c 'import socket; socket.create_connection((\"h\", 80))'",
        "bash -c 'cat < /dev/tcp/host/80'",
        "echo $(nc -l 8080)",
        'echo "unbalanced',
    ],
)
def test_commands_that_use_the_network_are_named(command: str) -> None:
    assert command_network_use(command) is not None


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "git commit -m 'handle requests'",
        "git diff HEAD~1",
        "python3 -m pytest -q",
        "npm test",
        "make build && ./run-tests.sh",
        "find . -name '*.py' | xargs grep -n TODO",
    ],
)
def test_local_commands_are_left_alone(command: str) -> None:
    assert command_network_use(command) is None
