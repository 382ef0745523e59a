"""DELETE /channels/{id}: a deleted thread is gone for good (10003), its members are told."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from tests.emulator.gateway_client import bot_api, identified


def _thread(emulator: RunningEmulator, api: httpx.Client) -> str:
    starter = api.post(f"/channels/{emulator.channel_id}/messages", json={"content": "s"}).json()
    response = api.post(
        f"/channels/{emulator.channel_id}/messages/{starter['id']}/threads", json={"name": "t"}
    )
    assert response.status_code == 201
    api.post(f"/channels/{starter['id']}/messages", json={"content": "inside"})
    return str(starter["id"])


def test_a_deleted_thread_answers_unknown_channel_and_its_starter_loses_it(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    thread_id = _thread(emulator, api)

    response = api.delete(f"/channels/{thread_id}")

    assert response.status_code == 200
    assert response.json()["id"] == thread_id
    for gone in (api.get(f"/channels/{thread_id}"), api.get(f"/channels/{thread_id}/messages")):
        assert gone.status_code == 404
        assert gone.json()["code"] == 10003
    starter = api.get(f"/channels/{emulator.channel_id}/messages/{thread_id}").json()
    assert "thread" not in starter


def test_the_bot_cannot_delete_the_channel_itself_without_manage_channels(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = api.delete(f"/channels/{emulator.channel_id}")
    assert response.status_code == 403
    assert response.json()["code"] == 50013
    assert api.get(f"/channels/{emulator.channel_id}").status_code == 200


@pytest.fixture
def running(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.0001)


async def test_deleting_a_thread_dispatches_thread_delete(running: RunningEmulator) -> None:
    async with identified(running) as client, bot_api(running) as api:
        created = await api.post(
            f"/channels/{running.channel_id}/threads", json={"name": "doomed", "type": 11}
        )
        thread = created.json()
        await client.dispatch("THREAD_CREATE")
        await client.dispatch("MESSAGE_CREATE")  # Discord's "thread created" notice
        assert (await api.delete(f"/channels/{thread['id']}")).status_code == 200
        deleted = (await client.dispatch("THREAD_DELETE"))["d"]
    assert deleted == {
        "id": thread["id"],
        "guild_id": running.guild_id,
        "parent_id": running.channel_id,
        "type": 11,
    }
