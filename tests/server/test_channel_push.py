"""Owner messages pushed into a live Claude Code session (channel mode), with the durable
inbox behind it.

Claude Code cannot register a channel offline (it needs an interactive session, a claude.ai
login and the account's channels feature), so the client here is Claude Code 2.1.330's own
handshake, recorded (tests/data/claude-code/), replayed to a real ``discord-mcp`` process; what
the server writes back is read from its stdout.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.chat.push import addressed_to, channel_event, channel_wanted
from discord_mcp.emulator import RunningEmulator
from discord_mcp.inbox import Inbox, InboxItem, Reader
from tests.support.settings import env_for
from tests.support.stdio_peer import StdioPeer

RECORDED = Path(__file__).parent.parent / "data" / "claude-code" / "mcp-handshake-2.1.330.jsonl"
SESSION = "5e55a0b1-2c3d-4e5f-8a9b-0c1d2e3f4a5b"
LABEL = SESSION[:8]
CHANNEL = "notifications/claude/channel"


def item(message_id: str, content: str, *, thread_id: str | None = None) -> InboxItem:
    return InboxItem(
        message_id=message_id,
        channel_id=thread_id or "100000000000000001",
        thread_id=thread_id,
        author_id="200000000000000002",
        author="owner",
        content=content,
        timestamp="2026-11-23T10:00:00+00:00",
    )


# -- which messages, and in which mode ---------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "parent", "wanted"),
    [
        ({"DISCORD_MCP_CHANNEL": "on"}, None, True),
        ({"DISCORD_MCP_CHANNEL": "off"}, ["claude", "--channels", "server:discord"], False),
        ({}, ["claude", "--dangerously-load-development-channels", "server:discord"], True),
        ({}, ["claude", "--channels", "plugin:x@y,server:discord", "-p"], True),
        ({}, ["claude", "--channels=server:discord"], True),
        ({}, ["claude", "--channels", "server:other", "server:discordx"], False),
        ({}, ["claude", "--mcp-config", "server:discord"], False),
        ({}, None, False),
    ],
)
def test_channel_mode_is_on_when_asked_or_when_claude_loads_us_as_a_channel(
    environ: dict[str, str], parent: list[str] | None, wanted: bool
) -> None:
    assert channel_wanted(environ, parent) is wanted


def test_a_session_gets_its_threads_and_its_mentions_only() -> None:
    mine = {"300000000000000003"}
    assert addressed_to(item("1", "hi", thread_id="300000000000000003"), label=LABEL, threads=mine)
    assert not addressed_to(
        item("2", "hi", thread_id="400000000000000004"), label=LABEL, threads=mine
    )
    assert addressed_to(item("3", f"@{LABEL} run the linter too"), label=LABEL, threads=mine)
    assert addressed_to(item("4", f"ok @{LABEL.upper()}."), label=LABEL, threads=mine)
    assert not addressed_to(item("5", "a note for every agent"), label=LABEL, threads=mine)
    assert not addressed_to(item("6", f"@{LABEL}x is another one"), label=LABEL, threads=mine)
    assert not addressed_to(item("7", f"mail@{LABEL}"), label=LABEL, threads=mine)


def test_an_event_carries_the_words_the_files_and_where_they_came_from() -> None:
    shot = {"filename": "a.png", "content_type": "image/png", "path": "/s/files/1/a.png"}
    event = channel_event(
        dataclasses.replace(item("9", "look", thread_id="300000000000000003"), attachments=(shot,))
    )
    assert event["content"] == "look\n[attached a.png (image/png): /s/files/1/a.png]"
    assert event["meta"]["message_id"] == "9"
    assert event["meta"]["thread_id"] == "300000000000000003"
    assert event["meta"]["untrusted"] == "true"
    assert all(key.isidentifier() for key in event["meta"])  # Claude Code drops other keys
    assert all(isinstance(value, str) for value in event["meta"].values())


async def test_notes_in_the_threads_of_the_sessions_questions_are_pushed(
    tmp_path: Path,
) -> None:
    from discord_mcp.chat.push import ChannelPush
    from discord_mcp.config import Settings
    from discord_mcp.decisions.store import DecisionStore
    from discord_mcp.state.files import off_loop
    from tests.decisions.test_store import make_decision

    settings = Settings.from_env(
        {
            "DISCORD_BOT_TOKEN": "x.y.z",
            "DISCORD_CHANNEL_ID": "100000000000000001",
            "DISCORD_OWNER_IDS": "200000000000000002",
            "DISCORD_MCP_HOME": str(tmp_path),
            "PROJECT_NAME": "proj",
        },
        read_dotenv=False,
    )
    store = DecisionStore(tmp_path)
    await off_loop(store.create, make_decision(session=LABEL, thread_id="300000000000000003"))
    await off_loop(store.create, make_decision(session="other", thread_id="400000000000000004"))
    await off_loop(
        Inbox(tmp_path).add,
        [
            dataclasses.replace(item("1", "mine", thread_id="300000000000000003"), project="proj"),
            dataclasses.replace(
                item("2", "theirs", thread_id="400000000000000004"), project="proj"
            ),
        ],
    )
    sent: list[tuple[str, dict[str, Any]]] = []

    async def send(method: str, params: dict[str, Any]) -> None:
        sent.append((method, params))

    push = ChannelPush(settings, LABEL, send)
    assert await push.push_new() == 1
    assert await push.push_new() == 0  # nothing new, nothing again
    assert [(m, p["content"]) for m, p in sent] == [(CHANNEL, "mine")]


# -- the protocol, with Claude Code's recorded side -------------------------------------------


class RecordedClaude:
    """A discord-mcp process, spoken to with Claude Code's recorded handshake."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.peer = StdioPeer(env, cwd)
        self.answers: dict[Any, dict[str, Any]] = {}
        for line in RECORDED.read_text(encoding="utf-8").splitlines():
            message = json.loads(line)
            self.peer.send(message)
            if "id" in message:
                self.answers[message["id"]] = self.wait(lambda m, i=message["id"]: m.get("id") == i)

    def messages(self) -> list[dict[str, Any]]:
        with self.peer._cond:
            return [json.loads(line) for line in self.peer.stdout_lines]

    def wait(
        self, match: Callable[[dict[str, Any]], bool], seconds: float = 30.0
    ) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        with self.peer._cond:
            while True:
                for line in self.peer.stdout_lines:
                    message = json.loads(line)
                    if match(message):
                        return dict(message)
                left = deadline - time.monotonic()
                assert left > 0, f"nothing matched; stderr: {bytes(self.peer.stderr)[-2000:]!r}"
                self.peer._cond.wait(left)

    def pushed(self) -> list[dict[str, Any]]:
        return [m["params"] for m in self.messages() if m.get("method") == CHANNEL]

    def close(self) -> None:
        self.peer.close()


