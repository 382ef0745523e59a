"""``discord-mcp serve --http`` with the real clients: a question's card names the client's
project (the folder its MCP roots name), not the folder the one server was started in.

Gemini CLI (0.61.0) offers roots (its working folder) and is asked for them. Claude Code
(2.1.330) speaks the protocol version 2026-07-28, where roots are deprecated and a server has no
channel to ask them on (``roots/list`` fails with "no back-channel for server-initiated
requests"), and Codex (0.169.0) declares no ``roots``: their questions keep the server's project
name (``PROJECT_NAME``, here ``proj``), as docs/install.md says.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.e2e.test_decisions_e2e import CALL_TIMEOUT, thread_appears
from tests.server.test_http import free_port
from tests.server.test_serve_http import _answers
from tests.support.agent_clis import AgentCli, AgentCliFactory, ClaudeCli, CliName
from tests.support.model_server import ModelServer, ToolCall, quote_tool_result
from tests.support.people import People
from tests.support.settings import env_for
from tests.support.waiting import until_sync

pytestmark = pytest.mark.e2e

QUESTION = {"question": "Deploy the preview?", "options": ["yes", "no"]}


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.05)


@pytest.fixture
def served(discord: RunningEmulator, tmp_path: Path) -> Iterator[str]:
    """``serve --http`` started in a folder of its own, ``server-folder``; its URL."""
    folder = tmp_path / "server-folder"
    folder.mkdir()
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "discord_mcp", "serve", "--http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env_for(discord, tmp_path / "home"),
        cwd=folder,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        until_sync(lambda: process.poll() is not None or _answers(url), seconds=60, what="serve")
        assert process.poll() is None, process.communicate()[1].decode()[-2000:]
        yield url
    finally:
        process.terminate()
        process.communicate(timeout=30)


def connected(cli: AgentCli, url: str) -> AgentCli:
    """``cli`` with ``discord`` registered by URL, as ``install claude --http`` does."""
    if isinstance(cli, ClaudeCli):
        config = {"mcpServers": {"discord": {"type": "http", "url": url}}}
        cli.mcp_config_path.write_text(json.dumps(config), encoding="utf-8")
        cli.extra_args = [*cli.extra_args, "--allowedTools", "mcp__discord"]
        return cli
    path = cli.home / ".gemini" / "settings.json"
    settings = json.loads(path.read_text(encoding="utf-8"))
    settings["mcpServers"] = {"discord": {"httpUrl": url, "trust": True, "timeout": 120_000}}
    path.write_text(json.dumps(settings), encoding="utf-8")
    return cli


@pytest.mark.parametrize(
    ("cli_name", "named"), [("gemini", "the client's folder"), ("claude", "the server's")]
)
def test_a_question_over_http_names_the_clients_project_when_it_offers_roots(
    cli_name: CliName,
    named: str,
    served: str,
    people: People,
    model_server: ModelServer,
    agent_cli: AgentCliFactory,
) -> None:
    model_server.script(ToolCall("discord", "ask_decision", QUESTION), quote_tool_result())
    cli = connected(agent_cli(cli_name, []), served)
    running = cli.start("Ask the owner.", timeout=120)

    thread = running.wait_for(thread_appears(people), timeout=CALL_TIMEOUT, what="the question")
    card = people.messages(thread["id"])[0]["content"]
    people.say(thread["id"], "yes")
    result = running.wait()

    assert result.succeeded, result.describe() + "\n" + model_server.describe()
    assert cli.workdir.name not in ("server-folder", "proj")
    project = cli.workdir.name if named == "the client's folder" else "proj"
    assert f"· `{project}` ·" in card, card
