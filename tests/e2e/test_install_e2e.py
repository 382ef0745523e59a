"""`discord-mcp setup` and `install`, then the real CLIs use the server they registered.

The getting-started path on the emulator: setup writes a private .env, install registers discord-mcp
in each client's own configuration file (nothing else), and a headless session of the real CLI
calls our tools. For Claude Code the whole loop ends in an answered decision.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Secret
from discord_mcp.emulator import RunningEmulator
from discord_mcp.setup.clients import Client
from discord_mcp.setup.install import install
from discord_mcp.setup.wizard import run_setup
from tests.support.agent_clis import (
    CLI_NAMES,
    AgentCliFactory,
    ClaudeCli,
    CliName,
)
from tests.support.model_server import ModelServer, ToolCall, quote_tool_result
from tests.support.people import People

pytestmark = pytest.mark.e2e


class UserConfigClaude(ClaudeCli):
    """Claude Code reading MCP servers from its own user config (as installed), not a flag."""

    def _argv(self, prompt: str, resume: str | None) -> list[str]:
        argv = [str(self.executable), "-p", "--verbose", "--output-format", "stream-json"]
        argv += ["--allowedTools", "mcp__discord"]
        if resume:
            argv += ["--resume", resume]
        return [*argv, "--", prompt]


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05)


async def set_up(discord: RunningEmulator, tmp_path: Path) -> Path:
    """`discord-mcp setup`, answered as a new user would (token hidden, ids pasted)."""
    env_file = tmp_path / "discord.env"
    answers = iter([discord.channel_id, discord.owner_user_id])

    async def accepted(_token: Secret, _api_base: str) -> str:
        return discord.application_id

    out = io.StringIO()
    await run_setup(
        ask=lambda _prompt: next(answers),
        ask_secret=lambda _prompt: f"Bot {discord.token}",
        out=out,
        env_file=env_file,
        api_base=discord.api_base,
        check=accepted,
    )
    assert discord.token not in out.getvalue()
    assert "permissions=" not in out.getvalue()  # the emulator needs no invite
    assert os.stat(env_file).st_mode & 0o777 == 0o600
    with env_file.open("a", encoding="utf-8") as handle:
        handle.write(f"DISCORD_MCP_HOME={tmp_path / 'state'}\nPOLL_INTERVAL_SECONDS=0.2\n")
    return env_file


def install_into(cli: Any, client: Client, env_file: Path) -> None:
    first = install(
        client, "user", env_file=env_file, home=cli.home, cwd=cli.workdir, environ=cli.env()
    )
    assert first.changed
    again = install(
        client, "user", env_file=env_file, home=cli.home, cwd=cli.workdir, environ=cli.env()
    )
    assert not again.changed  # idempotent
    text = first.location.path.read_text(encoding="utf-8")
    assert "DISCORD_MCP_ENV_FILE" in text
    assert cli_token_absent(text, env_file)


def cli_token_absent(text: str, env_file: Path) -> bool:
    token_line = next(
        line
        for line in env_file.read_text(encoding="utf-8").splitlines()
        if line.startswith("DISCORD_BOT_TOKEN=")
    )
    return token_line.split("=", 1)[1] not in text


@pytest.mark.parametrize("cli_name", CLI_NAMES)
async def test_an_installed_server_is_used_by_each_real_cli(
    cli_name: CliName,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    env_file = await set_up(discord, tmp_path)
    if cli_name == "claude":
        cli: Any = UserConfigClaude(
            root=tmp_path / "claude",
            model_url=model_server.base_url,
            proxy_url=model_server.proxy_url,
        )
    else:
        cli = agent_cli(cli_name, [])
    try:
        install_into(cli, cli_name, env_file)
        model_server.script(
            ToolCall("discord", "notify", {"message": f"installed for {cli_name}"}),
            quote_tool_result("{result}"),
        )
        result = cli.run("Tell the owner you are installed.")
    finally:
        if cli_name == "claude":
            cli.close()
    assert result.succeeded, result.describe() + "\n" + model_server.describe()
    [tool_result] = model_server.turn_requests()[-1].latest_tool_results()
    assert json.loads(tool_result.text)["ok"] is True
    assert people.messages(discord.channel_id)[-1]["content"].endswith(f"installed for {cli_name}")


async def test_the_readme_path_ends_in_an_answered_decision_in_claude_code(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    tmp_path: Path,
) -> None:
    env_file = await set_up(discord, tmp_path)
    cli = UserConfigClaude(
        root=tmp_path / "claude", model_url=model_server.base_url, proxy_url=model_server.proxy_url
    )
    try:
        install_into(cli, "claude", env_file)
        model_server.script(
            ToolCall(
                "discord", "ask_decision", {"question": "Ship v1?", "options": ["Ship", "Wait"]}
            ),
            quote_tool_result("Owner: {result}"),
        )
        running = cli.start("Ask the owner whether to ship.")

        def card() -> dict[str, Any] | None:
            threads = people.threads()
            messages = people.messages(threads[-1]["id"]) if threads else []
            return messages[0] if messages else None

        first = running.wait_for(card, timeout=40, what="the question")
        people.say(first["channel_id"], "ship")
        result = running.wait()
    finally:
        cli.close()
    assert result.succeeded, result.describe()
    [tool_result] = model_server.turn_requests()[-1].latest_tool_results()
    answer = json.loads(tool_result.text)
    assert (answer["status"], answer["selected_option"]) == ("answered", "Ship")
