"""A decision is waited on, cancelled and handed over only within the project, and the live
session, that asked it (issue 32: another project's ``wait_decision(<id>)`` took the owner's
answer and marked it delivered, so the asking agent never got it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.server.app import build_server
from tests.server.test_tools import call
from tests.support.people import People
from tests.support.settings import settings_for


def session(name: str) -> dict[str, str]:
    """A Claude Code session's environment: its id labels the questions it asks."""
    return {"CLAUDE_CODE_SESSION_ID": name * 8}


async def test_another_projects_agent_can_neither_wait_on_cancel_nor_take_a_decision(
    discord: RunningEmulator, tmp_path: Path, people: People
) -> None:
    home = tmp_path / "home"
    ours = settings_for(discord, home, PROJECT_NAME="app", DISCORD_MCP_MAX_BLOCK_SECONDS="0.2")
    theirs = settings_for(discord, home, PROJECT_NAME="web", DISCORD_MCP_MAX_BLOCK_SECONDS="0.2")
    store = DecisionStore(home)
    async with (
        Client(build_server(ours, environ=session("a"))) as asker,
        Client(build_server(theirs, environ=session("b"))) as stranger,
    ):
        asked = await call(asker, "ask_decision", question="Drop the table?", options=["y", "n"])
        assert asked["status"] == "pending"
        decision_id = asked["decision_id"]
        people.say(store.load(decision_id).thread_id, "y")  # read by whoever waits
        for tool, arguments in (
            ("wait_decision", {"decision_id": decision_id}),
            ("cancel_decision", {"decision_id": decision_id, "reason": "mine now"}),
        ):
            with pytest.raises(ToolError) as refused:
                await call(stranger, tool, **arguments)
            said = str(refused.value)
            assert "another project" in said, (tool, said)
            assert "check_pending" in said, (tool, said)
        report = await call(stranger, "check_pending")
        assert report["answered_while_away"] == []
        assert store.load(decision_id).delivered is False  # still the asker's to receive
        got = await call(asker, "wait_decision", decision_id=decision_id)
    assert (got["status"], got["selected_option"]) == ("answered", "y")


async def test_another_live_session_of_the_project_cannot_take_its_answer_until_it_is_gone(
    discord: RunningEmulator, tmp_path: Path, people: People
) -> None:
    settings = settings_for(discord, tmp_path / "home", DISCORD_MCP_MAX_BLOCK_SECONDS="0.2")
    store = DecisionStore(settings.home)
    async with Client(build_server(settings, environ=session("b"))) as other:
        async with Client(build_server(settings, environ=session("a"))) as asker:
            asked = await call(asker, "ask_decision", question="Ship it?", options=["y", "n"])
            decision_id = asked["decision_id"]
            with pytest.raises(ToolError, match="another session of this project"):
                await call(other, "wait_decision", decision_id=decision_id, max_wait_seconds=0)
            with pytest.raises(ToolError, match="another session of this project"):
                await call(other, "cancel_decision", decision_id=decision_id)
            # The same session after a restart of its server (the old one still running) is
            # the asker: it may wait.
            async with Client(build_server(settings, environ=session("a"))) as restarted:
                again = await call(restarted, "wait_decision", decision_id=decision_id)
                assert again["status"] == "pending"
        # The asking session is gone: its answer is not lost, another session takes it over.
        people.say(store.load(decision_id).thread_id, "n")
        got = await call(other, "wait_decision", decision_id=decision_id)
    assert (got["status"], got["selected_option"]) == ("answered", "n")
    assert store.load(decision_id).delivered is True
