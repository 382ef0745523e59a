"""The real ``discord-mcp serve --http --auth-token T`` process, as a caller on this machine sees
it: without the token it answers 401, to a rebound DNS name or a web page of another origin
403, and to a client with the right headers (``authorization: bearer T`` in lower case
included) the MCP handshake and the tools."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from tests.server.test_http import free_port
from tests.server.test_tools import default_tool_names
from tests.support.settings import env_for
from tests.support.waiting import until_sync

TOKEN = "http-test-token-4821"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "http-test", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


class Served:
    def __init__(self, process: subprocess.Popen[bytes], port: int) -> None:
        self.process = process
        self.port = port
        self.url = f"http://127.0.0.1:{port}/mcp"


def _answers(url: str) -> bool:
    try:
        httpx.get(url, timeout=2)
    except httpx.TransportError:
        return False
    return True


@pytest.fixture
def served(discord: RunningEmulator, tmp_path: Path) -> Iterator[Served]:
    port = free_port()
    env = env_for(discord, tmp_path / "home", DISCORD_MCP_GATEWAY="off")
    command = [sys.executable, "-m", "discord_mcp", "serve", "--http", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--auth-token", TOKEN],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )
    server = Served(process, port)
    try:
        until_sync(
            lambda: process.poll() is not None or _answers(server.url),
            seconds=60,
            what="serve --http to listen",
        )
        assert process.poll() is None, process.communicate()[1].decode()[-2000:]
        yield server
    finally:
        process.terminate()
        stdout, stderr = process.communicate(timeout=30)
        assert stdout == b""  # stdout is never written, not even over HTTP
        assert TOKEN.encode() not in stderr


def sse_result(answer: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a streamable HTTP answer (SSE or JSON)."""
    if answer.headers["content-type"].startswith("application/json"):
        return dict(answer.json())
    data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
    return dict(json.loads(data[-1]))


def test_without_the_token_every_request_is_refused(served: Served) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": TOKEN}):
        answer = httpx.post(served.url, json=INITIALIZE, headers=MCP_HEADERS | headers)
        assert answer.status_code == 401, headers
        assert "Authorization: Bearer" in answer.json()["error"]
        assert "mcp-session-id" not in answer.headers


def test_a_rebound_dns_name_is_refused_even_with_the_token(served: Served) -> None:
    headers = MCP_HEADERS | {
        "Authorization": f"Bearer {TOKEN}",
        "Host": f"rebound.example:{served.port}",
    }
    answer = httpx.post(served.url, json=INITIALIZE, headers=headers)
    assert answer.status_code == 403
    assert "Host header" in answer.json()["error"]


def test_a_web_page_of_another_origin_is_refused_even_with_the_token(served: Served) -> None:
    headers = MCP_HEADERS | {"Authorization": f"Bearer {TOKEN}", "Origin": "https://evil.example"}
    answer = httpx.post(served.url, json=INITIALIZE, headers=headers)
    assert answer.status_code == 403
    assert "another origin" in answer.json()["error"]


def test_a_client_with_the_right_headers_initializes_and_lists_the_tools(served: Served) -> None:
    # HTTP's auth scheme is case-insensitive: a client may well send it in lower case.
    headers = MCP_HEADERS | {"authorization": f"bearer {TOKEN}"}
    with httpx.Client(headers=headers, timeout=30) as client:
        opened = client.post(served.url, json=INITIALIZE)
        assert opened.status_code == 200, opened.text
        assert sse_result(opened)["result"]["serverInfo"]["name"] == "discord"
        session = {
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": sse_result(opened)["result"]["protocolVersion"],
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert client.post(served.url, json=initialized, headers=session).status_code == 202
        listed = client.post(
            served.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=session
        )
        assert listed.status_code == 200, listed.text
        names = sorted(tool["name"] for tool in sse_result(listed)["result"]["tools"])
    assert names == default_tool_names()
