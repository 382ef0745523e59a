"""A huge tool input is bounded on the card and in the decision file (a preview and a hash of
the whole), and the hook that reads it stays within a bounded memory, as do later hooks."""

from __future__ import annotations

import dataclasses
import functools
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.approvals import cards
from discord_mcp.approvals.request import ToolRequest, describe
from discord_mcp.decisions.model import Decision
from discord_mcp.emulator import RunningEmulator
from tests.support.people import People
from tests.support.settings import env_for

MB = 1024 * 1024
FILE_BOUND = 64 * 1024
RSS_BOUND_KB = 300 * 1024  # the input itself is 35 MB; the incident was 820 MB


@functools.cache
def big_text(size: int = 35 * MB, tail: str = "") -> str:
    """Numbered lines of ``size`` bytes, then ``tail``; built once per process, and only by a
    test that uses it (at collection, four of them cost every worker seconds and 140 MB)."""
    line = "a line of generated text that goes on for a while, number {:08d}\n"
    count = size // len(line.format(0))
    return "".join(line.format(i) for i in range(count)) + tail


def stored(request: ToolRequest) -> dict[str, Any]:
    return {**request.to_json(), "action": dataclasses.asdict(describe(request))}


BIG_REQUESTS: dict[str, Callable[[], ToolRequest]] = {
    "command": lambda: ToolRequest(
        "codex", "Bash", {"command": f"printf '%s' '{big_text()}' > big.txt"}, "s"
    ),
    "write": lambda: ToolRequest(
        "claude", "Write", {"file_path": "big.txt", "content": big_text()}, "s"
    ),
    "other-tool": lambda: ToolRequest(
        "gemini", "mcp_db_query", {"sql": big_text(), "rows": list(range(99))}, "s"
    ),
    "patch": lambda: ToolRequest(
        "codex", "apply_patch", {"command": "*** Begin Patch\n" + big_text()}, "s"
    ),
}


@pytest.mark.parametrize("kind", BIG_REQUESTS)
def test_a_35_mb_input_is_stored_as_a_preview_with_the_hash_of_the_whole(kind: str) -> None:
    document = stored(BIG_REQUESTS[kind]())
    assert len(json.dumps(document, ensure_ascii=False).encode()) < FILE_BOUND
    assert document["tool_input_sha256"]  # the whole input, hashed
    text = json.dumps(document["tool_input"], ensure_ascii=False)
    assert "more characters" in text  # the preview says it is one


def test_the_fingerprint_is_of_the_whole_input_not_the_preview() -> None:
    one = ToolRequest("claude", "Write", {"file_path": "f", "content": big_text(2 * MB, "A")}, "s")
    two = ToolRequest("claude", "Write", {"file_path": "f", "content": big_text(2 * MB, "B")}, "s")
    assert one.fingerprint() != two.fingerprint()
    assert one.to_json()["tool_input"] == two.to_json()["tool_input"]  # the same preview


def test_a_huge_command_is_flagged_and_never_covered_by_a_session_rule() -> None:
    action = describe(ToolRequest("codex", "Bash", {"command": "ls " + "x" * 100_000}, "s"))
    assert action.rule == ""
    assert any("long" in risk for risk in action.risks)


def test_the_card_of_a_huge_input_fits_discord() -> None:
    request = ToolRequest("claude", "Write", {"file_path": "big.txt", "content": big_text()}, "s")
    decision = Decision(
        id="20261123-120000-abcdef",
        project="proj",
        session="sess1234",
        question="Write",
        context=None,
        options=cards.OPTIONS,
        channel_id="1",
        thread_id="2",
        card_message_id="3",
        thread_url="",
        asked_at="2026-11-23T12:00:00.000+00:00",
        kind="approval",
        approval=stored(request),
    )
    text = cards.render_card(decision, ["42"], buttons=True)
    assert len(text) <= 2000
    assert "more line" in text or "more characters" in text


# -- the hook process ---------------------------------------------------------------------------

MEASURE = """
import json, resource, subprocess, sys
with open(sys.argv[1], "rb") as stdin:
    done = subprocess.run(sys.argv[2:], stdin=stdin, capture_output=True)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": done.returncode, "rss_kb": usage.ru_maxrss,
                  "stderr": done.stderr.decode(errors="replace")[-2000:]}))
"""


