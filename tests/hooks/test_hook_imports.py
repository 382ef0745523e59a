"""A hook process loads only what its event needs: the agent CLIs start one per tool call or
turn, so every module it imports is paid for again and again (issue 36). The Stop and
SessionStart hooks read the local decisions and never load the approval machinery or an HTTP
client; no hook loads the MCP server's libraries or the ACP SDK."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from discord_mcp.decisions.store import DecisionStore
from tests.hooks.test_session_hooks import SESSION, answer, ask, payload
from tests.support.imports import PROFILE, imported, of_packages

SERVER_LIBRARIES = ("fastmcp", "mcp", "mcp_types", "acp", "uvicorn", "starlette")
APPROVALS = ("discord_mcp.approvals", "discord_mcp.server", "httpx")


def hook(
    argv: list[str], body: dict[str, object], env: dict[str, str], cwd: Path
) -> tuple[str, set[str]]:
    """Run ``discord-mcp hook ARGV`` as a CLI does; its stdout and the modules it imported."""
    done = subprocess.run(
        [sys.executable, "-m", "discord_mcp", "hook", *argv],
        input=json.dumps(body),
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, **env, **PROFILE},
        cwd=cwd,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = imported(done.stderr)
    assert "discord_mcp.hooks.cli" in names  # the profile was read: an empty one proves nothing
    return done.stdout, names


def test_the_stop_hook_blocks_without_loading_approvals_http_or_the_server(
    tmp_path: Path, hook_env: dict[str, str]
) -> None:
    ask(DecisionStore(Path(hook_env["DISCORD_MCP_HOME"])), 1)
    out, names = hook(["stop"], payload(cwd=str(tmp_path)), hook_env, tmp_path)
    assert json.loads(out)["decision"] == "block"  # it did its work
    assert of_packages(names, APPROVALS + SERVER_LIBRARIES) == []


def test_the_session_start_hook_hands_answers_without_loading_approvals_http_or_the_server(
    tmp_path: Path, hook_env: dict[str, str]
) -> None:
    ask(DecisionStore(Path(hook_env["DISCORD_MCP_HOME"])), 1, **answer())
    event = payload(cwd=str(tmp_path), hook_event_name="SessionStart", source="startup")
    out, names = hook(["session-start"], event, hook_env, tmp_path)
    assert "Question 1?" in out  # it handed the answer
    assert of_packages(names, APPROVALS + SERVER_LIBRARIES) == []


def test_a_guard_hook_answering_a_harmless_read_loads_no_server_library(
    tmp_path: Path, hook_env: dict[str, str]
) -> None:
    event = {
        "session_id": SESSION,
        "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": str(tmp_path / "notes.txt")},
    }
    out, names = hook(["pre-tool-use", "--client", "claude"], event, hook_env, tmp_path)
    assert out == ""  # a harmless read runs: no answer, exit 0
    assert of_packages(names, SERVER_LIBRARIES) == []
