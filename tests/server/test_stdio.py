"""The real ``discord-mcp`` process over stdio: protocol-only stdout, no early network, no token."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from discord_mcp.emulator import RunningEmulator
from discord_mcp.relay.holder import read_status
from tests.support.people import People
from tests.support.settings import env_for
from tests.support.stdio_peer import SERVER, StdioPeer
from tests.support.waiting import until_sync as wait_for


def holds_gateway(home: Path, pid: int) -> bool:
    status = read_status(home / "gateway" / "status.json")
    return status is not None and status.pid == pid and status.connected(time.time())


def test_stdout_carries_only_protocol_messages_and_the_token_never_leaks(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    peer = StdioPeer(env_for(discord, home), tmp_path)
    try:
        init = peer.handshake()
        assert init["result"]["serverInfo"]["name"] == "discord"
        tools = peer.request("tools/list")["result"]["tools"]
        assert {t["name"] for t in tools} >= {"ask_decision", "wait_decision", "notify"}
        sent = peer.request(
            "tools/call", {"name": "notify", "arguments": {"message": "hello from stdio"}}
        )
        assert sent["result"]["isError"] is False
        failed = peer.request(
            "tools/call",
            {"name": "wait_decision", "arguments": {"decision_id": "20260101-000000-abcdef"}},
        )
        assert failed["result"]["isError"] is True
    finally:
        assert peer.close() == 0
    for line in peer.stdout_lines:
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert people.messages(discord.channel_id)[-1]["content"].endswith("hello from stdio")
    log_file = home / "logs" / "discord-mcp.log"
    assert log_file.exists()
    for text in (peer.stderr.decode(), log_file.read_text(encoding="utf-8")):
        assert discord.token not in text


def test_nothing_touches_discord_before_the_handshake_and_recovery_follows_it(
    discord: RunningEmulator,
    people: People,
    make_emulator: Callable[..., RunningEmulator],
    tmp_path: Path,
) -> None:
    """With an open decision on disk, the server waits for a client before looking at it.

    The window is set by a twin: a second server on its own emulator and state, started once
    the server under test is up and serving (its background task exists), and given its
    handshake at once. Once the twin holds the gateway, the twin has started from nothing and
    got through its background work (recovery first, then the gateway): a server that did not
    wait for the handshake would have reached Discord by then, with a whole process start
    ahead of the twin.
    """
    home = tmp_path / "home"
    first = StdioPeer(env_for(discord, home, DISCORD_MCP_MAX_BLOCK_SECONDS="0.2"), tmp_path)
    try:
        first.handshake()
        asked = first.request(
            "tools/call", {"name": "ask_decision", "arguments": {"question": "Recover me?"}}
        )
        assert asked["result"]["structuredContent"]["status"] == "pending"
    finally:
        first.close()
    thread_id = people.threads()[0]["id"]
    people.say(thread_id, "recovered answer")
    before = people.state()["stats"]["rest_requests"]

    twin_discord = make_emulator(rate_limit_scale=0.01)
    second = StdioPeer(env_for(discord, home), tmp_path)
    twin: StdioPeer | None = None
    try:
        wait_for(lambda: b"Starting MCP server" in second.stderr)
        twin = StdioPeer(env_for(twin_discord, tmp_path / "twin-home"), tmp_path)
        twin.handshake()
        wait_for(lambda: holds_gateway(tmp_path / "twin-home", twin.process.pid))
        assert second.process.poll() is None, second.stderr.decode()
        assert people.state()["stats"]["rest_requests"] == before
        second.handshake()
        decision_file = next((home / "decisions").glob("*.json"))
        wait_for(lambda: '"status": "answered"' in decision_file.read_text(encoding="utf-8"))
    finally:
        if twin is not None:
            twin.close()
        second.close()


def test_a_configuration_error_names_the_variable_on_stderr_and_nothing_on_stdout(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISCORD_")}
    env.update({"DISCORD_BOT_TOKEN": "Bot secret-token-value", "DISCORD_CHANNEL_ID": "1" * 18})
    done = subprocess.run(
        SERVER, env=env, cwd=tmp_path, capture_output=True, timeout=30, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"DISCORD_OWNER_IDS" in done.stderr
    assert b"secret-token-value" not in done.stderr


def test_python_dash_m_discord_mcp_server_serves_stdio_as_the_command_does(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    """How the Decision MCP seed starts its server (issue 34)."""
    peer = StdioPeer(
        env_for(discord, tmp_path / "home"), tmp_path, [*SERVER[:-1], "discord_mcp.server"]
    )
    try:
        assert peer.handshake()["result"]["serverInfo"]["name"] == "discord"
        tools = peer.request("tools/list")["result"]["tools"]
        assert {t["name"] for t in tools} >= {"ask_decision", "report_progress", "read_inbox"}
        sent = peer.request(
            "tools/call", {"name": "notify", "arguments": {"message": "hello from -m"}}
        )
        assert sent["result"]["isError"] is False
    finally:
        assert peer.close() == 0
    for line in peer.stdout_lines:
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert people.messages(discord.channel_id)[-1]["content"].endswith("hello from -m")
