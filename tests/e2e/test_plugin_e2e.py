"""The Claude Code plugin and the Gemini CLI extension, installed with the real CLIs' own
commands into throwaway homes, offline: nothing but ``setup``'s ``.env`` is written by hand.

The add-ons start discord-mcp with ``uvx --from <their copy of the repository>``; uv runs
offline from the session's warmed cache (the ``packages`` fixture), and every CLI's outbound
traffic goes to the model server's refusing proxy, which must have seen none.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.hooks.guard import KILLED
from discord_mcp.setup.wizard import write_env_file
from tests.conftest import Packages
from tests.support.agent_clis import (
    CLAUDE_MODEL,
    GEMINI_MODEL,
    AgentCli,
    AgentCliFactory,
    RunningAgent,
)
from tests.support.hook_runs import kill_hook
from tests.support.model_server import ModelServer, ShellCall, ToolCall, quote_tool_result
from tests.support.packages import uv_env
from tests.support.people import People
from tests.support.settings import env_for

pytestmark = pytest.mark.e2e

CARD_TIMEOUT = 60.0


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    # A token of this test's own: it must turn up in no file the CLI keeps.
    return make_emulator(rate_limit_scale=0.05, token=f"addon-test.{uuid.uuid4().hex}")


def offline_uv(cli: AgentCli, packages: Packages) -> dict[str, str]:
    """What the CLI's environment adds: uvx on PATH, offline from the warmed cache."""
    env = uv_env(packages.uv_cache, offline=True, path=f"{cli.executable.parent}:/usr/bin:/bin")
    return {k: v for k, v in env.items() if k != "HOME"}


def setup_env_file(discord: RunningEmulator, home: Path) -> Path:
    """What ``discord-mcp setup`` writes, where every program looks by default."""
    path = home / ".config" / "discord-mcp" / ".env"
    write_env_file(path, env_for(discord, home / ".discord-mcp"))
    return path


def answered_while_away(discord: RunningEmulator, home: Path) -> Decision:
    """An answer that came while no session listened: the SessionStart hook gives it."""
    away = Decision(
        id="20261125-120000-a11a11",
        project="proj",  # PROJECT_NAME in setup's .env (tests.support.settings.env_for)
        session="gone1234",
        question="Which region for the new bucket?",
        context=None,
        options=("eu-west-1", "us-east-1"),
        channel_id=discord.channel_id,
        thread_id=discord.channel_id,
        card_message_id="100000000000000003",
        thread_url="",
        asked_at="2026-11-25T12:00:00.000+00:00",
        status="answered",
        answer="B",
        selected_option="us-east-1",
        selected_index=1,
        answered_by_name="Ann",
    )
    DecisionStore(home / ".discord-mcp").create(away)
    return away


def cli_command(
    cli: AgentCli, *args: str, proxy: ModelServer | None = None
) -> subprocess.CompletedProcess[str]:
    env = cli.env()
    if proxy is not None:
        for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
            env[name] = env[name.lower()] = proxy.proxy_url
    return subprocess.run(
        [str(cli.executable), *args],
        env=env,
        cwd=cli.workdir,
        capture_output=True,
        encoding="utf-8",
        text=True,
        timeout=120,
        check=False,
    )


def approval_cards(people: People) -> list[dict[str, Any]]:
    return [
        message
        for thread in people.threads()
        for message in people.messages(thread["id"])
        if "**Approval needed**" in message["content"]
    ]


def channel_texts(people: People, discord: RunningEmulator) -> list[str]:
    return [m["content"] for m in people.messages(discord.channel_id)]


def no_secret_in(directory: Path, secret: str) -> list[Path]:
    return [
        path
        for path in directory.rglob("*")
        if path.is_file() and secret.encode() in path.read_bytes()
    ]


def test_claude_plugin_validate_passes_on_the_repository(
    packages: Packages, agent_cli: AgentCliFactory
) -> None:
    cli = agent_cli("claude")
    done = cli_command(cli, "plugin", "validate", str(packages.repository))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout
    assert "discord-mcp:discord-decisions" in done.stdout  # the skill is in the plugin


