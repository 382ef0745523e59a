"""The server keeps its promises under concurrency: no freeze, one card, one session per answer."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from discord_mcp.config import Settings
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.server.app import build_server
from discord_mcp.state.files import locked
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.settings import settings_for


@pytest.fixture
def settings(discord: RunningEmulator, tmp_path: Path) -> Settings:
    return settings_for(discord, tmp_path / "home", DISCORD_MCP_MAX_BLOCK_SECONDS="0.3")


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[Client[Any]]:
    async with Client(build_server(settings, environ={})) as connected:
        yield connected


async def call(client: Client[Any], tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def test_progress_reports_for_one_task_at_once_post_one_card_and_all_return(
    client: Client[Any], people: People, discord: RunningEmulator
) -> None:
    reports = await asyncio.wait_for(
        asyncio.gather(
            *(
                call(client, "report_progress", title="Deploy", summary=f"step {n}")
                for n in range(5)
            )
        ),
        30,
    )
    assert len({r["message_id"] for r in reports}) == 1
    assert sum(r["new_message"] for r in reports) == 1
    assert len(people.messages(discord.channel_id)) == 1


async def test_a_state_lock_held_elsewhere_never_freezes_the_other_tool_calls(
    client: Client[Any], settings: Settings, people: People, discord: RunningEmulator
) -> None:
    """The progress card's lock is held by someone else (another process, stuck for a while):
    the call that needs it waits, and every other call of the server goes on meanwhile."""
    path = settings.home / "progress" / "proj" / "deploy.json"
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with locked(path):
            taken.set()
            release.wait(20)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert taken.wait(5)
        reporting = asyncio.create_task(
            call(client, "report_progress", title="Deploy", summary="waiting for the lock")
        )
        sent = await asyncio.wait_for(call(client, "notify", message="still answering"), 10)
        assert sent["ok"] is True
        pending = await asyncio.wait_for(call(client, "check_pending"), 10)
        assert pending["pending"] == []
        assert not reporting.done()
    finally:
        release.set()
        holder.join(10)
    report = await asyncio.wait_for(reporting, 15)
    assert report["new_message"] is True
    texts = [m["content"] for m in people.messages(discord.channel_id)]
    assert any("still answering" in t for t in texts)
    assert any("waiting for the lock" in t for t in texts)


async def test_a_progress_card_the_owner_deleted_is_posted_anew(
    client: Client[Any], settings: Settings, people: People, discord: RunningEmulator
) -> None:
    first = await call(client, "report_progress", title="Build", summary="compiling")
    async with RestClient(settings.token, api_base=settings.api_base) as rest:
        await rest.delete_message(discord.channel_id, first["message_id"])
    second = await call(client, "report_progress", title="Build", summary="linking")
    assert second["new_message"] is True
    assert second["message_id"] != first["message_id"]
    [card] = people.messages(discord.channel_id)
    assert "linking" in card["content"]


async def test_an_answer_reaches_exactly_one_session(settings: Settings, people: People) -> None:
    """A live session's answer is never handed to another session of the project; an answer
    whose session is gone reaches exactly one session."""
    store = DecisionStore(settings.home)
    async with (
        Client(build_server(settings, environ={})) as first,
        Client(build_server(settings, environ={})) as second,
    ):
        asked = await call(first, "ask_decision", question="Merge?", options=["Merge", "Wait"])
        assert asked["status"] == "pending"
        people.say(store.load(asked["decision_id"]).thread_id, "merge")
        # check_pending looks at the thread (and finds the answer), but the answer is the
        # first session's: it is alive.
        assert (await call(second, "check_pending"))["answered_while_away"] == []
        assert store.load(asked["decision_id"]).status == "answered"
        got = await call(first, "wait_decision", decision_id=asked["decision_id"])
        assert got["selected_option"] == "Merge"
        assert (await call(second, "check_pending"))["answered_while_away"] == []

        async with Client(build_server(settings, environ={})) as gone:
            orphan = await call(gone, "ask_decision", question="Rebase?", options=["Yes", "No"])
        people.say(store.load(orphan["decision_id"]).thread_id, "yes")  # found by check_pending
        away = (await call(second, "check_pending"))["answered_while_away"]
        assert [d["decision_id"] for d in away] == [orphan["decision_id"]]
        assert (await call(second, "check_pending"))["answered_while_away"] == []
        assert (await call(first, "check_pending"))["answered_while_away"] == []


async def test_an_answer_someone_waits_for_is_not_handed_to_another_session(
    settings: Settings,
) -> None:
    """The asker is gone but a call is waiting on the decision: it is that call's."""
    async with Client(build_server(settings, environ={})) as gone:
        asked = await call(gone, "ask_decision", question="Tag it?", options=["Yes", "No"])
    store = DecisionStore(settings.home)
    await store.afinish(
        asked["decision_id"], status="answered", answer="yes", selected_option="Yes"
    )
    hold = await store.ahold_waiting(asked["decision_id"])
    try:
        assert await store.adeliver_if_away(asked["decision_id"]) is None
    finally:
        hold.release()
    delivered = await store.adeliver_if_away(asked["decision_id"])
    assert delivered is not None
    assert delivered.delivered
    assert await store.adeliver_if_away(asked["decision_id"]) is None


async def test_a_corrupt_decision_file_is_quarantined_and_reported_in_the_next_result(
    client: Client[Any], settings: Settings
) -> None:
    asked = await call(client, "ask_decision", question="Corrupt me?")
    path = settings.home / "decisions" / f"{asked['decision_id']}.json"
    path.write_text('{"version": 1, "id": "torn', encoding="utf-8")
    report = await call(client, "check_pending")
    [warning] = report["warnings"]
    assert str(path) in warning
    assert "corrupt" in warning
    assert not path.exists()
    [moved] = list(path.parent.glob(f"{path.name}.corrupt-*"))
    assert moved.read_text(encoding="utf-8") == '{"version": 1, "id": "torn'
    assert str(moved) in warning
    assert "warnings" not in await call(client, "check_pending")  # reported once


async def test_the_main_channel_is_not_a_thread_to_ask_in(
    client: Client[Any], discord: RunningEmulator, people: People
) -> None:
    with pytest.raises(ToolError, match="not a thread"):
        await client.call_tool(
            "ask_decision", {"question": "Here?", "thread_id": discord.channel_id}
        )
    assert people.messages(discord.channel_id) == []


def test_tool_results_stay_json(tmp_path: Path) -> None:
    """Warnings are plain strings inside the JSON result (an agent reads them as text)."""
    from discord_mcp.server.toolkit import reported as _reported
    from discord_mcp.state.quarantine import quarantine

    bad = tmp_path / "x.json"
    bad.write_text("nope", encoding="utf-8")
    quarantine(bad, "not JSON")
    result = _reported({"ok": True})
    assert json.loads(json.dumps(result))["warnings"][0].startswith("state file ")
