"""One bot, several gateway sessions (several machines, issue 27): Discord gives every event to
every session of an unsharded bot, and takes one answer per interaction (40060 for the second,
counted); an interaction's token reads as no webhook (10015) until someone answered it. A
guild's active threads are listed for the bot."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.emulator.gateway_client import bot_api, control, identified, post_as, stats

MakeEmulator = Callable[..., RunningEmulator]


@pytest.fixture
def running(make_emulator: MakeEmulator) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.0001)


async def _card(running: RunningEmulator) -> dict[str, object]:
    row = {"type": 1, "components": [{"type": 2, "style": 1, "label": "Y", "custom_id": "y"}]}
    async with bot_api(running) as api:
        response = await api.post(
            f"/channels/{running.channel_id}/messages",
            json={"content": "Deploy?", "components": [row]},
        )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_every_event_reaches_every_session_of_the_bot(running: RunningEmulator) -> None:
    card = await _card(running)
    async with identified(running) as laptop, identified(running) as server:
        said = await post_as(running, running.owner_user_id, "hello both")
        seen = [(await c.dispatch("MESSAGE_CREATE"))["d"]["id"] for c in (laptop, server)]
        async with control(running) as ctl:
            click = asyncio.create_task(
                ctl.post(
                    "/interactions",
                    json={
                        "user_id": running.owner_user_id,
                        "message_id": card["id"],
                        "custom_id": "y",
                    },
                )
            )
            both = [(await c.dispatch("INTERACTION_CREATE"))["d"] for c in (laptop, server)]
            async with bot_api(running) as api:
                first = await api.post(
                    f"/interactions/{both[0]['id']}/{both[0]['token']}/callback",
                    json={"type": 6},
                )
                second = await api.post(
                    f"/interactions/{both[1]['id']}/{both[1]['token']}/callback",
                    json={"type": 6},
                )
            report = (await click).json()
    assert seen == [said["id"], said["id"]]
    assert both[0]["id"] == both[1]["id"]  # the same interaction, twice: one answer counts
    assert report["delivered"] == 2
    assert first.status_code == 204
    assert second.status_code == 400
    assert second.json()["code"] == 40060
    counted = await stats(running)
    assert counted["interactions_acknowledged_twice"] == 1


async def test_an_interactions_original_response_is_no_webhook_until_someone_answered(
    running: RunningEmulator,
) -> None:
    card = await _card(running)
    async with identified(running) as client, control(running) as ctl:
        click = asyncio.create_task(
            ctl.post(
                "/interactions",
                json={"user_id": running.owner_user_id, "message_id": card["id"], "custom_id": "y"},
            )
        )
        interaction = (await client.dispatch("INTERACTION_CREATE"))["d"]
        original = f"/webhooks/{interaction['application_id']}/{interaction['token']}"
        async with bot_api(running) as api:
            before = await api.get(original + "/messages/@original")
            await api.post(
                f"/interactions/{interaction['id']}/{interaction['token']}/callback",
                json={"type": 4, "data": {"content": "on it", "flags": 64}},
            )
            after = await api.get(original + "/messages/@original")
        await click
    assert before.status_code == 404
    assert before.json()["code"] == 10015
    assert after.status_code == 200
    assert after.json()["content"] == "on it"


async def test_the_guilds_active_threads_are_listed_with_the_bots_memberships(
    running: RunningEmulator,
) -> None:
    async with bot_api(running) as api:
        opened = (
            await api.post(
                f"/channels/{running.channel_id}/threads", json={"name": "open", "type": 11}
            )
        ).json()
        closed = (
            await api.post(
                f"/channels/{running.channel_id}/threads", json={"name": "closed", "type": 11}
            )
        ).json()
        await api.patch(f"/channels/{closed['id']}", json={"archived": True})
        listed = await api.get(f"/guilds/{running.guild_id}/threads/active")
        other = await api.get("/guilds/1/threads/active")
    assert listed.status_code == 200
    body = listed.json()
    assert [t["id"] for t in body["threads"]] == [opened["id"]]
    assert body["threads"][0]["parent_id"] == running.channel_id
    assert [m["id"] for m in body["members"]] == [opened["id"]]
    assert body["has_more"] is False
    assert other.status_code == 404
