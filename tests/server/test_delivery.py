"""An answer counts as delivered only once its response is in the pipe to the client.

A server killed after it recorded "delivered" but before it wrote the response would lose the
answer: its agent never read it, and ``check_pending`` hands over only what was not delivered
(bench/chaos found this window: about 2 rounds in 100 of "kill the waiting server right after
the owner clicked"). Here the client stops reading, so the response cannot be written, and the
server is killed once it had the answer: a new session must be given it.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

from discord_mcp.emulator import RunningEmulator
from tests.support.people import People
from tests.support.settings import env_for
from tests.support.stdio_peer import StdioPeer
from tests.support.waiting import until_sync as until

LOOK_S = 3.0
"""How long the test watches the decision file for a "delivered" that must not come; written
before the response, it came within milliseconds of the answer."""


def decision_file(home: Path) -> dict[str, Any] | None:
    files = list((home / "decisions").glob("*.json"))
    return json.loads(files[0].read_text(encoding="utf-8")) if len(files) == 1 else None


def test_an_answer_whose_response_never_left_is_given_to_the_next_session(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = env_for(discord, home, DISCORD_MCP_GATEWAY="off", DISCORD_MCP_MAX_BLOCK_SECONDS="0.5")
    asker = StdioPeer(env, tmp_path)
    try:
        asker.handshake()
        asked = asker.call_tool(
            "ask_decision", {"question": "Ship the release?", "options": ["Ship", "Hold"]}
        )
        assert asked["status"] == "pending"
        asker.stop_reading()
        for n in range(40):  # the tool list is a few kB: these fill the pipe
            asker.send({"jsonrpc": "2.0", "id": 200 + n, "method": "tools/list", "params": {}})
        until(lambda: asker.unread() >= 4096, what="a full pipe")
        thread = until(lambda: people.threads(), what="the question's thread")[0]
        people.say(thread["id"], "Ship")
        asker.send(
            {
                "jsonrpc": "2.0",
                "id": 100,
                "method": "tools/call",
                "params": {
                    "name": "wait_decision",
                    "arguments": {"decision_id": asked["decision_id"], "max_wait_seconds": 30},
                },
            }
        )
        answered = until(
            lambda: (d := decision_file(home)) is not None and d["status"] == "answered" and d,
            what="the answer recorded",
        )
        assert answered["selected_option"] == "Ship"
        deadline = time.monotonic() + LOOK_S
        while time.monotonic() < deadline:
            decision = decision_file(home)
            assert decision is not None
            assert decision.get("delivered") is not True, "marked delivered before it was sent"
            time.sleep(0.05)
        asker.process.send_signal(signal.SIGKILL)
        asker.process.wait(timeout=10)
    finally:
        asker.close()
    successor = StdioPeer(env, tmp_path)
    try:
        successor.handshake()
        pending = successor.call_tool("check_pending", {})
        again = successor.call_tool("check_pending", {})
    finally:
        successor.close()
    [away] = pending["answered_while_away"]
    assert (away["question"], away["selected_option"]) == ("Ship the release?", "Ship")
    # Its asker was waiting when the answer came: this session is told it may have had it.
    assert "may already have received it" in away["note"]
    assert again["answered_while_away"] == []  # given once
    final = decision_file(home)
    assert final is not None
    assert final["delivered"] is True


def test_an_answer_check_pending_took_but_never_sent_goes_to_the_next_session(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = env_for(discord, home, DISCORD_MCP_GATEWAY="off", DISCORD_MCP_MAX_BLOCK_SECONDS="0.5")
    asker = StdioPeer(env, tmp_path)
    try:
        asker.handshake()
        asked = asker.call_tool(
            "ask_decision", {"question": "Rotate the keys?", "options": ["Rotate", "Wait"]}
        )
        assert asked["status"] == "pending"
    finally:
        asker.close()  # the asking session is gone; the owner answers afterwards
    thread = until(lambda: people.threads(), what="the question's thread")[0]
    people.say(thread["id"], "Rotate")
    taker = StdioPeer(env, tmp_path)
    try:
        taker.handshake()
        taker.stop_reading()
        for n in range(40):  # fill the pipe: check_pending's answer cannot be written
            taker.send({"jsonrpc": "2.0", "id": 200 + n, "method": "tools/list", "params": {}})
        until(lambda: taker.unread() >= 4096, what="a full pipe")
        first = decision_file(home)
        assert first is not None
        taker.send(
            {
                "jsonrpc": "2.0",
                "id": 100,
                "method": "tools/call",
                "params": {"name": "check_pending", "arguments": {}},
            }
        )
        # It read the answer from the thread and took it (became its asker) to hand it over.
        until(
            lambda: (
                (d := decision_file(home)) is not None
                and d["status"] == "answered"
                and d["asker_lease"] != first["asker_lease"]
            ),
            what="the answer taken by the new session",
        )
        decision = decision_file(home)
        assert decision is not None
        assert decision.get("delivered") is not True
        taker.process.send_signal(signal.SIGKILL)
        taker.process.wait(timeout=10)
    finally:
        taker.close()
    successor = StdioPeer(env, tmp_path)
    try:
        successor.handshake()
        pending = successor.call_tool("check_pending", {})
    finally:
        successor.close()
    [away] = pending["answered_while_away"]
    assert (away["question"], away["selected_option"]) == ("Rotate the keys?", "Rotate")
    final = decision_file(home)
    assert final is not None
    assert final["delivered"] is True
