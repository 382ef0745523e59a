"""The Decision MCP seed's tool names, served beside ours with ``DISCORD_MCP_TOOL_NAMES=seed``
(issue 34): prompts written for it call them unchanged and read its result fields."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from discord_mcp.config import Settings
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import ConfigError
from discord_mcp.inbox import Inbox, InboxItem
from discord_mcp.server.app import build_server
from discord_mcp.server.seed_tools import SEED_NAMES
from discord_mcp.state.files import off_loop
from tests.server.test_scope import thread_in
from tests.server.test_tools import CONTRACT, call, describe, new_thread
from tests.support.people import People
from tests.support.settings import env_for, settings_for

PINNED = {t["name"]: t for t in json.loads(CONTRACT.read_text(encoding="utf-8"))}
SEED_OPTIONS = ["A) 지금 실행", "B) 스테이징 먼저", "C) 보류"]


def fields(result: dict[str, Any], tool: str) -> None:
    """Every field of ``result`` is one the contract pins."""
    assert set(result) <= set(PINNED[tool]["result_fields"]), set(result) - set(
        PINNED[tool]["result_fields"]
    )


@pytest.fixture
def settings(discord: RunningEmulator, tmp_path: Path) -> Settings:
    return settings_for(
        discord,
        tmp_path / "home",
        DISCORD_MCP_MAX_BLOCK_SECONDS="20",
        DISCORD_MCP_TOOL_NAMES="seed",
    )


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[Client[Any]]:
    async with Client(build_server(settings, environ={})) as connected:
        yield connected


async def test_the_seeds_names_are_served_beside_ours_as_the_contract_pins(
    client: Client[Any],
) -> None:
    tools = sorted((describe(t) for t in await client.list_tools()), key=lambda t: t["name"])
    assert tools == [
        {k: t[k] for k in ("name", "parameters", "required", "read_only")} for t in PINNED.values()
    ]
    assert {t["name"] for t in tools} >= set(SEED_NAMES) | {"ask_decision", "wait_decision"}


async def test_without_the_setting_only_our_names_are_served_and_a_wrong_value_stops_it(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    ours = settings_for(discord, tmp_path / "home")
    async with Client(build_server(ours, environ={})) as client:
        names = {t.name for t in await client.list_tools()}
    assert not names & set(SEED_NAMES)
    with pytest.raises(ConfigError, match="DISCORD_MCP_TOOL_NAMES"):
        Settings.from_env(
            env_for(discord, tmp_path / "home", DISCORD_MCP_TOOL_NAMES="seeds"), read_dotenv=False
        )


async def test_discord_ask_decision_answers_with_the_seeds_fields(
    client: Client[Any], people: People
) -> None:
    asking = asyncio.create_task(
        call(
            client,
            "discord_ask_decision",
            question="DB 마이그레이션을 실행할까요?",
            context="v1→v2 스키마 변경",
            options=SEED_OPTIONS,
        )
    )
    thread = await new_thread(people)
    people.say(thread["id"], "A로 해줘")
    result = await asyncio.wait_for(asking, 15)
    fields(result, "discord_ask_decision")
    assert result["success"] is True
    assert result["selected_option"] == "A) 지금 실행"
    assert result["answer"] == "A로 해줘"
    assert result["question_id"] == result["decision_id"]
    assert (result["timed_out"], result["aborted"]) == (False, False)


async def test_an_empty_option_list_asks_for_free_text_and_a_timeout_is_timed_out_and_aborted(
    client: Client[Any], settings: Settings
) -> None:
    result = await call(
        client, "discord_ask_decision", question="Name?", options=[], timeout_seconds=0.5
    )
    fields(result, "discord_ask_decision")
    assert result["status"] == "expired"
    assert (result["success"], result["timed_out"], result["aborted"]) == (False, True, True)
    asked = await off_loop(DecisionStore(settings.home).load, result["decision_id"])
    assert asked.options == ()  # the seed's empty list: a free-text question


async def test_an_unanswered_question_is_not_a_success_and_says_to_keep_waiting(
    discord: RunningEmulator, tmp_path: Path, people: People
) -> None:
    settings = settings_for(
        discord,
        tmp_path / "home",
        DISCORD_MCP_MAX_BLOCK_SECONDS="0.3",
        DISCORD_MCP_TOOL_NAMES="seed",
    )
    async with Client(build_server(settings, environ={})) as client:
        pending = await call(client, "discord_ask_decision", question="Deploy?")
        assert pending["status"] == "pending"
        assert (pending["success"], pending["timed_out"], pending["aborted"]) == (
            False,
            False,
            False,
        )
        assert "wait_decision" in pending["instruction"]
        listed = await call(client, "discord_check_pending")
        fields(listed, "discord_check_pending")
        assert listed["has_pending"] is True
        [question] = listed["pending_questions"]
        assert question == {
            "question_id": pending["decision_id"],
            "question": "Deploy?",
            "thread_id": people.threads()[-1]["id"],
            "asked_at": pending["asked_at"],
            "status": "pending",
        }
        # Asking again finds the open question, as the seed's duplicate check does.
        again = await call(client, "discord_ask_decision", question="Deploy?")
        assert again["question_id"] == pending["decision_id"]


async def test_notify_report_and_the_inbox_under_the_seeds_names(
    client: Client[Any], people: People, settings: Settings
) -> None:
    sent = await call(client, "discord_notify", message="배포 시작", level="warning")
    assert sent["success"] is True
    assert people.messages(settings.channel_id)[-1]["content"].endswith("배포 시작")
    run = await thread_in(settings, settings.channel_id, "a run of this project")
    report = await call(
        client,
        "discord_report_progress",
        title="Phase 1",
        summary="스키마 변경 완료",
        details=["users", "orders"],
        thread_id=run,
    )
    assert (report["success"], report["status"]) == (True, "done")
    [card] = people.messages(run)
    assert "**Phase 1**" in card["content"]
    assert "• orders" in card["content"]
    await off_loop(
        Inbox(settings.home).add,
        [
            InboxItem(
                message_id="900000000000000001",
                channel_id=settings.channel_id,
                thread_id=None,
                author="owner",
                author_id="1",
                content="check the logs",
                timestamp="2026-03-01T00:00:00+00:00",
            )
        ],
    )
    read = await call(client, "discord_read_inbox", mark_read=True)
    assert read["success"] is True
    assert [m["content"] for m in read["messages"]] == ["check the logs"]
    cleared = await call(client, "discord_clear_inbox")
    assert (cleared["success"], cleared["removed"]) == (True, 1)


async def test_the_seeds_names_keep_our_checks_a_foreign_thread_is_refused(
    client: Client[Any], people: People, settings: Settings
) -> None:
    other = people.text_channel("someone-elses")
    for tool, arguments in (
        ("discord_notify", {"message": "hi", "thread_id": other}),
        ("discord_report_progress", {"title": "T", "summary": "s", "thread_id": other}),
        ("discord_ask_decision", {"question": "Deploy?", "thread_id": other}),
    ):
        with pytest.raises(ToolError, match="not in this project's channel"):
            await call(client, tool, **arguments)
    assert [m for m in people.messages(other) if m.get("type", 0) == 0] == []
