"""A guard hook that is killed, or cannot even start, still blocks the call.

Every command line a guard hook is configured with (``install --approvals`` for each client,
and the hooks ``discord-watch`` gives a run: approvals and the network guard) is run as its CLI
runs it, through that CLI's shell (tests/support/hook_runs.py), and the hook's process is
killed with SIGKILL while it waits, as the OOM killer would: each CLI reads what is left as a
block, with a sentence saying why. The hook's own answers pass through the wrapper unchanged.
The real CLIs doing the same with a card waiting: tests/e2e/test_killed_hooks_e2e.py.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.hooks.guard import FAIL_CLOSED, KILLED, command, fails_closed, hook_words
from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.base import InvocationRequest, McpRegistration
from discord_mcp.runs.offline import Jail
from discord_mcp.setup import approvals, bundles
from discord_mcp.setup.clients import Client
from tests.support.hook_runs import cli_reading, run_configured

SERVER = [sys.executable, "-m", "discord_mcp"]
WITHIN = 30.0
JAIL = Jail("unshare", sys.executable, 4026531840)
"""A run without network, as if this machine could make namespaces."""
TOOLS = {"gemini": "run_shell_command", "codex": "Bash", "claude": "Bash"}


def event(client: str, tmp_path: Path) -> dict[str, Any]:
    return {
        "session_id": "5b0c7c1e-aaaa-4bbb-8ccc-000000000042",
        "cwd": str(tmp_path),
        "tool_name": TOOLS[client],
        "tool_input": {"command": "touch would-run.txt"},
    }


def invocation(tool: str, tmp_path: Path, **changes: Any) -> Any:
    request = InvocationRequest(
        executable=tool,
        prompt="go",
        resume_key=None,
        default_args=(),
        job_dir=tmp_path / "job",
        shared_dir=tmp_path / "shared",
        thread_id="1359000000000000000",
        env={"HOME": str(tmp_path / "user")},
        mcp=McpRegistration(argv=SERVER, env={"DISCORD_MCP_RUN": "1"}),
        approvals="ask",
    )
    return adapter_for(tool).invocation(dataclasses.replace(request, **changes))  # type: ignore[arg-type]


def installed(client: Client, tmp_path: Path) -> list[tuple[str, str]]:
    event = "before-tool" if client == "gemini" else "permission-request"
    [handler] = approvals.desired_group(client, tmp_path / "discord.env")["hooks"]
    return [(event, handler["command"])]


def claude_run(tmp_path: Path) -> list[tuple[str, str]]:
    made = invocation("claude", tmp_path, approvals="ask-all", allow_network=False, jail=JAIL)
    [path] = [p for p in made.files if p.name == "claude-settings.json"]
    groups = json.loads(made.files[path])["hooks"]["PreToolUse"]
    assert all(g["hooks"][0]["onFailure"] == "block" for g in groups)
    return [("pre-tool-use", g["hooks"][0]["command"]) for g in groups]


def codex_run(tmp_path: Path) -> list[tuple[str, str]]:
    found = []
    for flag, value in itertools.pairwise(invocation("codex", tmp_path).argv):
        if flag == "-c" and value.startswith("hooks."):
            key, toml = value.split("=", 1)
            [handler] = tomllib.loads(f"h = {toml}")["h"][0]["hooks"]
            name = {
                "hooks.PreToolUse": "pre-tool-use",
                "hooks.PermissionRequest": "permission-request",
            }
            found.append((name[key], handler["command"]))
    assert len(found) == 2
    return found


def gemini_run(tmp_path: Path) -> list[tuple[str, str]]:
    made = invocation("gemini", tmp_path, allow_network=False, jail=JAIL)
    [path] = [p for p in made.files if p.name == "settings.json"]
    groups = json.loads(made.files[path])["hooks"]["BeforeTool"]
    commands = [h["command"] for g in groups for h in g["hooks"]]
    assert len(commands) == 2  # the network guard and the approvals
    return [("before-tool", c) for c in commands]


CONFIGURED = [
    pytest.param("claude", lambda p: installed("claude", p), id="install-claude"),
    pytest.param("codex", lambda p: installed("codex", p), id="install-codex"),
    pytest.param("gemini", lambda p: installed("gemini", p), id="install-gemini"),
    pytest.param("claude", claude_run, id="run-claude"),
    pytest.param("codex", codex_run, id="run-codex"),
    pytest.param("gemini", gemini_run, id="run-gemini"),
]


@pytest.mark.parametrize(("client", "configured"), CONFIGURED)
def test_a_killed_guard_hook_is_read_as_a_block_by_its_cli(
    client: str, configured: Any, tmp_path: Path
) -> None:
    for hook, line in configured(tmp_path):
        run = run_configured(line, client, event(client, tmp_path), {}, within=WITHIN, kill=True)
        reading = cli_reading(client, hook, run)
        assert reading.verdict == "block", (line, run.describe())
        assert run.code == 2
        said = KILLED.replace("$s", "137")
        assert said in run.stderr
        if not (client == "claude" and hook == "permission-request"):
            assert said in reading.reason  # what the agent is told


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
def test_a_guard_hook_whose_python_is_gone_blocks_the_call(client: Client, tmp_path: Path) -> None:
    [(hook, line)] = installed(client, tmp_path)
    gone = line.replace(sys.executable, str(tmp_path / "gone" / "python3"), 1)
    run = run_configured(gone, client, event(client, tmp_path), {}, within=WITHIN)
    assert cli_reading(client, hook, run).verdict == "block", run.describe()
    assert KILLED.replace("$s", "127") in run.stderr


def test_the_hooks_own_answers_pass_through_the_wrapper_unchanged(tmp_path: Path) -> None:
    [(_, line)] = installed("gemini", tmp_path)  # its env file does not exist: a block
    run = run_configured(line, "gemini", event("gemini", tmp_path), {}, within=WITHIN)
    assert run.code == 2
    assert json.loads(run.stdout)["decision"] == "deny"
    assert "not a readable file" in run.stderr
    assert KILLED.split("(")[0] not in run.stderr  # the hook's reason alone
    off = {"DISCORD_MCP_APPROVALS": "off"}  # no decision, at once
    run = run_configured(line, "gemini", event("gemini", tmp_path), off, within=WITHIN)
    assert (run.code, json.loads(run.stdout), run.stderr) == (0, {}, "")


def test_every_guard_command_written_anywhere_is_wrapped(tmp_path: Path) -> None:
    lines = [
        line
        for _, make in ((c.values[0], c.values[1]) for c in CONFIGURED)
        for _, line in make(tmp_path)  # type: ignore[operator]
    ]
    plugin = bundles.claude_plugin()["hooks"]["PermissionRequest"][0]["hooks"][0]["command"]
    extension = bundles.gemini_hooks()["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
    lines += [plugin, extension]
    assert all(fails_closed(line) for line in lines), lines
    assert plugin.startswith('uvx --from "${CLAUDE_PLUGIN_ROOT}" discord-mcp hook ')
    assert hook_words(extension)[:4] == ["uvx", "--from", "${extensionPath}", "discord-mcp"]


def test_the_wrapper_quotes_the_hooks_words_and_adds_nothing_else_to_them() -> None:
    argv = ["/opt/my python/bin/python3", "-m", "discord_mcp", "hook", "before-tool", "--env-file",
            "/home/a b/it's.env"]  # fmt: skip
    line = command(argv)
    assert line.endswith(FAIL_CLOSED)
    assert hook_words(line) == argv
    assert not fails_closed(line.removesuffix(FAIL_CLOSED))
    assert hook_words("'unbalanced") == []
