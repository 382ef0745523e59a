"""With Discord down, the real CLIs' guard hooks keep the agent's shell command from running.

Discord here is an emulator that was started and stopped (its address answers nothing). Each
CLI runs headless on the scripted model, which asks for one shell command that would create a
file; the hooks are configured exactly as ``discord-mcp install --approvals`` and
``discord-watch`` runs write them. The file must not exist afterwards, and the model must have
been told why in the tool's result. A Gemini run whose hook lost its settings (its ``env``) is
blocked the same way: in yolo mode, a hook that merely failed would let the call run.
"""

from __future__ import annotations

import itertools
import json
import shlex
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.base import InvocationRequest, McpRegistration
from discord_mcp.setup.approvals import install_hook
from discord_mcp.setup.clients import Client
from tests.support.agent_clis import AgentCliFactory
from tests.support.model_server import ModelServer, ShellCall, quote_tool_result

pytestmark = pytest.mark.e2e

SERVER = [sys.executable, "-m", "discord_mcp"]
INSTALLED_ARGS: dict[str, list[str]] = {
    "claude": [],  # headless without a permission-prompt tool: the hook decides
    "codex": ["--approve-for-me", "--dangerously-bypass-hook-trust"],
    "gemini": ["--approval-mode", "yolo"],  # headless Gemini offers its shell only then
}
TOLD = "The owner could not be asked, so this tool call was not run: Discord is unreachable"


@pytest.fixture
def stopped_discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    """An emulator that was running and is now stopped: Discord is down."""
    discord = make_emulator()
    discord.stop()
    return discord


def env_file(discord: RunningEmulator, tmp_path: Path) -> Path:
    """The private .env ``setup`` writes, for a Discord that is down."""
    path = tmp_path / "discord.env"
    lines = {
        "DISCORD_BOT_TOKEN": discord.token,
        "DISCORD_CHANNEL_ID": discord.channel_id,
        "DISCORD_OWNER_IDS": discord.owner_user_id,
        "DISCORD_API_BASE": discord.api_base,
        "DISCORD_MCP_HOME": str(tmp_path / "home"),
        "PROJECT_NAME": "proj",
    }
    path.write_text("".join(f"{k}={v}\n" for k, v in lines.items()), encoding="utf-8")
    path.chmod(0o600)
    return path


def run_env(discord: RunningEmulator, tmp_path: Path) -> dict[str, str]:
    """What ``discord-watch`` gives a run's server and hooks (the token by reference)."""
    return {
        "DISCORD_MCP_ENV_FILE": str(env_file(discord, tmp_path)),
        "DISCORD_CHANNEL_ID": discord.channel_id,
        "DISCORD_OWNER_IDS": discord.owner_user_id,
        "DISCORD_MCP_HOME": str(tmp_path / "home"),
        "DISCORD_API_BASE": discord.api_base,
        "DISCORD_MCP_GATEWAY": "follow",
        "DISCORD_MCP_RUN": "1",
        "DISCORD_MCP_APPROVAL_WAIT_SECONDS": "600",
    }


def invocation(tool: str, tmp_path: Path, env: dict[str, str], home: Path) -> Any:
    return adapter_for(tool).invocation(  # type: ignore[arg-type]
        InvocationRequest(
            executable=tool,
            prompt="go",
            resume_key=None,
            default_args=(),
            job_dir=tmp_path / "job",
            shared_dir=tmp_path / "shared",
            thread_id="1359000000000000000",
            env={"HOME": str(home)},
            mcp=McpRegistration(argv=SERVER, env=env),
            approvals="ask",
        )
    )


