"""The ``approve`` tool answers as Claude Code's permission prompt expects: one JSON text block."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from discord_mcp.config import Settings
from discord_mcp.decisions.cards import NO, YES
from discord_mcp.emulator import RunningEmulator
from discord_mcp.server.app import build_server
from tests.support.people import People
from tests.support.settings import settings_for

SESSION = "7d3c9a1e-0000-4000-8000-000000000001"


@pytest.fixture
def settings(discord: RunningEmulator, tmp_path: Path) -> Settings:
    return settings_for(discord, tmp_path / "home", DISCORD_MCP_APPROVAL_WAIT_SECONDS="30")


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[Client[Any]]:
    server = build_server(settings, environ={"CLAUDE_CODE_SESSION_ID": SESSION})
    async with Client(server) as connected:
        yield connected


async def card(people: People) -> dict[str, Any]:
    async with asyncio.timeout(10):
        while True:
            for thread in people.threads():
                for message in people.messages(thread["id"]):
                    if "Approval needed" in message["content"]:
                        return message
            await asyncio.sleep(0.02)


async def ask(client: Client[Any], command: str) -> asyncio.Task[Any]:
    arguments = {"tool_name": "Bash", "input": {"command": command}, "tool_use_id": "toolu_1"}
    return asyncio.create_task(client.call_tool("approve", arguments))


async def test_an_allow_is_one_text_block_with_the_input_to_run(
    client: Client[Any], people: People
) -> None:
    call = await ask(client, "make test")
    shown = await card(people)
    assert SESSION[:8] in shown["content"]
    people.react(shown["channel_id"], shown["id"], YES)
    result = await asyncio.wait_for(call, 20)
    assert result.structured_content is None
    [block] = result.content
    assert json.loads(block.text) == {"behavior": "allow", "updatedInput": {"command": "make test"}}


async def test_a_deny_carries_the_reason_for_the_model(client: Client[Any], people: People) -> None:
    call = await ask(client, "make clean")
    shown = await card(people)
    people.react(shown["channel_id"], shown["id"], NO)
    [block] = (await asyncio.wait_for(call, 20)).content
    answer = json.loads(block.text)
    assert answer["behavior"] == "deny"
    assert "denied" in answer["message"]


async def test_approvals_are_not_listed_as_questions_to_wait_for(
    client: Client[Any], people: People
) -> None:
    call = await ask(client, "make lint")
    await card(people)
    listed = await client.call_tool("check_pending", {})
    assert listed.structured_content is not None
    assert listed.structured_content["pending"] == []
    call.cancel()


async def test_when_discord_fails_the_answer_is_a_deny_with_a_sentence_not_an_http_line(
    client: Client[Any], people: People
) -> None:
    """Fail closed: no card could be posted, so nothing may run, and the model is told why in
    words it can act on (issue 32)."""
    people.fault(route="POST /channels/{channel_id}/threads", status=500, count=1000)
    people.fault(route="POST /channels/{channel_id}/messages", status=500, count=1000)
    result = await asyncio.wait_for(
        client.call_tool(
            "approve",
            {"tool_name": "Bash", "input": {"command": "make deploy"}, "tool_use_id": "toolu_9"},
            raise_on_error=False,
        ),
        60,
    )
    assert not result.is_error
    [block] = result.content
    answer = json.loads(block.text)
    assert answer["behavior"] == "deny"
    message = answer["message"]
    assert "500" not in message
    assert "/channels/" not in message
    assert "HTTP" not in message
    assert "Discord" in message
    assert "not run" in message
    assert "try again" in message
