"""How each CLI of a discord-watch run is told to ask for approvals (the project's setting)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.base import InvocationRequest, McpRegistration

MCP = McpRegistration(argv=[sys.executable, "-m", "discord_mcp"], env={"DISCORD_BOT_TOKEN": "t"})


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
    assert "--settings" not in argv
    assert argv.index("--") > at  # never after the prompt separator


def test_claude_runs_with_ask_all_also_ask_for_reads(tmp_path: Path) -> None:
    invocation = adapter_for("claude").invocation(request(tmp_path, "ask-all"))
    settings_path = Path(invocation.argv[invocation.argv.index("--settings") + 1])
    settings = json.loads(invocation.files[settings_path])
    [group] = settings["hooks"]["PreToolUse"]
    assert group["matcher"] == "*"
    assert group["hooks"][0]["command"].endswith("-m discord_mcp hook pre-tool-use")
    assert "t" not in group["hooks"][0]["command"].split()  # no secret in the command


def test_with_approvals_off_claude_runs_as_before(tmp_path: Path) -> None:
    argv = adapter_for("claude").invocation(request(tmp_path, "off")).argv
    assert "--permission-prompt-tool" not in argv
    without = dataclasses.replace(request(tmp_path, "ask"), mcp=None)
    assert "--permission-prompt-tool" not in adapter_for("claude").invocation(without).argv