def measured_hook(payload_file: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    """Run a hook in a fresh parent that reports the hook's own peak memory."""
    hook = [sys.executable, "-m", "discord_mcp", "hook", *args, "--wait", "0.5"]
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(payload_file), *hook],
        capture_output=True,
        encoding="utf-8",
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(
    ("args", "tool", "tool_input"),
    [
        (("pre-tool-use", "--client", "codex"), "Bash", "command"),
        (("permission-request", "--client", "claude"), "Write", "content"),
    ],
    ids=["codex-command", "claude-write"],
)
def test_a_hook_given_35_mb_writes_a_small_decision_file_and_stays_bounded(
    args: tuple[str, ...],
    tool: str,
    tool_input: str,
    discord: RunningEmulator,
    people: People,
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    env = {
        "PATH": "/usr/bin:/bin",
        **env_for(discord, home),
        "DISCORD_MCP_RUN": "1",
        "CLAUDE_CODE_SESSION_ATTENDED": "0",
    }
    arguments = {"file_path": "big.txt"} if tool == "Write" else {}
    arguments[tool_input] = "echo " + big_text() if tool == "Bash" else big_text()
    payload = {
        "session_id": "sess-big",
        "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": arguments,
        "tool_use_id": "call_big",
        "turn_id": "turn-1",
    }
    payload_file = tmp_path / "payload.json"
    payload_file.write_text(json.dumps(payload), encoding="utf-8")

    first = measured_hook(payload_file, env, *args)
    assert first["code"] == 0, first["stderr"]
    files = list((home / "decisions").glob("*.json"))
    assert len(files) == 1
    assert files[0].stat().st_size < FILE_BOUND
    assert first["rss_kb"] < RSS_BOUND_KB, first
    [thread] = people.threads()
    [card] = people.messages(thread["id"])
    assert len(card["content"]) <= 2000

    # Later hooks read this session's earlier approvals: a small file costs them little.
    small = tmp_path / "small.json"
    small.write_text(
        json.dumps({**payload, "tool_input": {tool_input: "touch s.txt", "file_path": "s.txt"}}),
        encoding="utf-8",
    )
    later = measured_hook(small, env, *args)
    assert later["code"] == 0, later["stderr"]
    assert len(people.threads()) == 1
    assert len(people.messages(thread["id"])) == 2  # it asked, in the session's thread
    assert later["rss_kb"] < 120 * 1024, later


def test_a_decision_file_from_before_the_bound_does_not_weigh_on_later_hooks(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    decisions = home / "decisions"
    decisions.mkdir(parents=True)
    old = {
        "version": 1,
        "id": "20260101-000000-abcdef",
        "project": "proj",
        "session": "sess-big",
        "question": "Run: huge",
        "context": None,
        "options": ["Allow", "Deny"],
        "channel_id": discord.channel_id,
        "thread_id": "",
        "card_message_id": "",
        "thread_url": "",
        "asked_at": "2026-01-01T00:00:00+00:00",
        "status": "answered",
        "answer": "allow",
        "kind": "approval",
        "scope": "session",
        "approval": {
            "client": "codex",
            "session_id": "sess-big",
            "tool_name": "Bash",
            "tool_input": {"command": big_text()},
            "action": {"title": "Run", "command": big_text(), "rule": "cmd:echo"},
        },
    }
    (decisions / "20260101-000000-abcdef.json").write_text(json.dumps(old), encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", **env_for(discord, home), "DISCORD_MCP_RUN": "1"}
    payload = {
        "session_id": "sess-big",
        "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "echo small > s.txt"},
        "tool_use_id": "call_1",
        "turn_id": "turn-1",
    }
    payload_file = tmp_path / "payload.json"
    payload_file.write_text(json.dumps(payload), encoding="utf-8")
    result = measured_hook(payload_file, env, "pre-tool-use", "--client", "codex")
    assert result["code"] == 0, result["stderr"]
    assert result["rss_kb"] < 120 * 1024, result
