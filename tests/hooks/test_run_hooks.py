"""The hooks ``discord-watch`` writes for a run's CLI cannot fail open.

Each run adapter's hook is taken as written (command, timeout, ``env``) and run as its CLI
would, with what can go missing gone: the settings (a run's environment without our variables,
a Gemini hook without its ``env``). The call is blocked every time, and each hook knows the
timeout its CLI gives it (``--timeout``), so its deadline comes first.
"""

from __future__ import annotations

import itertools
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.hooks.guard import budget, fails_closed, hook_words
from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.base import InvocationRequest, McpRegistration
from tests.support.hook_runs import HOOK, cli_reading, run_hook

ENV = {"DISCORD_MCP_ENV_FILE": "/nowhere/server.env", "DISCORD_MCP_RUN": "1"}


def invocation(tool: str, tmp_path: Path, approvals: str = "ask") -> Any:
    return adapter_for(tool).invocation(  # type: ignore[arg-type]
        InvocationRequest(
            executable=tool,
            prompt="go",
            resume_key=None,
            default_args=(),
            job_dir=tmp_path / "job",
            shared_dir=tmp_path / "shared",
            thread_id="1359000000000000000",
            env={"HOME": str(tmp_path / "user")},
            mcp=McpRegistration(argv=[sys.executable, "-m", "discord_mcp"], env=ENV),
            approvals=approvals,
        )
    )


def codex_hooks(tmp_path: Path) -> dict[str, dict[str, Any]]:
    """Codex's ``-c hooks.<event>=[...]`` handlers, by event."""
    argv = list(invocation("codex", tmp_path).argv)
    found = {}
    for flag, value in itertools.pairwise(argv):
        if flag == "-c" and value.startswith("hooks."):
            key, toml = value.split("=", 1)
            found[key.removeprefix("hooks.")] = tomllib.loads(f"h = {toml}")["h"][0]["hooks"][0]
    return found


def gemini_hook(tmp_path: Path) -> dict[str, Any]:
    made = invocation("gemini", tmp_path)
    [path] = [p for p in made.files if p.name == "settings.json"]
    [ours] = json.loads(made.files[path])["hooks"]["BeforeTool"][-1]["hooks"]
    return dict(ours)


def hook_args(command: str) -> list[str]:
    """The ``discord-mcp hook`` arguments of a hook command this Python runs (the command
    blocks the call when the hook is killed: tests/hooks/test_killed_hooks.py)."""
    assert fails_closed(command), command
    argv = hook_words(command)
    assert argv[: len(HOOK)] == HOOK, command
    return argv[len(HOOK) :]


def event(tmp_path: Path, tool: str) -> dict[str, Any]:
    return {
        "session_id": "0f3c2a9b-1111-4222-8333-944445555666",
        "cwd": str(tmp_path),
        "tool_name": tool,
        "tool_input": {"command": "touch would-run.txt"},
    }


CODEX_EVENTS = [("PreToolUse", "pre-tool-use"), ("PermissionRequest", "permission-request")]


@pytest.mark.parametrize(("event_name", "hook"), CODEX_EVENTS)
def test_a_codex_runs_hook_without_its_settings_blocks_the_call(
    event_name: str, hook: str, tmp_path: Path
) -> None:
    handler = codex_hooks(tmp_path)[event_name]
    args = hook_args(handler["command"])
    assert args[args.index("--timeout") + 1] == str(handler["timeout"])
    # Codex hands its own environment on; here it lost our variables.
    run = run_hook(args, event(tmp_path, "Bash"), {}, within=handler["timeout"])
    reading = cli_reading("codex", hook, run)
    assert reading.verdict == "block", run.describe()
    assert "DISCORD_BOT_TOKEN is not set" in reading.reason


def test_a_gemini_runs_hook_without_its_env_blocks_the_call(tmp_path: Path) -> None:
    ours = gemini_hook(tmp_path)
    args = hook_args(ours["command"])
    seconds = ours["timeout"] / 1000
    assert float(args[args.index("--timeout") + 1]) == seconds
    assert ours["env"] == ENV  # settings by reference: the named file does not exist here
    for env in ({}, ours["env"]):
        run = run_hook(args, event(tmp_path, "run_shell_command"), env, within=seconds)
        reading = cli_reading("gemini", "before-tool", run)
        assert reading.verdict == "block", run.describe()


def test_a_claude_ask_all_runs_hook_blocks_an_event_it_cannot_read(tmp_path: Path) -> None:
    made = invocation("claude", tmp_path, approvals="ask-all")
    [path] = [p for p in made.files if p.name == "claude-settings.json"]
    [hook] = json.loads(made.files[path])["hooks"]["PreToolUse"][0]["hooks"]
    args = hook_args(hook["command"])
    run = run_hook(args, b"{", {}, within=hook["timeout"])
    assert cli_reading("claude", "pre-tool-use", run).verdict == "block", run.describe()
    assert hook["onFailure"] == "block"


def test_every_run_hook_leaves_itself_time_to_post_and_wait(tmp_path: Path) -> None:
    for handler in codex_hooks(tmp_path).values():
        args = hook_args(handler["command"])
        wait = float(args[args.index("--wait") + 1])
        assert budget(handler["timeout"], "codex") > wait  # the owner's whole wait fits
    ours = gemini_hook(tmp_path)
    args = hook_args(ours["command"])
    assert budget(ours["timeout"] / 1000, "gemini") > float(args[args.index("--wait") + 1])
