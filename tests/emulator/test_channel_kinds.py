"""Announcement and forum channels, with Discord's rules: an announcement channel's threads are
announcement threads (type 10); a forum holds only posts (threads created with their first
message), never a plain message. The control API creates such channels."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from tests.emulator.conftest import bot_client, control_client, until_not_429

ANNOUNCEMENT, FORUM = 5, 15


@pytest.fixture
def emulator(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.001)


@pytest.fixture
def api(emulator: RunningEmulator) -> Iterator[httpx.Client]:
    with bot_client(emulator) as client:
        yield client


@pytest.fixture
def control(emulator: RunningEmulator) -> Iterator[httpx.Client]:
    with control_client(emulator) as client:
        yield client


def _channel(control: httpx.Client, kind: int, name: str) -> dict[str, Any]:
    response = control.post("/channels", json={"type": kind, "name": name})
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_the_control_api_creates_announcement_and_forum_channels(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    news = _channel(control, ANNOUNCEMENT, "news")
    forum = _channel(control, FORUM, "questions")
    for made, kind in ((news, ANNOUNCEMENT), (forum, FORUM)):
        seen = api.get(f"/channels/{made['id']}").json()
        assert seen["type"] == kind
        assert seen["guild_id"] == emulator.guild_id
    for wrong in ({"type": 11, "name": "x"}, {"type": 5}, {"type": 0, "name": ""}):
        assert control.post("/channels", json=wrong).status_code == 400, wrong


def test_an_announcement_channels_threads_are_announcement_threads(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    news = _channel(control, ANNOUNCEMENT, "news")["id"]
    post = until_not_429(lambda: api.post(f"/channels/{news}/messages", json={"content": "hi"}))
    assert post.status_code == 200

    public = until_not_429(
        lambda: api.post(f"/channels/{news}/threads", json={"name": "t", "type": 11})
    )
    announced = until_not_429(
        lambda: api.post(f"/channels/{news}/threads", json={"name": "t", "type": 10})
    )
    from_message = until_not_429(
        lambda: api.post(
            f"/channels/{news}/messages/{post.json()['id']}/threads", json={"name": "m"}
        )
    )
    in_text = until_not_429(
        lambda: api.post(f"/channels/{emulator.channel_id}/threads", json={"name": "t", "type": 10})
    )

    assert public.status_code == 400
    assert public.json()["code"] == 50024
    assert announced.status_code == 201
    assert announced.json()["type"] == 10
    assert from_message.status_code == 201
    assert from_message.json()["type"] == 10
    assert in_text.status_code == 400


def test_a_forum_takes_posts_only_each_created_with_its_first_message(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    forum = _channel(control, FORUM, "questions")["id"]

    plain = until_not_429(lambda: api.post(f"/channels/{forum}/messages", json={"content": "x"}))
    bare = until_not_429(
        lambda: api.post(f"/channels/{forum}/threads", json={"name": "t", "type": 11})
    )
    post = until_not_429(
        lambda: api.post(
            f"/channels/{forum}/threads",
            json={"name": "Deploy?", "message": {"content": "Deploy to staging?"}},
        )
    )

    assert plain.status_code == 400
    assert plain.json()["code"] == 50008
    assert bare.status_code == 400
    assert bare.json()["code"] == 50035
    assert "message" in bare.json()["errors"]
    assert post.status_code == 201
    thread = post.json()
    assert thread["type"] == 11
    assert thread["parent_id"] == forum
    assert thread["message"]["content"] == "Deploy to staging?"
    first = api.get(f"/channels/{thread['id']}/messages").json()
    assert [m["content"] for m in first] == ["Deploy to staging?"]


def test_the_control_api_creates_a_text_channel_with_a_topic_by_name_alone(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    response = control.post("/channels", json={"name": "companion", "topic": "talk to the bot"})
    assert response.status_code == 201, response.text
    made = response.json()
    seen = api.get(f"/channels/{made['id']}").json()
    assert (seen["type"], seen["name"], seen["topic"]) == (0, "companion", "talk to the bot")
    assert seen["guild_id"] == emulator.guild_id
    listed = control.get("/state").json()["channels"]
    assert any(c["id"] == made["id"] for c in listed)  # the owner's page lists it
    plain = control.post("/channels", json={"name": "lounge"}).json()
    assert api.get(f"/channels/{plain['id']}").json()["type"] == 0
    for wrong in ({"name": "x", "topic": 5}, {"name": "x", "topic": "t" * 1025}, {"topic": "t"}):
        assert control.post("/channels", json=wrong).status_code == 400, wrong
