"""Forwarded messages as Discord sends them: no content of their own, a reference of type 1 to
the original, and the original's text in ``message_snapshots`` (withheld, like any content,
from a bot without the Message Content intent)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from tests.emulator.conftest import bot_client, control_client


@pytest.fixture
def api(emulator: RunningEmulator) -> Iterator[httpx.Client]:
    with bot_client(emulator) as client:
        yield client


@pytest.fixture
def control(emulator: RunningEmulator) -> Iterator[httpx.Client]:
    with control_client(emulator) as client:
        yield client


def _say(control: httpx.Client, emulator: RunningEmulator, channel_id: str, body: dict) -> dict:  # type: ignore[type-arg]
    response = control.post(
        f"/channels/{channel_id}/messages", json={"author_id": emulator.owner_user_id} | body
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def _forward_of(message_id: str) -> dict:  # type: ignore[type-arg]
    return {"message_reference": {"message_id": message_id, "type": 1}}


def test_a_forward_carries_the_original_in_its_snapshot(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    thread = api.post(
        f"/channels/{emulator.channel_id}/threads", json={"name": "elsewhere", "type": 11}
    ).json()
    original = _say(control, emulator, thread["id"], {"content": "ship it on Friday"})

    forward = _say(control, emulator, emulator.channel_id, _forward_of(original["id"]))
    listed = api.get(f"/channels/{emulator.channel_id}/messages", params={"limit": 1}).json()[0]

    for seen in (forward, listed):
        assert seen["content"] == ""
        assert seen["type"] == 0
        assert seen["message_reference"] == {
            "type": 1,
            "channel_id": thread["id"],
            "message_id": original["id"],
            "guild_id": emulator.guild_id,
        }
        [snapshot] = seen["message_snapshots"]
        assert snapshot["message"]["content"] == "ship it on Friday"
        assert snapshot["message"]["timestamp"] == original["timestamp"]


def test_a_forward_has_no_content_of_its_own(
    emulator: RunningEmulator, control: httpx.Client
) -> None:
    original = _say(control, emulator, emulator.channel_id, {"content": "the plan"})
    response = control.post(
        f"/channels/{emulator.channel_id}/messages",
        json={"author_id": emulator.owner_user_id, "content": "look"} | _forward_of(original["id"]),
    )
    assert response.status_code == 400
    assert response.json()["discord"]["code"] == 50035


def test_without_the_intent_the_snapshot_is_withheld_too(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    original = _say(control, emulator, emulator.channel_id, {"content": "the plan"})
    _say(control, emulator, emulator.channel_id, _forward_of(original["id"]))
    control.post("/faults", json={"message_content_intent_enabled": False})

    forward = api.get(f"/channels/{emulator.channel_id}/messages", params={"limit": 1}).json()[0]

    assert forward["message_snapshots"][0]["message"]["content"] == ""
