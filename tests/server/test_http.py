"""``discord-mcp serve --http``: the same tools over MCP streamable HTTP at /mcp, through a real
MCP client (FastMCP's) over a real socket; a bearer token guards it; each MCP session has a
label of its own."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastmcp import Client

from discord_mcp.cli import main
from discord_mcp.emulator import RunningEmulator
from discord_mcp.server.app import http_app
from discord_mcp.server.http_guard import HttpAccess, is_loopback
from tests.server.test_tools import default_tool_names
from tests.support.people import People
from tests.support.settings import settings_for


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.asynccontextmanager
async def serving(
    make_app: Callable[[HttpAccess], Any], token: str | None = None
) -> AsyncIterator[str]:
    """``make_app``'s app served on a free port of 127.0.0.1; yields its URL."""
    port = free_port()
    app = make_app(HttpAccess(host="127.0.0.1", port=port, token=token))
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False)
    )
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(20):
            while not server.started:
                await asyncio.sleep(0.02)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        await asyncio.wait({task}, timeout=20)


async def test_an_mcp_client_lists_and_calls_the_tools_over_http(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home")
    async with serving(lambda access: http_app(settings, access)) as url, Client(url) as client:
        names = sorted(t.name for t in await client.list_tools())
        assert names == default_tool_names()
        sent = await client.call_tool("notify", {"message": "over http"})
        assert sent.data["ok"] is True
    assert any("over http" in m["content"] for m in people.messages(discord.channel_id))


async def test_two_http_sessions_asking_the_same_question_get_two_decisions(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home", DISCORD_MCP_MAX_BLOCK_SECONDS="0.5")
    question = {"question": "Ship it?", "options": ["Yes", "No"], "mention": False}
    async with (
        serving(lambda access: http_app(settings, access)) as url,
        Client(url) as one,
        Client(url) as two,
    ):
        first = (await one.call_tool("ask_decision", question)).data
        second = (await two.call_tool("ask_decision", question)).data
    assert first["status"] == second["status"] == "pending"
    assert first["decision_id"] != second["decision_id"]  # one process, two sessions


async def test_a_bearer_token_is_required_when_one_is_set(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home")
    async with serving(lambda access: http_app(settings, access), "s3cret-token") as url:
        async with httpx.AsyncClient() as plain:
            refused = await plain.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert refused.status_code == 401
            wrong = await plain.post(
                url,
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                headers={"Authorization": "Bearer nope"},
            )
            assert wrong.status_code == 401
        async with Client(url, auth="s3cret-token") as client:
            assert "notify" in {t.name for t in await client.list_tools()}


def test_serving_beyond_loopback_needs_a_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DISCORD_MCP_HTTP_TOKEN", raising=False)
    assert main(["serve", "--http", "--host", "0.0.0.0", "--port", "1"]) == 2
    assert "--auth-token" in capsys.readouterr().err
    assert is_loopback("127.0.0.1")
    assert is_loopback("::1")
    assert is_loopback("localhost")
    assert not is_loopback("0.0.0.0")
    assert not is_loopback("192.168.1.4")


def test_install_claude_http_writes_the_url_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / ".claude"))
    monkeypatch.chdir(tmp_path)
    url = "http://127.0.0.1:9999/mcp"
    assert main(["install", "claude", "--http", "--url", url, "--scope", "project"]) == 0
    written = json.loads((tmp_path / ".mcp.json").read_text(encoding="utf-8"))
    assert written["mcpServers"]["discord"] == {"type": "http", "url": url}
