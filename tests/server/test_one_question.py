"""One question asked by several server processes at the same moment is one decision, one card."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from discord_mcp.emulator import RunningEmulator
from tests.support.people import People
from tests.support.settings import env_for
from tests.support.stdio_peer import StdioPeer

SERVERS = 6


def test_servers_asking_the_same_question_at_once_post_one_card(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    home = tmp_path / "shared-home"
    env = env_for(discord, home, DISCORD_MCP_MAX_BLOCK_SECONDS="0.5", DISCORD_MCP_GATEWAY="off")
    peers = [StdioPeer(env, tmp_path) for _ in range(SERVERS)]
    try:
        for peer in peers:
            peer.handshake()
        start = threading.Barrier(SERVERS)

        def ask(peer: StdioPeer) -> dict[str, object]:
            start.wait(10)  # all at the same moment
            return peer.call_tool(
                "ask_decision", {"question": "Run the migration?", "options": ["Run", "Skip"]}
            )

        with ThreadPoolExecutor(SERVERS) as pool:
            results = list(pool.map(ask, peers))
    finally:
        for peer in peers:
            peer.close()
    assert len({r["decision_id"] for r in results}) == 1
    assert sum("note" in r for r in results) == SERVERS - 1  # the others were told it was reused
    [thread] = people.threads()
    cards = [m for m in people.messages(thread["id"]) if "decision `" in m["content"]]
    assert len(cards) == 1
    assert len(list((home / "decisions").glob("*.json"))) == 1
