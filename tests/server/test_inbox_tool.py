"""``read_inbox`` and ``clear_inbox`` through the MCP tools: per-project marks, and a corrupt
inbox reported in the tool result (never read as empty in silence)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.inbox import Inbox, InboxItem
from discord_mcp.server.app import build_server
from discord_mcp.state.files import off_loop
from discord_mcp.state.quarantine import find_quarantined, take_reports
from tests.server.test_tools import call
from tests.support.settings import env_for, settings_for


def note(n: int) -> InboxItem:
    return InboxItem(
        message_id=f"91000000000000000{n}",
        channel_id="100000000000000001",
        thread_id=None,
        author_id="1",
        author="owner",
        content=f"note {n}",
        timestamp="2026-11-22T16:00:00+00:00",
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
async def connect(discord: RunningEmulator, home: Path) -> AsyncIterator[Any]:
    clients: list[Client[Any]] = []

    async def connected(project: str) -> Client[Any]:
        settings: Settings = settings_for(discord, home, PROJECT_NAME=project)
        client: Client[Any] = Client(build_server(settings, environ={}))
        await client.__aenter__()
        clients.append(client)
        return client

    yield connected
    for client in clients:
        await client.__aexit__(None, None, None)


async def test_a_corrupt_inbox_is_a_warning_in_read_inbox_for_every_project(
    connect: Any, home: Path
) -> None:
    path = home / "inbox" / "items.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 2, "items": [{"message_id": ', encoding="utf-8")
    take_reports()
    api, web = await connect("api"), await connect("web")

    first = await call(api, "read_inbox")

    [moved] = find_quarantined(home)
    assert first["count"] == 0
    [warning] = first["warnings"]
    assert str(moved) in warning
    assert "doctor" in warning
    # The other project's session is told too, once; the next results carry no warning.
    [other] = (await call(web, "read_inbox"))["warnings"]
    assert str(moved) in other
    assert "warnings" not in await call(api, "read_inbox")
    assert "warnings" not in await call(web, "read_inbox")


async def test_a_shared_note_cleared_by_one_project_is_still_there_for_another(
    connect: Any, home: Path
) -> None:
    await off_loop(Inbox(home).add, [note(1)])
    api, web = await connect("api"), await connect("web")

    await call(api, "read_inbox", mark_read=True)
    assert (await call(api, "clear_inbox"))["removed"] == 1

    assert (await call(api, "read_inbox", unread_only=False))["count"] == 0
    for_web = await call(web, "read_inbox")
    assert [(m["content"], m["read"]) for m in for_web["messages"]] == [("note 1", False)]


async def test_two_projects_of_one_name_keep_their_own_read_marks(
    discord: RunningEmulator, home: Path, tmp_path: Path
) -> None:
    await off_loop(Inbox(home).add, [note(1), note(2)])
    clients = []
    for workspace in ("ws1", "ws2"):
        directory = tmp_path / workspace / "app"  # the same name, not the same project
        directory.mkdir(parents=True)
        env = {k: v for k, v in env_for(discord, home).items() if k != "PROJECT_NAME"}
        settings = Settings.from_env(env, cwd=directory, read_dotenv=False)
        assert settings.project_name == "app"
        client: Client[Any] = Client(build_server(settings, environ={}))
        await client.__aenter__()
        clients.append(client)
    first, second = clients
    try:
        await call(first, "read_inbox", mark_read=True)
        assert (await call(first, "clear_inbox"))["removed"] == 2
        for_second = await call(second, "read_inbox")
        assert [(m["content"], m["read"]) for m in for_second["messages"]] == [
            ("note 1", False),
            ("note 2", False),
        ]
    finally:
        for client in clients:
            await client.__aexit__(None, None, None)