@pytest.fixture
def start(discord: RunningEmulator, tmp_path: Path) -> Iterator[Callable[..., RecordedClaude]]:
    started: list[RecordedClaude] = []

    def make(**env: str) -> RecordedClaude:
        environ = env_for(
            discord,
            tmp_path / "home",
            DISCORD_MCP_GATEWAY="off",
            CLAUDE_CODE_SESSION_ID=SESSION,
            **env,
        )
        client = RecordedClaude(environ, tmp_path)
        started.append(client)
        return client

    yield make
    for client in started:
        client.close()


def test_channel_mode_declares_the_channel_in_the_handshake_era(
    start: Callable[..., RecordedClaude],
) -> None:
    claude = start(DISCORD_MCP_CHANNEL="on")
    probe, initialize = claude.answers["server-discover-probe-1"], claude.answers[0]
    assert "error" in probe  # the modern era is declined: Claude Code falls back to initialize
    result = initialize["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["capabilities"]["experimental"] == {"claude/channel": {}}
    assert '<channel source="discord"' in result["instructions"]
    assert claude.answers[1]["result"]["tools"]  # the tools are there as usual


def test_without_channel_mode_nothing_is_declared(start: Callable[..., RecordedClaude]) -> None:
    claude = start()  # auto, and pytest is not `claude --channels server:discord`
    assert "result" in claude.answers["server-discover-probe-1"]  # the modern era, as before


def test_owner_messages_for_the_session_are_pushed_once_and_none_is_lost_across_a_restart(
    start: Callable[..., RecordedClaude], tmp_path: Path
) -> None:
    inbox = Inbox(tmp_path / "home")
    claude = start(DISCORD_MCP_CHANNEL="on")
    inbox.add([item("11", f"@{LABEL} please also update the changelog"), item("12", "for all")])
    first = claude.wait(lambda m: m.get("method") == CHANNEL)["params"]
    assert first["content"] == f"@{LABEL} please also update the changelog"
    assert first["meta"]["message_id"] == "11"
    unread = [i.message_id for i in inbox.read(project=Reader("name:proj", "proj"))]
    assert unread == ["12"]  # pushed is read; another agent's note stays unread
    claude.close()

    inbox.add([item("13", f"@{LABEL} and bump the version")])  # while no session runs
    again = start(DISCORD_MCP_CHANNEL="on")
    pushed = again.wait(lambda m: m.get("method") == CHANNEL)["params"]
    assert pushed["meta"]["message_id"] == "13"
    inbox.add([item("14", f"@{LABEL} last one")])
    again.wait(lambda m: m.get("params", {}).get("meta", {}).get("message_id") == "14")
    assert [p["meta"]["message_id"] for p in again.pushed()] == ["13", "14"]  # 11 not again
    assert [p["meta"]["message_id"] for p in claude.pushed()] == ["11"]
