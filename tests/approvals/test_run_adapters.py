"""How each CLI of a discord-watch run is told to ask for approvals (the project's setting)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.base import InvocationRequest, McpRegistration

MCP = McpRegistration(
    argv=[sys.executable, "-m", "discord_mcp"], env={"DISCORD_MCP_ENV_FILE": "/state/server.env"}
)


def request(tmp_path: Path, approvals: str) -> InvocationRequest:
    return InvocationRequest(
        executable="cli",
        prompt="go",
        resume_key=None,
        default_args=(),
        job_dir=tmp_path,
        shared_dir=tmp_path / "shared",
        thread_id="1359000000000000000",
        env={},
        mcp=MCP,
        approvals=approvals,
    )


def test_claude_runs_send_permission_prompts_to_the_approve_tool(tmp_path: Path) -> None:
    argv = adapter_for("claude").invocation(request(tmp_path, "ask")).argv
    at = argv.index("--permission-prompt-tool")
    assert argv[at + 1] == "mcp__discord__approve"
    assert argv.index("--") > at  # never after the prompt separator
    # Its only hook: reads of secrets go to the prompt too (tests/hooks/test_reads_of_secrets.py).
    invocation = adapter_for("claude").invocation(request(tmp_path, "ask"))
    settings_path = Path(argv[argv.index("--settings") + 1])
    [group] = json.loads(invocation.files[settings_path])["hooks"]["PreToolUse"]
    assert group["matcher"] == "Glob|Grep|LS|NotebookRead|Read"


def test_claude_runs_with_ask_all_also_ask_for_reads(tmp_path: Path) -> None:
    invocation = adapter_for("claude").invocation(request(tmp_path, "ask-all"))
    settings_path = Path(invocation.argv[invocation.argv.index("--settings") + 1])
    settings = json.loads(invocation.files[settings_path])
    [group] = settings["hooks"]["PreToolUse"]
    assert group["matcher"] == "*"
    [hook] = group["hooks"]
    assert "-m discord_mcp hook pre-tool-use --ask-all --timeout 30" in hook["command"]
    assert hook["timeout"] == 30
    assert hook["onFailure"] == "block"  # a hook that cannot start or times out blocks
    assert "server.env" not in hook["command"]  # it asks, it needs no settings


def test_with_approvals_off_claude_runs_as_before(tmp_path: Path) -> None:
    argv = adapter_for("claude").invocation(request(tmp_path, "off")).argv
    assert "--permission-prompt-tool" not in argv
    without = dataclasses.replace(request(tmp_path, "ask"), mcp=None)
    assert "--permission-prompt-tool" not in adapter_for("claude").invocation(without).argv


def test_gemini_runs_go_yolo_behind_a_before_tool_hook_that_asks(tmp_path: Path) -> None:
    home = tmp_path / "user"
    (home / ".gemini").mkdir(parents=True)
    theirs = {"matcher": "write_file", "hooks": [{"type": "command", "command": "lint"}]}
    (home / ".gemini" / "settings.json").write_text(
        json.dumps({"hooks": {"BeforeTool": [theirs]}}), encoding="utf-8"
    )
    ask = dataclasses.replace(request(tmp_path, "ask"), env={"HOME": str(home)})
    invocation = adapter_for("gemini").invocation(ask)
    argv = invocation.argv
    assert argv[argv.index("--approval-mode") + 1] == "yolo"
    assert invocation.env["DISCORD_MCP_APPROVALS"] == "ask"
    [path] = [p for p in invocation.files if p.name == "settings.json"]
    groups = json.loads(invocation.files[path])["hooks"]["BeforeTool"]
    assert groups[0] == theirs  # the user's own hooks stay
    [ours] = groups[1]["hooks"]
    assert "hook before-tool" in ours["command"]
    assert ours["timeout"] > 600_000  # our wait (600 s) always ends first
    # Gemini strips *TOKEN* variables from a hook's environment: the token comes by reference.
    assert ours["env"]["DISCORD_MCP_ENV_FILE"] == "/state/server.env"
    # The user's interactive hook from `install gemini --approvals` is replaced, not doubled.
    installed = {"matcher": ".*", "hooks": [{"name": "discord-mcp approvals", "command": "x"}]}
    (home / ".gemini" / "settings.json").write_text(
        json.dumps({"hooks": {"BeforeTool": [theirs, installed]}}), encoding="utf-8"
    )
    again = adapter_for("gemini").invocation(ask)
    [path] = [p for p in again.files if p.name == "settings.json"]
    groups = json.loads(again.files[path])["hooks"]["BeforeTool"]
    assert next(g["hooks"][0]["command"] for g in groups) == "lint"
    assert len(groups) == 2
    assert "hook before-tool" in groups[1]["hooks"][0]["command"]


def test_gemini_runs_with_approvals_off_keep_their_approval_mode(tmp_path: Path) -> None:
    off = dataclasses.replace(request(tmp_path, "off"), env={"HOME": str(tmp_path / "u")})
    invocation = adapter_for("gemini").invocation(off)
    assert "--approval-mode" not in invocation.argv
    assert invocation.env["DISCORD_MCP_APPROVALS"] == "off"  # the shared hook lets all through
