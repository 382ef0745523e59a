"""Files and secrets end to end: a real agent CLI, discord-mcp as its MCP server, the
emulator as Discord. What the agent sends arrives byte for byte; what it may not send is
refused with a sentence the model reads; secrets never reach Discord."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from tests.support.agent_clis import AgentCliFactory, CliName, McpServer
from tests.support.model_server import ModelServer, ToolCall, quote_tool_result
from tests.support.people import People
from tests.support.settings import env_for

pytestmark = pytest.mark.e2e

SHOT = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
GITHUB_TOKEN = "ghp_" + "Qw7" * 12


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05)


@pytest.mark.parametrize("cli_name", ["claude", "codex"])
def test_an_agent_sends_a_file_byte_for_byte_is_refused_outside_and_its_secret_is_redacted(
    cli_name: CliName,
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "screen.png").write_bytes(SHOT)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the project's\n", encoding="utf-8")
    server = McpServer(
        "discord",
        [sys.executable, "-m", "discord_mcp"],
        env_for(discord, tmp_path / "home"),
        cwd=project,
    )
    model_server.script(
        ToolCall("discord", "send_message", {"content": "the screen", "files": ["screen.png"]}),
        ToolCall("discord", "send_message", {"content": "x", "files": [str(outside)]}),
        ToolCall("discord", "notify", {"message": f"pushed with {GITHUB_TOKEN}"}),
        quote_tool_result("done: {result}"),
    )
    cli = agent_cli(cli_name, [server], workdir=project)
    result = cli.run("Send the owner the screenshot.")
    assert result.succeeded, result.describe() + "\n" + model_server.describe()

    sent, refused, notified = model_server.tool_results()[:3]
    assert json.loads(sent.text)["files"][0]["size"] == len(SHOT)
    assert "outside the project directory" in refused.text
    assert json.loads(notified.text)["redacted"] == ["GitHub token in message"]

    messages = people.messages(discord.channel_id)
    assert next(m["content"] for m in messages) == "the screen"
    assert httpx.get(messages[0]["attachments"][0]["url"]).content == SHOT
    assert all(GITHUB_TOKEN not in m["content"] for m in messages)
    assert "[redacted: GitHub token]" in messages[-1]["content"]
    assert len(messages) == 2  # the refused file posted nothing
