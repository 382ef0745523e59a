"""A guard hook killed while its card waits: the real CLIs do not run the command.

Each CLI runs headless on the scripted model, which asks for one shell command that would create
a file; the hook posts its approval card to the emulator and waits for the owner. Then the
hook's Python process is killed with SIGKILL, as ``kill -9`` or the OOM killer would: no code of
ours runs after that. The command each CLI is configured with turns that death into a block
(:func:`discord_mcp.hooks.guard.command`), so the file is never made and the model is told why.
Covered: the hooks ``discord-watch`` writes for a run (given to the CLI directly here, and in a
real ``discord-watch`` run), and the ones ``install --approvals`` writes. The extension's hook,
started by ``uvx``: tests/e2e/test_plugin_e2e.py.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.hooks.guard import KILLED
from discord_mcp.runs import Tool
from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.base import InvocationRequest, McpRegistration
from discord_mcp.setup.approvals import install_hook
from discord_mcp.setup.clients import Client
from tests.e2e.test_approvals_watch_e2e import (
    REPLY_HINT,
    card_in,
    project_in,
    start_run,
    texts,
)
from tests.support.agent_clis import CLI_CLASSES, AgentCli, AgentCliFactory
from tests.support.hook_runs import hook_processes, kill_hook
from tests.support.model_server import ModelServer, ShellCall, quote_tool_result
from tests.support.people import People
from tests.support.settings import env_for, settings_for
from tests.support.waiting import until
from tests.support.watch_world import watching

pytestmark = pytest.mark.e2e

SERVER = [sys.executable, "-m", "discord_mcp"]
CARD_TIMEOUT = 60.0
SAID = KILLED.replace("$s", "137")
"""What the model is told: the wrapper's sentence, with SIGKILL's exit status."""
RUN_HOOK = {"codex": "pre-tool-use", "gemini": "before-tool"}
"""The hook of a run that asks first for a shell command (Codex: PreToolUse, then
PermissionRequest)."""
INSTALLED_HOOK = {
    "codex": "permission-request",
    "gemini": "before-tool",
    "claude": "permission-request",
}
INSTALLED_ARGS: dict[str, list[str]] = {
    "claude": [],  # headless without a permission-prompt tool: the hook decides
    "codex": ["--approve-for-me", "--dangerously-bypass-hook-trust"],  # trusted in its TUI
    "gemini": ["--approval-mode", "yolo"],  # headless Gemini offers its shell only then
}


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05)


def cards(people: People) -> list[dict[str, Any]]:
    return [
        message
        for thread in people.threads()
        for message in people.messages(thread["id"])
        if "**Approval needed**" in message["content"]
    ]


def env_file(discord: RunningEmulator, tmp_path: Path) -> Path:
    """The private .env ``setup`` writes."""
    path = tmp_path / "discord.env"
    lines = env_for(discord, tmp_path / "home")
    path.write_text("".join(f"{k}={v}\n" for k, v in lines.items()), encoding="utf-8")
    path.chmod(0o600)
    return path


def run_env(discord: RunningEmulator, tmp_path: Path) -> dict[str, str]:
    """What ``discord-watch`` gives a run's server and hooks (the token by reference)."""
    return {
        "DISCORD_MCP_ENV_FILE": str(env_file(discord, tmp_path)),
        "DISCORD_MCP_RUN": "1",
        "DISCORD_MCP_GATEWAY": "follow",
        "DISCORD_MCP_APPROVAL_WAIT_SECONDS": "600",
    }


def run_invocation(tool: str, tmp_path: Path, env: dict[str, str], home: Path) -> Any:
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


