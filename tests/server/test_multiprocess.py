"""Several real server processes on one state directory, as Claude Code teammates run them."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.support.people import People
from tests.support.settings import env_for
from tests.support.stdio_peer import StdioPeer

TEAMMATES = 4


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    # Discord's real rate-limit speed: polling must stay inside it without a single 429.
    return make_emulator(rate_limit_scale=1.0)


def test_each_teammate_gets_its_own_answer_and_polling_stays_within_rate_limits(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    home = tmp_path / "shared-home"
    peers = [
        StdioPeer(
            env_for(
                discord,
                home,
                POLL_INTERVAL_SECONDS="0.2",
                DISCORD_MCP_MAX_BLOCK_SECONDS="60",
                CLAUDE_CODE_SESSION_ID=f"t{i}-0000-4000-8000-session",
            ),
            tmp_path,
        )
        for i in range(TEAMMATES)
    ]
    options = [f"choice-{i}-{letter}" for i in range(TEAMMATES) for letter in "ab"]
    try:
        for peer in peers:
            peer.handshake()
        with ThreadPoolExecutor(TEAMMATES) as pool:
            asks = [
                pool.submit(
                    peer.call_tool,
                    "ask_decision",
                    {
                        "question": f"Teammate {i}: which way?",
                        "options": options[2 * i : 2 * i + 2],
                    },
                )
                for i, peer in enumerate(peers)
            ]
            deadline = time.monotonic() + 30
            # Every card posted (a reply that lands before its card does not count).
            while sum(bool(people.messages(t["id"])) for t in people.threads()) < TEAMMATES:
                assert time.monotonic() < deadline, "not every teammate asked"
                time.sleep(0.05)
            # Answer in reverse order, each with the *second* option of that teammate.
            for thread in sorted(people.threads(), key=lambda t: t["name"], reverse=True):
                people.say(thread["id"], "B")
            results = [ask.result(timeout=60) for ask in asks]
    finally:
        for peer in peers:
            peer.close()
    for i, result in enumerate(results):
        assert result["status"] == "answered"
        assert result["selected_option"] == f"choice-{i}-b"
        assert f"Teammate {i}:" in result["question"]
    thread_names = sorted(t["name"] for t in people.threads())
    assert all(f"t{i}-0000-" in name for i, name in enumerate(thread_names))
    assert people.state()["stats"]["rest_429"] == 0
