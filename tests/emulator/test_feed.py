"""The live feed (``GET /_emulator/feed``) and the owner's page files the emulator serves."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from discord_mcp.emulator import Emulator, Event, RunningEmulator
from discord_mcp.emulator.feed import translate
from discord_mcp.emulator.interactions import MESSAGE_COMPONENT


class Feed:
    """Reads SSE frames from an open feed response, one ``(event, id, data)`` at a time."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.iter_lines()

    def next(self) -> tuple[str, int, dict[str, Any]]:
        fields: dict[str, str] = {}
        for line in self._lines:
            if line.startswith(":"):
                continue
            if not line:
                if fields:
                    return fields["event"], int(fields["id"]), json.loads(fields["data"])
                continue
            key, _, value = line.partition(": ")
            fields[key] = value
        raise AssertionError("the feed ended")


@pytest.fixture
def feed(emulator: RunningEmulator) -> Iterator[Feed]:
    with (
        httpx.Client(base_url=emulator.base_url, timeout=10) as client,
        client.stream("GET", "/_emulator/feed") as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        yield Feed(response)


def test_the_feed_opens_with_a_snapshot_of_the_whole_world(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    api.post(f"/channels/{emulator.channel_id}/messages", json={"content": "before"})
    with (
        httpx.Client(base_url=emulator.base_url, timeout=10) as client,
        client.stream("GET", "/_emulator/feed") as response,
    ):
        name, seq, snapshot = Feed(response).next()

    assert (name, seq) == ("snapshot", 1)
    assert snapshot["channel_id"] == emulator.channel_id
    assert snapshot["owner_user_id"] == emulator.owner_user_id
    assert snapshot["bot_user_id"] == emulator.bot_user_id
    assert [m["content"] for m in snapshot["messages"]] == ["before"]
    assert {u["id"] for u in snapshot["users"]} >= {emulator.owner_user_id, emulator.bot_user_id}
    assert [c["name"] for c in snapshot["channels"]] == ["agents"]


def test_messages_reactions_threads_and_deletes_arrive_in_order(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client, feed: Feed
) -> None:
    assert feed.next()[0] == "snapshot"
    posted = api.post(f"/channels/{emulator.channel_id}/messages", json={"content": "hello"}).json()
    control.post(
        "/reactions",
        json={
            "user_id": emulator.owner_user_id,
            "channel_id": emulator.channel_id,
            "message_id": posted["id"],
            "emoji": "✅",
        },
    )
    thread = api.post(
        f"/channels/{emulator.channel_id}/threads", json={"name": "a question", "type": 11}
    ).json()
    api.delete(f"/channels/{emulator.channel_id}/messages/{posted['id']}")

    created = feed.next()
    reacted = feed.next()
    new_thread = feed.next()
    notice = feed.next()
    deleted = feed.next()

    assert created[:2] == ("message", 2)
    assert created[2]["content"] == "hello"
    assert reacted[0] == "message"
    [reaction] = reacted[2]["reactions"]
    assert reaction["emoji"]["name"] == "✅"
    assert reaction["user_ids"] == [emulator.owner_user_id]
    assert new_thread[0] == "channel"
    assert new_thread[2]["id"] == thread["id"]
    assert notice[0] == "message"
    assert notice[2]["type"] == 18
    assert deleted == (
        "message_delete",
        6,
        {"id": posted["id"], "channel_id": emulator.channel_id},
    )


def test_an_ephemeral_reply_names_the_only_user_who_may_see_it() -> None:
    emulator = Emulator()
    state, desk = emulator.state, emulator.desk
    stranger = state.create_user("stranger")
    row = {"type": 1, "components": [{"type": 2, "style": 1, "label": "Yes", "custom_id": "y"}]}
    card, _ = state.create_message(
        state.channel.id, state.bot.id, {"content": "Ship it?", "components": [row]}
    )
    events: list[Event] = []
    state.subscribe(events.append)
    click = desk.create(
        type_=MESSAGE_COMPONENT,
        user_id=stranger.id,
        channel_id=card.channel_id,
        data={"custom_id": "y", "component_type": 2},
        message_id=card.id,
    )
    desk.callback(
        click.id,
        click.token,
        {"type": 4, "data": {"content": "Only the owner can answer.", "flags": 64}},
        with_response=False,
    )

    [created] = [e for e in events if e.type == "MESSAGE_CREATE"]
    frame = translate(emulator, created)

    assert frame is not None
    name, message = frame
    assert name == "message"
    assert message["flags"] & 64
    assert message["visible_to"] == stranger.id
    plain = translate(emulator, Event("MESSAGE_CREATE", {"id": card.id}))
    assert plain is not None
    assert "visible_to" not in plain[1]


def test_events_the_page_does_not_use_are_left_out() -> None:
    emulator = Emulator()
    typing = Event("TYPING_START", {"channel_id": emulator.state.channel.id})

    assert translate(emulator, typing) is None
    assert translate(emulator, Event("MESSAGE_UPDATE", {"id": "404"})) is None


def test_the_page_and_its_files_are_served_with_a_strict_content_policy(
    emulator: RunningEmulator,
) -> None:
    with httpx.Client(base_url=emulator.base_url, timeout=10) as client:
        page = client.get("/")
        script = client.get("/page/app.js")
        unknown = client.get("/page/__init__.py")
        traversal = client.get("/page/..%2Fapp.py")

    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/page/app.js">' in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "default-src 'none'" in policy
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert unknown.status_code == 404
    assert traversal.status_code == 404
