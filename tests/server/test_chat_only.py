"""A stranger's turn gets a discord server that serves only the chat tools, pinned to its
channel and without files (DISCORD_MCP_TOOLS=chat), and leaves the mark that its agent spoke."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from discord_mcp.chat.said import said_since
from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import ConfigError
from discord_mcp.server.app import build_server
from tests.support.people import People
from tests.support.settings import env_for, settings_for


def test_the_chat_tool_set_needs_its_channel_and_a_known_name(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="DISCORD_THREAD_ID"):
        settings_for(discord, tmp_path / "home", DISCORD_MCP_TOOLS="chat")
    with pytest.raises(ConfigError, match="DISCORD_MCP_TOOLS"):
        settings_for(discord, tmp_path / "home", DISCORD_MCP_TOOLS="chatty")
    env = env_for(discord, tmp_path / "home", DISCORD_MCP_TOOLS="all")
    assert Settings.from_env(env, read_dotenv=False).tools == "all"


async def test_a_restricted_server_lists_only_the_chat_tools_and_keeps_to_its_channel(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    chat = people.text_channel("companion")
    mark = tmp_path / "home" / "chat" / "said" / f"{chat}.json"
    settings = settings_for(
        discord,
        tmp_path / "home",
        DISCORD_MCP_TOOLS="chat",
        DISCORD_THREAD_ID=chat,
        DISCORD_MCP_CHAT_MARK=str(mark),
    )
    (tmp_path / "secret.txt").write_text("the owner's notes", encoding="utf-8")
    async with Client(build_server(settings, environ={})) as client:
        names = sorted(t.name for t in await client.list_tools())
        assert names == ["add_reaction", "read_history", "send_message"]
        for forbidden, arguments in OWNERS_CALLS.items():
            # Calls the owner's server takes as they are: only the restriction refuses them.
            with pytest.raises(ToolError, match="Unknown tool"):
                async with asyncio.timeout(15):  # an unrestricted ask would wait for an answer
                    await client.call_tool(forbidden, arguments)
        hello = people.say(chat, "hello bot")
        assert not said_since(mark, 0.0)
        sent = await client.call_tool("send_message", {"content": "hi there"})
        assert sent.data["channel_id"] == chat
        assert said_since(mark, 0.0)
        with pytest.raises(ToolError, match="its own channel"):
            await client.call_tool(
                "send_message", {"content": "sneaky", "thread_id": discord.channel_id}
            )
        with pytest.raises(ToolError, match="its own channel"):
            await client.call_tool("read_history", {"thread_id": discord.channel_id})
        with pytest.raises(ToolError, match="files cannot be sent"):
            await client.call_tool(
                "send_message", {"content": "x", "files": [str(tmp_path / "secret.txt")]}
            )
        reacted = await client.call_tool("add_reaction", {"message_id": hello["id"], "emoji": "👍"})
        assert reacted.data["ok"] is True
        history = await client.call_tool("read_history", {})
        assert [m["content"] for m in history.data["messages"]] == ["hello bot", "hi there"]
    main = [m["content"] for m in people.messages(discord.channel_id)]
    assert "sneaky" not in main
    posted = main + [m["content"] for m in people.messages(chat)]
    posted += [m["content"] for t in people.threads() for m in people.messages(t["id"])]
    for words in ("Deploy now?", "the owner's notice", "rm -rf /tmp/work", "Halfway"):
        assert not [text for text in posted if words in text], words


OWNERS_CALLS: dict[str, dict[str, Any]] = {
    "read_inbox": {},
    "check_pending": {},
    "clear_inbox": {},
    "ask_decision": {"question": "Deploy now?", "options": ["yes", "no"], "timeout_seconds": 60},
    "approve": {"tool_name": "Bash", "input": {"command": "rm -rf /tmp/work"}},
    "notify": {"message": "the owner's notice", "level": "info"},
    "report_progress": {"title": "Migration", "summary": "Halfway"},
}
"""The owner's tools, each with arguments its unrestricted server accepts."""


async def test_the_owners_server_takes_those_same_calls(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    """The control for the test above: its calls are refused by the restriction alone."""
    settings = settings_for(
        discord,
        tmp_path / "home",
        DISCORD_MCP_MAX_BLOCK_SECONDS="1",  # an ask comes back pending
        DISCORD_MCP_APPROVAL_WAIT_SECONDS="1",  # an approval comes back unanswered
    )
    async with Client(build_server(settings, environ={})) as client:
        for name, arguments in OWNERS_CALLS.items():
            async with asyncio.timeout(30):
                result = await client.call_tool(name, arguments)
            assert not result.is_error, name
    posted = [m["content"] for m in people.messages(discord.channel_id)]
    posted += [m["content"] for t in people.threads() for m in people.messages(t["id"])]
    for words in ("Deploy now?", "the owner's notice", "rm -rf /tmp/work", "Halfway"):
        assert [text for text in posted if words in text], words
