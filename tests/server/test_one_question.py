"""One question asked by several server processes of one session at the same moment is one
decision, one card; the same words from other sessions or threads are their own questions."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from discord_mcp.emulator import RunningEmulator
from tests.support.people import People
from tests.support.settings import env_for
from tests.support.stdio_peer import StdioPeer

SERVERS = 6


def test_servers_of_one_session_asking_the_same_question_at_once_post_one_card(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    home = tmp_path / "shared-home"
    env = env_for(
        discord,
        home,
        DISCORD_MCP_MAX_BLOCK_SECONDS="0.5",
        DISCORD_MCP_GATEWAY="off",
        CLAUDE_CODE_SESSION_ID="one-session-of-claude",
    )
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


def run_thread(discord: RunningEmulator, name: str) -> str:
    """A thread in the channel, as discord-watch opens one for a run."""
    response = httpx.post(
        f"{discord.api_base}/channels/{discord.channel_id}/threads",
        headers={"Authorization": f"Bot {discord.token}"},
        json={"name": name, "type": 11},
    )
    response.raise_for_status()
    return str(response.json()["id"])


def ask_once(env: dict[str, str], tmp_path: Path, question: str) -> dict[str, object]:
    peer = StdioPeer(env, tmp_path)
    try:
        peer.handshake()
        return peer.call_tool("ask_decision", {"question": question, "options": ["Yes", "No"]})
    finally:
        peer.close()


def test_the_same_words_in_two_run_threads_are_two_questions(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    """Two runs in two threads both asking "Bump the version?" each get their own card."""
    home = tmp_path / "shared-home"
    threads = [run_thread(discord, f"run {n}") for n in (1, 2)]
    results = [
        ask_once(
            env_for(
                discord,
                home,
                DISCORD_MCP_MAX_BLOCK_SECONDS="0.5",
                DISCORD_MCP_GATEWAY="off",
                DISCORD_THREAD_ID=thread,
                DISCORD_MCP_RUN="1",
                CLAUDE_CODE_SESSION_ID="same-label",
            ),
            tmp_path,
            "Bump the version?",
        )
        for thread in threads
    ]
    assert results[0]["decision_id"] != results[1]["decision_id"]
    for thread, result in zip(threads, results, strict=True):
        assert result["thread_url"].endswith(thread)  # type: ignore[union-attr]
        cards = [m for m in people.messages(thread) if "decision `" in m["content"]]
        assert len(cards) == 1


def test_the_same_words_from_two_sessions_are_two_questions(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    home = tmp_path / "shared-home"
    ids = {
        ask_once(
            env_for(
                discord,
                home,
                DISCORD_MCP_MAX_BLOCK_SECONDS="0.5",
                DISCORD_MCP_GATEWAY="off",
                CLAUDE_CODE_SESSION_ID=session,
            ),
            tmp_path,
            "Run the migration?",
        )["decision_id"]
        for session in ("aaaa1111-session", "bbbb2222-session")
    }
    assert len(ids) == 2
