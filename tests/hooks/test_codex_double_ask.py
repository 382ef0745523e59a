"""Codex asks twice for a call that must leave its sandbox; "Allow once" answers that one call.

Codex 0.169.0 runs its ``PreToolUse`` hook (with the call's ``tool_use_id`` and the turn's
``turn_id``) and then, for the same call, its ``PermissionRequest`` hook (with the same
``turn_id`` and no ``tool_use_id``). One click answers both; a second call, even with the same
text in the same turn, asks again. The hooks run here as Codex runs them: a process with the
event's JSON on stdin.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.approvals.cards import YES
from discord_mcp.emulator import RunningEmulator
from tests.support.model_server import wait_until
from tests.support.people import People
from tests.support.settings import env_for

HOOK = [sys.executable, "-m", "discord_mcp", "hook"]
SESSION = "01a21493-8274-7653-a0da-76119d22a52d"
TURN = "01a21493-8286-7171-bb5e-bdaf67cd351e"
COMMAND = "echo codex > /tmp/outside.txt"


@pytest.fixture
def environ(discord: RunningEmulator, tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    return {
        "PATH": "/usr/bin:/bin",
        **env_for(discord, home),
        "DISCORD_MCP_RUN": "1",  # a discord-watch run: no one at a terminal
        "DISCORD_MCP_APPROVALS": "ask",
    }


def pre_tool_use(call: str, *, turn: str = TURN, command: str = COMMAND) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "turn_id": turn,
        "transcript_path": None,
        "cwd": "/tmp",
        "hook_event_name": "PreToolUse",
        "model": "gpt-5.5",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": call,
    }


def permission_request(*, turn: str = TURN, command: str = COMMAND) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "turn_id": turn,
        "transcript_path": None,
        "cwd": "/tmp",
        "hook_event_name": "PermissionRequest",
        "model": "gpt-5.5",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "write outside"},
    }


def run(event: str, payload: dict[str, Any], env: dict[str, str], wait: float = 2.0) -> str:
    """Run the hook as Codex does; its stdout ("" means: go on)."""
    process = subprocess.run(
        [*HOOK, event, "--client", "codex", "--wait", f"{wait:g}"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=90,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    return process.stdout


def allowed(out: str, event: str) -> bool:
    if event == "pre-tool-use":
        return out.strip() == ""
    answer = json.loads(out)["hookSpecificOutput"]["decision"]
    return bool(answer["behavior"] == "allow")


def cards(people: People) -> list[dict[str, Any]]:
    return [
        message
        for thread in people.threads()
        for message in people.messages(thread["id"])
        if "**Approval needed**" in message["content"]
    ]


def allow_next_card(people: People, count: int) -> None:
    found = wait_until(lambda: len(cards(people)) >= count or None, timeout=30, what="a card")
    assert found
    card = cards(people)[count - 1]
    people.react(card["channel_id"], card["id"], YES)


def ask_and_allow(people: People, env: dict[str, str], call: str, card_number: int) -> str:
    with ThreadPoolExecutor(1) as pool:
        asking = pool.submit(run, "pre-tool-use", pre_tool_use(call), env, 30)
        allow_next_card(people, card_number)
        return asking.result(timeout=90)


def test_one_click_answers_codexs_two_asks_for_one_call(
    people: People, environ: dict[str, str]
) -> None:
    assert allowed(ask_and_allow(people, environ, "call_1", 1), "pre-tool-use")
    assert allowed(run("permission-request", permission_request(), environ), "permission-request")
    assert len(cards(people)) == 1


def test_the_second_ask_is_used_once(people: People, environ: dict[str, str]) -> None:
    ask_and_allow(people, environ, "call_1", 1)
    assert allowed(run("permission-request", permission_request(), environ), "permission-request")
    again = run("permission-request", permission_request(), environ, wait=1)
    assert not allowed(again, "permission-request")
    assert len(cards(people)) == 2  # the owner was asked about the repeat


def test_another_call_with_the_same_text_in_the_same_turn_asks_again(
    people: People, environ: dict[str, str]
) -> None:
    ask_and_allow(people, environ, "call_1", 1)
    second = run("pre-tool-use", pre_tool_use("call_2"), environ, wait=1)
    assert not allowed(second, "pre-tool-use")
    assert len(cards(people)) == 2


def test_a_permission_request_in_another_turn_asks(people: People, environ: dict[str, str]) -> None:
    ask_and_allow(people, environ, "call_1", 1)
    other_turn = permission_request(turn="01a21493-9999-7171-bb5e-bdaf67cd351e")
    assert not allowed(run("permission-request", other_turn, environ, wait=1), "permission-request")
    assert len(cards(people)) == 2


def test_a_permission_request_for_another_command_asks(
    people: People, environ: dict[str, str]
) -> None:
    ask_and_allow(people, environ, "call_1", 1)
    other = permission_request(command="echo other > /tmp/outside.txt")
    assert not allowed(run("permission-request", other, environ, wait=1), "permission-request")


def test_a_permission_request_without_an_allowed_pre_tool_use_asks(
    people: People, environ: dict[str, str]
) -> None:
    denied = run("pre-tool-use", pre_tool_use("call_1"), environ, wait=1)  # no one answers
    assert not allowed(denied, "pre-tool-use")
    assert not allowed(
        run("permission-request", permission_request(), environ, wait=1), "permission-request"
    )


def test_two_calls_with_the_same_text_at_once_get_a_card_each(
    people: People, environ: dict[str, str]
) -> None:
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(run, "pre-tool-use", pre_tool_use("call_1"), environ, 8)
        wait_until(lambda: len(cards(people)) >= 1 or None, timeout=30, what="a card")
        second = pool.submit(run, "pre-tool-use", pre_tool_use("call_2"), environ, 8)
        wait_until(lambda: len(cards(people)) >= 2 or None, timeout=30, what="a second card")
        allow_next_card(people, 1)
        outs = [first.result(timeout=90), second.result(timeout=90)]
    assert sorted(allowed(out, "pre-tool-use") for out in outs) == [False, True]
