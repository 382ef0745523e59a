"""Every change goes through the state and comes out as one event (the future gateway feed)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from urllib.parse import quote

import httpx
import pytest

from discord_mcp.emulator import Event, serve
from discord_mcp.emulator.server import RunningEmulator
from tests.support.openapi_check import OpenAPIChecker


async def _past_rate_limit(send: Callable[[str], Awaitable[httpx.Response]], url: str) -> int:
    """The status of ``send(url)`` once past 429s (windows are microseconds here); bounded."""
    for _ in range(1000):
        status = (await send(url)).status_code
        if status != 429:
            return status
    raise AssertionError(f"{url} stayed rate limited")


@pytest.fixture
async def served() -> AsyncIterator[tuple[RunningEmulator, list[Event], httpx.AsyncClient]]:
    """An emulator in this test's loop (checked against the spec), its event log, a bot client."""
    checker = OpenAPIChecker()
    async with serve(rate_limit_scale=0.0001, exchange_hook=checker) as running:
        events: list[Event] = []
        running.emulator.state.subscribe(events.append)
        headers = {"Authorization": f"Bot {running.token}"}
        async with httpx.AsyncClient(base_url=running.api_base, headers=headers) as api:
            yield running, events, api
    assert not checker.report(), checker.report()


async def test_creating_editing_and_deleting_a_message_emit_one_event_each(
    served: tuple[RunningEmulator, list[Event], httpx.AsyncClient],
) -> None:
    running, events, api = served
    url = f"/channels/{running.channel_id}/messages"

    message = (await api.post(url, json={"content": "a"})).json()
    await api.patch(f"{url}/{message['id']}", json={"content": "b"})
    await api.delete(f"{url}/{message['id']}")

    assert [e.type for e in events] == ["MESSAGE_CREATE", "MESSAGE_UPDATE", "MESSAGE_DELETE"]
    created, updated, deleted = (e.data for e in events)
    assert created["id"] == message["id"]
    assert created["guild_id"] == running.guild_id
    assert updated["content"] == "b"
    assert deleted == {
        "id": message["id"],
        "channel_id": running.channel_id,
        "guild_id": running.guild_id,
    }


async def test_reactions_emit_add_and_remove_once(
    served: tuple[RunningEmulator, list[Event], httpx.AsyncClient],
) -> None:
    running, events, api = served
    message = (
        await api.post(f"/channels/{running.channel_id}/messages", json={"content": "r"})
    ).json()
    own = f"/channels/{running.channel_id}/messages/{message['id']}/reactions/{quote('✅')}/@me"
    events.clear()

    for send in (api.put, api.put, api.delete):
        assert await _past_rate_limit(send, own) == 204

    assert [e.type for e in events] == ["MESSAGE_REACTION_ADD", "MESSAGE_REACTION_REMOVE"]
    assert events[0].data["emoji"] == {"id": None, "name": "✅"}
    assert events[0].data["user_id"] == running.bot_user_id


async def test_threads_emit_create_update_and_the_starters_update(
    served: tuple[RunningEmulator, list[Event], httpx.AsyncClient],
) -> None:
    running, events, api = served
    message = (
        await api.post(f"/channels/{running.channel_id}/messages", json={"content": "s"})
    ).json()
    events.clear()

    await api.post(
        f"/channels/{running.channel_id}/messages/{message['id']}/threads", json={"name": "t"}
    )
    await api.patch(f"/channels/{message['id']}", json={"archived": True})
    await api.post(f"/channels/{message['id']}/messages", json={"content": "wake"})

    assert [e.type for e in events] == [
        "THREAD_CREATE",
        "MESSAGE_UPDATE",
        "THREAD_UPDATE",
        "THREAD_UPDATE",
        "MESSAGE_CREATE",
    ]
    assert events[0].data["newly_created"] is True
    assert events[1].data["thread"]["id"] == message["id"]
    assert events[2].data["thread_metadata"]["archived"] is True
    assert events[3].data["thread_metadata"]["archived"] is False
    assert events[4].data["channel_id"] == message["id"]


async def test_a_refused_change_emits_nothing(
    served: tuple[RunningEmulator, list[Event], httpx.AsyncClient],
) -> None:
    running, events, api = served

    response = await api.post(
        f"/channels/{running.channel_id}/messages", json={"content": "x" * 2001}
    )

    assert response.status_code == 400
    assert events == []


async def test_an_unsubscribed_listener_hears_nothing_more(
    served: tuple[RunningEmulator, list[Event], httpx.AsyncClient],
) -> None:
    running, _, api = served
    heard: list[Event] = []
    unsubscribe = running.emulator.state.subscribe(heard.append)

    await api.post(f"/channels/{running.channel_id}/typing")
    unsubscribe()
    await api.post(f"/channels/{running.channel_id}/typing")

    assert [e.type for e in heard] == ["TYPING_START"]