def test_the_claude_plugin_installs_from_the_repository_and_wires_server_hooks_and_skill(
    packages: Packages,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
) -> None:
    cli = agent_cli("claude")
    cli.extra_env.update(offline_uv(cli, packages))
    added = cli_command(cli, "plugin", "marketplace", "add", str(packages.repository))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = cli_command(cli, "plugin", "install", "discord-mcp@discord-mcp")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = cli_command(cli, "plugin", "list")
    assert "discord-mcp@discord-mcp" in listed.stdout
    assert "enabled" in listed.stdout
    setup_env_file(discord, cli.home)
    away = answered_while_away(discord, cli.home)

    server = "plugin_discord-mcp_discord"
    model_server.script(
        ToolCall(server, "notify", {"message": "hello from the plugin"}),
        ShellCall("echo plugin > plugin.txt"),
        quote_tool_result("Done: {result}"),
    )
    argv = [str(cli.executable), "-p", "--verbose", "--output-format", "stream-json"]
    argv += ["--model", CLAUDE_MODEL, "--allowedTools", f"mcp__{server}", "--", "Say hello."]
    run_dir = cli.root / "runs" / "plugin"
    run_dir.mkdir(parents=True)
    running = RunningAgent(cli, argv, cli.env(), run_dir, timeout=120)
    try:
        [card] = running.wait_for(
            lambda: approval_cards(people), timeout=CARD_TIMEOUT, what="the approval card"
        )
        assert "echo plugin > plugin.txt" in card["content"]
        people.react(card["channel_id"], card["id"], "✅")
        result = running.wait()
    finally:
        running.kill()

    assert result.succeeded, result.describe()
    assert (cli.workdir / "plugin.txt").read_text(encoding="utf-8") == "plugin\n"
    assert any("hello from the plugin" in t for t in channel_texts(people, discord))
    started = [
        e
        for e in result.events
        if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"
    ]
    assert started, result.describe()
    assert all(e.get("exit_code") == 0 for e in started), started
    opening = model_server.turn_requests()[0]
    assert opening.contains("Which region for the new bucket?")  # SessionStart gave it
    assert DecisionStore(cli.home / ".discord-mcp").load(away.id).delivered
    init = next(e for e in result.events if e.get("subtype") == "init")
    assert "discord-mcp:discord-decisions" in json.dumps(init)  # the skill is offered
    assert not no_secret_in(cli.home / ".claude", discord.token)


def test_the_gemini_extension_links_from_the_repository_and_wires_server_and_hooks(
    packages: Packages,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
) -> None:
    # yolo: headless Gemini offers its shell tool only then; the BeforeTool hook still asks.
    cli = agent_cli("gemini", extra_args=["--approval-mode", "yolo"])
    cli.extra_env.update(offline_uv(cli, packages))
    # Gemini CLI 0.61's `extensions link` logs an install event to play.googleapis.com whatever
    # its usage-statistics setting says (its ExtensionManager builds a Config without it): the
    # link goes through a refusing proxy of its own, which may see that and nothing else.
    with ModelServer() as proxy:
        linked = cli_command(
            cli, "extensions", "link", str(packages.repository), "--consent", proxy=proxy
        )
    assert linked.returncode == 0, linked.stdout + linked.stderr
    assert set(proxy.outbound_attempts) <= {"play.googleapis.com:443"}
    listed = cli_command(cli, "extensions", "list")
    assert "discord-mcp" in listed.stdout + listed.stderr
    setup_env_file(discord, cli.home)
    away = answered_while_away(discord, cli.home)

    model_server.script(
        ToolCall("discord", "notify", {"message": "hello from the extension"}),
        ShellCall("echo extension > extension.txt"),
        quote_tool_result("Done: {result}"),
    )
    running = cli.start("Say hello.", timeout=120)
    try:
        [card] = running.wait_for(
            lambda: approval_cards(people), timeout=CARD_TIMEOUT, what="the approval card"
        )
        assert "echo extension > extension.txt" in card["content"]
        assert "gemini session" in card["content"]
        people.react(card["channel_id"], card["id"], "✅")
        result = running.wait()
    finally:
        running.kill()

    assert result.succeeded, result.describe()
    assert (cli.workdir / "extension.txt").read_text(encoding="utf-8") == "extension\n"
    assert any("hello from the extension" in t for t in channel_texts(people, discord))
    first = model_server.turn_requests("gemini")[0]
    assert first.contains("Reaching your owner over Discord")  # the context file
    assert first.contains("Which region for the new bucket?")  # SessionStart, shared command
    assert DecisionStore(cli.home / ".discord-mcp").load(away.id).delivered
    assert GEMINI_MODEL in first.path
    assert not no_secret_in(cli.home / ".gemini", discord.token)


def test_the_extensions_hook_killed_under_uvx_while_its_card_waits_blocks_the_command(
    packages: Packages,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
) -> None:
    """uvx stands between the CLI's shell and the hook's Python: when that Python is killed,
    uvx passes its death on (exit status 137) and the wrapper makes it a block."""
    cli = agent_cli("gemini", extra_args=["--approval-mode", "yolo"])
    cli.extra_env.update(offline_uv(cli, packages))
    with ModelServer() as proxy:  # see the test above: the link's own install event
        linked = cli_command(
            cli, "extensions", "link", str(packages.repository), "--consent", proxy=proxy
        )
    assert linked.returncode == 0, linked.stdout + linked.stderr
    setup_env_file(discord, cli.home)
    model_server.script(ShellCall("echo ran > ran.txt"), quote_tool_result("Told: {result}"))
    running = cli.start("Make the file.", timeout=120)
    try:
        running.wait_for(
            lambda: approval_cards(people), timeout=CARD_TIMEOUT, what="the approval card"
        )
        kill_hook("before-tool", under=running.process.pid)
        result = running.wait()
    finally:
        running.kill()

    assert result.succeeded, result.describe()
    assert not (cli.workdir / "ran.txt").exists()
    [told] = model_server.turn_requests("gemini")[-1].latest_tool_results()
    assert KILLED.replace("$s", "137") in told.text
