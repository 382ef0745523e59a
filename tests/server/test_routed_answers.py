"""Routing by interest between real servers (issue 28 §2): a server that follows another's
gateway is woken by the events of the questions it waits on, not by everyone else's, and its
answer reaches it across a holder killed and replaced.

Wake-ups are counted as the kernel's voluntary context switches of every thread of the process
(one sleep, one wake-up each), as in test_idle_wakeups.py, so a busy machine does not change
the count."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from discord_mcp.emulator import RunningEmulator
from discord_mcp.relay.holder import read_status
from tests.server.test_idle_wakeups import WAKEUPS_PER_S, rates
from tests.support.people import People
from tests.support.settings import env_for
from tests.support.stdio_peer import StdioPeer
from tests.support.waiting import until_sync

NOISE_PER_S = 25
"""Messages a second the owner writes elsewhere while the follower waits."""


def holder_pid(home: Path) -> int | None:
    status = read_status(home / "gateway" / "status.json")
    return status.pid if status is not None and status.connected(time.time()) else None


def ask(peer: StdioPeer, question: str, request_id: int) -> None:
    """Call ask_decision without waiting for its result."""
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {
                "name": "ask_decision",
                "arguments": {"question": question, "options": ["Yes", "No"]},
            },
        }
    )


def result(peer: StdioPeer, request_id: int, seconds: float = 60.0) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        for line in list(peer.stdout_lines):
            message = json.loads(line)
            if message.get("id") == request_id:
                return dict(message["result"]["structuredContent"])
        return None

    return dict(until_sync(found, seconds, f"the result of call {request_id}"))


def card_thread(people: People, question: str) -> str:
    """The thread of ``question`` once its card is posted there."""

    def posted() -> str | None:
        for thread in people.threads():
            if question[:30] in thread["name"] and people.messages(thread["id"]):
                return str(thread["id"])
        return None

    return str(until_sync(posted, 60, f"the card of {question!r}"))


def test_a_waiting_follower_sleeps_while_the_owner_writes_elsewhere(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    holder = StdioPeer(env_for(discord, home, DISCORD_MCP_GATEWAY="auto"), tmp_path)
    # It polls Discord once an hour: its answer must be routed to it.
    follower = StdioPeer(
        env_for(discord, home, DISCORD_MCP_GATEWAY="follow", POLL_INTERVAL_SECONDS="3600"),
        tmp_path,
    )
    stop = threading.Event()

    def chatter() -> None:
        elsewhere = People(discord)  # a client of its own: this runs beside the test's
        try:
            n = 0
            while not stop.wait(1 / NOISE_PER_S):
                elsewhere.say(discord.channel_id, f"chatter {n}")
                n += 1
        finally:
            elsewhere.close()

    noise = threading.Thread(target=chatter)
    try:
        holder.handshake()
        until_sync(lambda: holder_pid(home) == holder.process.pid, 60, "the first holder")
        follower.handshake()
        ask(follower, "Deploy the follower's change?", 7)
        thread_id = card_thread(people, "Deploy the follower's change?")
        noise.start()
        measured = rates([follower.process.pid])[follower.process.pid]
        stop.set()
        noise.join(timeout=30)
        people.say(thread_id, "yes")
        answered = result(follower, 7)
        assert answered["status"] == "answered"
        assert answered["selected_option"] == "Yes"
        spooled = (home / "gateway" / "spool.ndjson").read_text(encoding="utf-8")
        assert spooled.count("chatter") >= NOISE_PER_S * 5  # the holder did relay the noise
    finally:
        stop.set()
        for peer in (follower, holder):
            peer.close()
    assert measured <= WAKEUPS_PER_S, f"the waiting follower woke {measured:.1f} times a second"


def test_an_answer_reaches_its_follower_across_a_killed_holder(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    """The follower asked (and its thread was asked for) while the first holder held; that
    holder is killed and another server takes over; the owner answers then. The follower polls
    Discord once an hour, so only the new holder's routing can bring the answer within the
    bound."""
    home = tmp_path / "home"
    first = StdioPeer(env_for(discord, home, DISCORD_MCP_GATEWAY="auto"), tmp_path)
    follower = StdioPeer(
        env_for(
            discord,
            home,
            DISCORD_MCP_GATEWAY="follow",
            POLL_INTERVAL_SECONDS="3600",
            DISCORD_MCP_MAX_BLOCK_SECONDS="600",
        ),
        tmp_path,
    )
    second = StdioPeer(env_for(discord, home, DISCORD_MCP_GATEWAY="auto"), tmp_path)
    try:
        first.handshake()
        until_sync(lambda: holder_pid(home) == first.process.pid, 60, "the first holder")
        follower.handshake()
        second.handshake()
        ask(follower, "Migrate the database now?", 9)
        thread_id = card_thread(people, "Migrate the database now?")
        os.kill(first.process.pid, signal.SIGKILL)
        first.process.wait(timeout=10)
        until_sync(lambda: holder_pid(home) == second.process.pid, 60, "the takeover")
        people.say(thread_id, "no")
        answered = result(follower, 9, seconds=90)
        assert answered["status"] == "answered"
        assert answered["selected_option"] == "No"
    finally:
        for peer in (follower, second, first):
            peer.close()