def with_run_hooks(
    tool: str, agent_cli: AgentCliFactory, discord: RunningEmulator, tmp_path: Path
) -> AgentCli:
    """The CLI with the approval hooks a ``discord-watch`` run of ``tool`` gets."""
    env = run_env(discord, tmp_path)
    if tool == "codex":
        made = run_invocation("codex", tmp_path, env, tmp_path)
        argv = list(made.argv)
        hooks = [v for f, v in itertools.pairwise(argv) if f == "-c" and v.startswith("hooks.")]
        flags = [w for w in argv if w in ("--dangerously-bypass-hook-trust", "--approve-for-me")]
        extra = [*flags, *(a for h in hooks for a in ("-c", h))]
        # No run thread here: the card opens a thread of its own.
        env = {k: v for k, v in made.env.items() if k != "DISCORD_THREAD_ID"}
        return agent_cli("codex", [], extra_args=extra, extra_env=env)
    cli = agent_cli("gemini", [], extra_args=["--approval-mode", "yolo"])
    made = run_invocation("gemini", tmp_path, env, cli.home)
    [overlay] = [p for p in made.files if p.name == "settings.json"]
    settings_path = cli.home / ".gemini" / "settings.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    settings["hooks"] = json.loads(made.files[overlay])["hooks"]
    settings_path.write_text(json.dumps(settings), encoding="utf-8")
    cli.extra_env["DISCORD_MCP_APPROVALS"] = made.env["DISCORD_MCP_APPROVALS"]
    return cli


def killed_while_the_card_waits(
    cli: AgentCli, hook: str, people: People, model_server: ModelServer
) -> Any:
    """Run the CLI, kill its hook once the card is posted; the finished run."""
    escalate = {"sandbox_permissions": "require_escalated", "justification": "outside"}
    model_server.script(
        ShellCall("echo ran > ran.txt", codex_arguments=escalate), quote_tool_result()
    )
    running = cli.start("Make the file.", timeout=120)
    running.wait_for(lambda: cards(people), timeout=CARD_TIMEOUT, what="the card")
    kill_hook(hook, under=running.process.pid)
    return running.wait()


def told(model_server: ModelServer) -> str:
    [result] = model_server.turn_requests()[-1].latest_tool_results()
    return result.text


@pytest.mark.parametrize("tool", ["codex", "gemini"])
def test_a_runs_hook_killed_while_its_card_waits_blocks_the_command(
    tool: str,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    cli = with_run_hooks(tool, agent_cli, discord, tmp_path)
    result = killed_while_the_card_waits(cli, RUN_HOOK[tool], people, model_server)

    assert result.succeeded, result.describe()
    assert not (cli.workdir / "ran.txt").exists()
    assert SAID in told(model_server), result.describe()


@pytest.mark.parametrize("client", ["codex", "gemini", "claude"])
def test_an_installed_hook_killed_while_its_card_waits_blocks_the_command(
    client: Client,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    cli = agent_cli(client, [], extra_args=INSTALLED_ARGS[client])
    dotenv = env_file(discord, tmp_path)
    install_hook(client, "user", env_file=dotenv, home=cli.home, cwd=cli.workdir, environ=cli.env())
    result = killed_while_the_card_waits(cli, INSTALLED_HOOK[client], people, model_server)

    assert result.succeeded, result.describe()
    assert not (cli.workdir / "ran.txt").exists()
    if client != "claude":  # Claude Code tells the model a denial of its own wording
        assert SAID in told(model_server), result.describe()


@pytest.mark.parametrize("tool", ["codex", "gemini"])
async def test_a_discord_watch_runs_hook_killed_while_its_card_waits_blocks_the_command(
    tool: Tool,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    tmp_path: Path,
) -> None:
    settings = settings_for(discord, tmp_path / "home", POLL_INTERVAL_SECONDS="0.2")
    cli = CLI_CLASSES[tool](
        root=tmp_path / "clis", model_url=model_server.base_url, proxy_url=model_server.proxy_url
    )
    workdir = await project_in(settings, tmp_path, tool)
    model_server.script(ShellCall("echo ran > ran.txt"), quote_tool_result("Told: {result}"))
    environ = {**os.environ, "DISCORD_WATCH_ROOTS": str(tmp_path)}
    async with watching(settings, environ, {tool: cli.env()}):
        thread_id = await start_run(people, discord)
        people.say(thread_id, "make the file")
        await until(card_in(people, thread_id), what="the approval card", seconds=CARD_TIMEOUT)
        hook = RUN_HOOK[tool]
        await until(lambda: hook_processes(hook, under=os.getpid()), what="the hook's process")
        kill_hook(hook, under=os.getpid())
        final = await until(
            lambda: [t for t in texts(people, thread_id) if "Told:" in t and REPLY_HINT in t],
            what="the final message",
            seconds=90.0,
        )
    assert not (workdir / "ran.txt").exists()
    assert SAID in final[-1]
