"""Where an agent's messages may go: its project's channel and that channel's threads, never
another channel, another channel's threads or the machines' presence thread (issue 32)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from discord_mcp.config import Settings
from discord_mcp.emulator import Exchange, RunningEmulator
from discord_mcp.server.app import build_server
from discord_mcp.team.presence import THREAD_NAME
from discord_mcp.transport.rest import RestClient
from tests.server.test_tools import call
from tests.support.people import People
from tests.support.settings import settings_for


@pytest.fixture
def fetched() -> list[str]:
    """The channels the bot looked up (``GET /channels/{id}``)."""
    return []


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator], fetched: list[str]) -> RunningEmulator:
    def seen(exchange: Exchange) -> None:
        parts = exchange.path.strip("/").split("/")
        if exchange.method == "GET" and len(parts) == 2 and parts[0] == "channels":
            fetched.append(parts[1])

    return make_emulator(exchange_hook=seen)


@pytest.fixture
def settings(discord: RunningEmulator, tmp_path: Path) -> Settings:
    return settings_for(discord, tmp_path / "home", DISCORD_MCP_MAX_BLOCK_SECONDS="5")


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[Client[Any]]:
    async with Client(build_server(settings, environ={})) as connected:
        yield connected


async def thread_in(settings: Settings, channel_id: str, name: str) -> str:
    """A thread the bot opens under ``channel_id`` (as discord-watch or a person would)."""
    async with RestClient(settings.token, api_base=settings.api_base) as rest:
        return str((await rest.create_thread(channel_id, name))["id"])


async def test_another_channel_and_its_threads_are_refused_with_a_sentence_and_nothing_is_sent(
    client: Client[Any], people: People, settings: Settings
) -> None:
    other = people.text_channel("someone-elses")
    elsewhere = await thread_in(settings, other, "another project's run")
    stranger = people.say(other, "a message there")
    for place in (other, elsewhere):
        attempts: list[tuple[str, dict[str, Any]]] = [
            ("send_message", {"content": "hello", "thread_id": place}),
            ("notify", {"message": "hello", "thread_id": place}),
            ("report_progress", {"title": "Build", "summary": "going", "thread_id": place}),
            ("add_reaction", {"message_id": stranger["id"], "emoji": "👍", "thread_id": place}),
            ("read_history", {"thread_id": place}),
            ("ask_decision", {"question": "Deploy?", "options": ["yes", "no"], "thread_id": place}),
        ]
        for tool, arguments in attempts:
            with pytest.raises(ToolError) as refused:
                await call(client, tool, **arguments)
            said = str(refused.value)
            assert "not in this project's channel" in said, (tool, said)
            assert "omit thread_id" in said.lower(), (tool, said)
    posted = [m for m in people.messages(other) if m.get("type", 0) == 0]  # not "thread opened"
    assert [m["id"] for m in posted] == [stranger["id"]]
    assert not posted[0].get("reactions")
    assert people.messages(elsewhere) == []


async def test_the_machines_presence_thread_is_not_an_agents_to_post_in(
    client: Client[Any], people: People, settings: Settings
) -> None:
    machines = await thread_in(settings, settings.channel_id, THREAD_NAME)
    for tool, arguments in (
        ("send_message", {"content": "```json\n{}\n```", "thread_id": machines}),
        ("notify", {"message": "hi", "thread_id": machines}),
        ("report_progress", {"title": "Build", "summary": "going", "thread_id": machines}),
        ("ask_decision", {"question": "Deploy?", "thread_id": machines}),
    ):
        with pytest.raises(ToolError, match="machines' presence thread"):
            await call(client, tool, **arguments)
    assert people.messages(machines) == []


async def test_the_projects_channel_and_its_threads_are_used_and_looked_up_once(
    client: Client[Any], people: People, settings: Settings, fetched: list[str]
) -> None:
    own = await thread_in(settings, settings.channel_id, "a run of this project")
    first = await call(client, "send_message", content="one", thread_id=own)
    second = await call(client, "send_message", content="two", thread_id=own)
    await call(client, "read_history", thread_id=own)
    main = await call(client, "send_message", content="three", thread_id=settings.channel_id)
    assert (first["channel_id"], second["channel_id"], main["channel_id"]) == (
        own,
        own,
        settings.channel_id,
    )
    assert [m["content"] for m in people.messages(own)] == ["one", "two"]
    assert fetched.count(own) <= 1  # the answer is kept: a thread's parent never changes
    assert settings.channel_id not in fetched  # the project's channel needs no look-up


async def test_report_progress_reports_into_an_existing_thread_of_the_project(
    client: Client[Any], people: People, settings: Settings
) -> None:
    """The Decision MCP seed's report_progress(thread_id=...) (issue 34)."""
    own = await thread_in(settings, settings.channel_id, "a run of this project")
    first = await call(client, "report_progress", title="Build", summary="1/2", thread_id=own)
    second = await call(client, "report_progress", title="Build", summary="2/2", thread_id=own)
    assert (first["new_message"], second["new_message"]) == (True, False)
    assert [m["id"] for m in people.messages(own)] == [first["message_id"]]
    assert "2/2" in people.messages(own)[0]["content"]
    # The same task in the channel is a card of its own there, not an edit of the thread's.
    here = await call(client, "report_progress", title="Build", summary="main", thread_id="")
    assert here["new_message"] is True
    assert [
        m["id"] for m in people.messages(settings.channel_id) if "**Build**" in m["content"]
    ] == [here["message_id"]]
