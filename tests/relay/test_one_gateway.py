"""One gateway per machine: several real processes on one state directory, and a kill -9.

Real ``discord-mcp`` processes (as Claude Code teammates start them) and a real
``discord-watch`` share a state directory; the emulator counts gateway connections.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from discord_mcp.config import Secret
from discord_mcp.emulator import RunningEmulator
from discord_mcp.relay.holder import read_status
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.control.registration import register as register_commands
from tests.support.people import People
from tests.support.settings import env_for
from tests.support.slash import Slash
from tests.support.stdio_peer import StdioPeer
from tests.support.waiting import until_sync as until

WATCH = [sys.executable, "-c", "from discord_mcp.watch.cli import main; raise SystemExit(main())"]


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    # Heartbeats every 2 s: often enough to take a dead holder over fast, not so often that a
    # loaded machine misses an ACK and reconnects (which would add a connection).
    return make_emulator(rate_limit_scale=0.05, gateway_heartbeat_scale=0.05)


def holder_pid(home: Path) -> int | None:
    status = read_status(home / "gateway" / "status.json")
    return status.pid if status is not None and status.connected(time.time()) else None


def test_one_connection_for_many_processes_and_a_killed_holder_is_replaced(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = env_for(discord, home, POLL_INTERVAL_SECONDS="0.5", DISCORD_MCP_MAX_BLOCK_SECONDS="90")
    peers = [StdioPeer(env, tmp_path) for _ in range(3)]
    watch: subprocess.Popen[bytes] | None = None
    try:
        for peer in peers:
            peer.handshake()
        until(lambda: holder_pid(home), what="a holder")
        stats = people.state()["stats"]
        assert stats["gateway_connections_open"] == 1
        assert holder_pid(home) in {p.process.pid for p in peers}

        # The watch daemon is the preferred holder: the server hands the session over to it.
        watch = subprocess.Popen(
            WATCH,
            env={**os.environ, **env, "DISCORD_WATCH_ROOTS": str(tmp_path)},
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        until(lambda: holder_pid(home) == watch.pid, what="the daemon to hold the gateway")
        stats = people.state()["stats"]
        assert stats["gateway_connections_open"] == 1
        assert stats["gateway_identifies"] == 1  # handed over by resuming, not a new login

        # A decision asked now gets buttons; then the holder dies.
        with ThreadPoolExecutor(1) as pool:
            asking = pool.submit(
                peers[0].call_tool,
                "ask_decision",
                {"question": "Deploy to staging?", "options": ["Deploy", "Hold"]},
            )
            thread = until(lambda: people.threads(), what="the question")[0]
            card = until(
                lambda: [m for m in people.messages(thread["id"]) if m.get("components")],
                what="a card with buttons",
            )[0]
            os.kill(watch.pid, signal.SIGKILL)
            watch.wait(timeout=10)
            until(
                lambda: holder_pid(home) in {p.process.pid for p in peers},
                seconds=15,
                what="a server to take the gateway over",
            )
            hold = next(
                c["custom_id"]
                for row in card["components"]
                for c in row["components"]
                if c.get("label", "").startswith("B.")
            )
            clicked = people.click(card["id"], hold)
            result = asking.result(timeout=30)
        assert clicked["acknowledged"] is True
        assert clicked["response_type"] == 7
        assert result["status"] == "answered"
        assert result["selected_option"] == "Hold"
        assert result["via"] == "button"
        stats = people.state()["stats"]
        assert stats["gateway_connections_open"] == 1
        # Ever: the first server, the daemon, and the server that took over. The others only
        # ever followed; and every handover resumed the one session instead of logging in.
        assert stats["gateway_connections_total"] == 3
        assert stats["gateway_identifies"] == 1
        assert stats["interactions_failed"] == 0
        final = people.messages(thread["id"])[0]
        assert "Answered" in final["content"]
        assert final.get("components") in (None, [])
    finally:
        if watch is not None and watch.poll() is None:
            watch.kill()
            watch.wait(timeout=10)
        for peer in peers:
            peer.close()


def test_a_strangers_click_is_refused_privately_and_changes_nothing(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    peer = StdioPeer(env_for(discord, home, DISCORD_MCP_MAX_BLOCK_SECONDS="60"), tmp_path)
    stranger = people.new_user("stranger")
    try:
        peer.handshake()
        until(lambda: holder_pid(home), what="the gateway")
        with ThreadPoolExecutor(1) as pool:
            asking = pool.submit(
                peer.call_tool, "ask_decision", {"question": "Pick one", "options": ["a", "b", "c"]}
            )
            thread = until(lambda: people.threads(), what="the question")[0]
            card = until(
                lambda: [m for m in people.messages(thread["id"]) if m.get("components")],
                what="a card with buttons",
            )[0]
            first = card["components"][0]["components"][0]["custom_id"]
            refused = people.click(card["id"], first, user=stranger)
            assert refused["acknowledged"] is True
            assert refused["ephemeral"] is True
            assert "can answer" in json.dumps(refused["response"])
            assert people.messages(thread["id"])[0]["components"]  # still open
            # The owner opens "Other…" and types an answer in the modal.
            other = card["components"][-1]["components"][-1]["custom_id"]
            modal = people.click(card["id"], other)
            assert modal["response_type"] == 9
            inputs = modal["response"]["data"]["components"]
            field_id = inputs[0]["component"]["custom_id"]
            submitted = people.submit_modal(
                card["id"], modal["response"]["data"]["custom_id"], {field_id: "d, actually"}
            )
            assert submitted["response_type"] == 7
            result = asking.result(timeout=30)
        assert result["status"] == "answered"
        assert result["answer"] == "d, actually"
        assert result["selected_option"] is None
        assert result["via"] == "modal"
    finally:
        peer.close()


def test_without_the_message_content_intent_the_gateway_stays_and_buttons_answer(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    """Issue 33: Discord refuses the privileged intent (4014) when the portal's toggle is off;
    the holder logs in again without it instead of giving the gateway up: clicks still arrive,
    and a reply whose text Discord hides is answered with a hint to use the buttons."""
    people.fault(message_content_intent_enabled=False)
    home = tmp_path / "home"
    peer = StdioPeer(
        env_for(discord, home, POLL_INTERVAL_SECONDS="0.2", DISCORD_MCP_MAX_BLOCK_SECONDS="60"),
        tmp_path,
    )
    try:
        peer.handshake()

        def without_content() -> bool:
            status = read_status(home / "gateway" / "status.json")
            return (
                status is not None and status.connected(time.time()) and not status.message_content
            )

        until(without_content, what="the gateway held without the Message Content intent")
        with ThreadPoolExecutor(1) as pool:
            asking = pool.submit(
                peer.call_tool, "ask_decision", {"question": "Buttons?", "options": ["Yes", "No"]}
            )
            thread = until(lambda: people.threads(), what="the question")[0]
            card = until(lambda: people.messages(thread["id"]), what="the card")[0]
            assert card.get("components")  # the gateway is there: clicks arrive
            people.say(thread["id"], "yes")  # Discord hides its text from the bot
            until(
                lambda: any(
                    "Message Content" in m["content"] for m in people.messages(thread["id"])
                ),
                what="the hint that replies cannot be read",
            )
            yes = next(
                c["custom_id"]
                for row in card["components"]
                for c in row["components"]
                if c.get("label", "").startswith("A.")
            )
            people.click(card["id"], yes)
            result = asking.result(timeout=30)
        assert (result["status"], result["selected_option"], result["via"]) == (
            "answered",
            "Yes",
            "button",
        )
        assert people.state()["stats"]["gateway_identifies"] == 2  # refused once, then without
    finally:
        peer.close()


def test_a_slash_command_that_reaches_a_server_is_told_discord_watch_answers_them(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    """At its last turn, when no machine's discord-watch answered (issue 27); autocomplete,
    which another machine's discord-watch may be answering, it leaves alone."""
    home = tmp_path / "home"

    async def register() -> None:  # what discord-watch registered when it last ran
        async with RestClient(Secret(discord.token), api_base=discord.api_base) as rest:
            await register_commands(rest, discord.channel_id)

    asyncio.run(register())
    peer = StdioPeer(env_for(discord, home), tmp_path)
    slash = Slash(discord)
    try:
        peer.handshake()
        until(lambda: holder_pid(home), what="the gateway")
        command = asyncio.run(slash.run("status"))
        suggested = asyncio.run(slash.run("logs", focused="job", job=""))
    finally:
        peer.close()
    assert command["acknowledged"] is True
    assert command["ephemeral"] is True
    assert "`discord-watch run`" in json.dumps(command["response"])
    assert suggested["acknowledged"] is False
    watching = People(discord)
    try:
        assert watching.state()["stats"]["interactions_acknowledged_twice"] == 0
    finally:
        watching.close()