def told(model_server: ModelServer) -> str:
    [result] = model_server.turn_requests()[-1].latest_tool_results()
    return result.text


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
def test_the_installed_hook_keeps_the_command_from_running_while_discord_is_down(
    client: Client,
    stopped_discord: RunningEmulator,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    cli = agent_cli(client, [], extra_args=INSTALLED_ARGS[client])
    dotenv = env_file(stopped_discord, tmp_path)
    install_hook(client, "user", env_file=dotenv, home=cli.home, cwd=cli.workdir, environ=cli.env())
    escalate = {"sandbox_permissions": "require_escalated", "justification": "outside"}
    model_server.script(
        ShellCall("echo ran > ran.txt", codex_arguments=escalate), quote_tool_result()
    )
    result = cli.run("Make the file.", timeout=120)

    assert result.succeeded, result.describe()
    assert not (cli.workdir / "ran.txt").exists()
    assert TOLD in told(model_server), result.stdout[-6000:]


def test_a_codex_runs_hooks_keep_the_command_from_running_while_discord_is_down(
    stopped_discord: RunningEmulator,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    env = run_env(stopped_discord, tmp_path)
    made = invocation("codex", tmp_path, env, tmp_path)
    argv = list(made.argv)
    pairs = itertools.pairwise(argv)
    hooks = [value for flag, value in pairs if flag == "-c" and value.startswith("hooks.")]
    assert len(hooks) == 2  # PreToolUse and PermissionRequest, as the run gets them
    flags = [w for w in argv if w in ("--dangerously-bypass-hook-trust", "--approve-for-me")]
    extra = [*flags, *(a for h in hooks for a in ("-c", h))]
    cli = agent_cli("codex", [], extra_args=extra, extra_env=dict(made.env))
    model_server.script(ShellCall("echo ran > ran.txt"), quote_tool_result())
    result = cli.run("Make the file.", timeout=120)

    assert result.succeeded, result.describe()
    assert not (cli.workdir / "ran.txt").exists()
    assert TOLD in told(model_server)
    # The PreToolUse hook knows the timeout Codex gives it.
    pre = tomllib.loads("h = " + hooks[0].split("=", 1)[1])["h"][0]["hooks"][0]
    assert f"--timeout {pre['timeout']}" in pre["command"]


@pytest.mark.parametrize("settings_gone", [False, True], ids=["down", "hook-env-missing"])
def test_a_gemini_run_in_yolo_mode_never_runs_the_command_unasked(
    settings_gone: bool,
    stopped_discord: RunningEmulator,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    cli = agent_cli("gemini", [], extra_args=["--approval-mode", "yolo"])
    env = run_env(stopped_discord, tmp_path)
    made = invocation("gemini", tmp_path, env, cli.home)
    [overlay] = [p for p in made.files if p.name == "settings.json"]
    hooks = json.loads(made.files[overlay])["hooks"]
    if settings_gone:
        for group in hooks["BeforeTool"]:
            for hook in group["hooks"]:
                hook.pop("env", None)
    settings_path = cli.home / ".gemini" / "settings.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    settings["hooks"] = hooks
    settings_path.write_text(json.dumps(settings), encoding="utf-8")
    cli.extra_env["DISCORD_MCP_APPROVALS"] = made.env["DISCORD_MCP_APPROVALS"]
    model_server.script(ShellCall("echo ran > ran.txt"), quote_tool_result())
    result = cli.run("Make the file.", timeout=120)

    assert result.succeeded, result.describe()
    assert not (cli.workdir / "ran.txt").exists()
    text = told(model_server)
    if settings_gone:
        assert "DISCORD_BOT_TOKEN is not set" in text
    else:
        assert TOLD in text
    [ours] = hooks["BeforeTool"][-1]["hooks"]
    timeout = shlex.split(ours["command"])[shlex.split(ours["command"]).index("--timeout") + 1]
    assert float(timeout) * 1000 == ours["timeout"]  # the hook knows Gemini's timeout


def test_a_claude_ask_all_run_blocks_the_call_when_its_hook_cannot_even_start(
    model_server: ModelServer, agent_cli: AgentCliFactory, tmp_path: Path
) -> None:
    gone = McpRegistration(argv=[str(tmp_path / "no-such-python"), "-m", "discord_mcp"])
    made = adapter_for("claude").invocation(
        InvocationRequest(
            executable="claude",
            prompt="go",
            resume_key=None,
            default_args=(),
            job_dir=tmp_path / "job",
            shared_dir=tmp_path / "shared",
            thread_id="1359000000000000000",
            env={},
            mcp=gone,
            approvals="ask-all",
        )
    )
    [settings] = [p for p in made.files if p.name == "claude-settings.json"]
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(made.files[settings], encoding="utf-8")
    # Bash is allowed outright: only the ask-all hook stands between the model and the shell.
    cli = agent_cli(
        "claude", [], extra_args=["--settings", str(settings), "--allowedTools", "Bash"]
    )
    model_server.script(ShellCall("echo ran > ran.txt"), quote_tool_result())
    result = cli.run("Make the file.", timeout=120)

    assert result.succeeded, result.describe()
    assert not (cli.workdir / "ran.txt").exists()
