"""Dispatches: what each session receives (intents), in what shape, and MESSAGE_CONTENT.

"Receives nothing" is checked with a barrier: after the action, a change the session does
receive is made, and it must be the next dispatch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.emulator.gateway_client import (
    GUILD_MESSAGE_REACTIONS,
    GUILD_MESSAGES,
    GUILDS,
    OUR_INTENTS,
    GatewayClient,
    bot_api,
    control,
    faults,
    identified,
    post_as,
)

MakeEmulator = Callable[..., RunningEmulator]


@pytest.fixture
def running(make_emulator: MakeEmulator) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.0001)


async def _new_thread(running: RunningEmulator, name: str) -> dict[str, object]:
    """A barrier every GUILDS session receives (THREAD_CREATE)."""
    async with bot_api(running) as api:
        response = await api.post(
            f"/channels/{running.channel_id}/threads", json={"name": name, "type": 11}
        )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def _react(running: RunningEmulator, message_id: str, emoji: str = "✅") -> None:
    async with control(running) as client:
        response = await client.post(
            "/reactions",
            json={
                "user_id": running.owner_user_id,
                "channel_id": running.channel_id,
                "message_id": message_id,
                "emoji": emoji,
            },
        )
    assert response.status_code == 200, response.text


async def test_a_users_message_arrives_with_guild_id_and_member(
    running: RunningEmulator,
) -> None:
    async with identified(running) as client:
        posted = await post_as(running, running.owner_user_id, "hello bot")
        created = (await client.dispatch("MESSAGE_CREATE"))["d"]

    assert created["id"] == posted["id"]
    assert created["content"] == "hello bot"
    assert created["channel_id"] == running.channel_id
    assert created["guild_id"] == running.guild_id
    assert created["author"]["id"] == running.owner_user_id
    assert "user" not in created["member"]
    assert created["member"]["roles"] == []


async def test_thread_events_and_messages_in_a_thread(running: RunningEmulator) -> None:
    async with identified(running) as client:
        posted = await post_as(running, running.owner_user_id, "Deploy?")
        await client.dispatch("MESSAGE_CREATE")
        async with bot_api(running) as api:
            base = f"/channels/{running.channel_id}/messages/{posted['id']}"
            await api.post(base + "/threads", json={"name": "Deploy?"})
            await api.post(f"/channels/{posted['id']}/messages", json={"content": "on it"})
            await api.patch(f"/channels/{posted['id']}", json={"archived": True})
        created = (await client.dispatch("THREAD_CREATE"))["d"]
        starter = (await client.dispatch("MESSAGE_UPDATE"))["d"]
        in_thread = (await client.dispatch("MESSAGE_CREATE"))["d"]
        archived = (await client.dispatch("THREAD_UPDATE"))["d"]

    assert created["id"] == posted["id"]
    assert created["newly_created"] is True
    assert starter["thread"]["id"] == posted["id"]
    assert in_thread["channel_id"] == posted["id"]
    assert in_thread["guild_id"] == running.guild_id
    assert archived["thread_metadata"]["archived"] is True


async def test_an_edit_arrives_as_message_update(running: RunningEmulator) -> None:
    async with identified(running) as client, bot_api(running) as api:
        url = f"/channels/{running.channel_id}/messages"
        message = (await api.post(url, json={"content": "draft"})).json()
        await api.patch(f"{url}/{message['id']}", json={"content": "final"})
        await client.dispatch("MESSAGE_CREATE")
        updated = (await client.dispatch("MESSAGE_UPDATE"))["d"]

    assert updated["id"] == message["id"]
    assert updated["content"] == "final"
    assert updated["edited_timestamp"] is not None


async def test_a_reaction_arrives_with_every_documented_field(running: RunningEmulator) -> None:
    async with identified(running) as client, bot_api(running) as api:
        url = f"/channels/{running.channel_id}/messages"
        message = (await api.post(url, json={"content": "React to approve"})).json()
        await client.dispatch("MESSAGE_CREATE")
        await _react(running, message["id"])
        added = (await client.dispatch("MESSAGE_REACTION_ADD"))["d"]

    assert added["user_id"] == running.owner_user_id
    assert added["channel_id"] == running.channel_id
    assert added["message_id"] == message["id"]
    assert added["guild_id"] == running.guild_id
    assert added["member"]["user"]["id"] == running.owner_user_id
    assert added["emoji"] == {"id": None, "name": "✅"}
    assert added["message_author_id"] == running.bot_user_id
    assert added["burst"] is False
    assert added["type"] == 0


async def test_each_session_receives_only_what_its_intents_cover(
    running: RunningEmulator,
) -> None:
    async with (
        identified(running, GUILDS) as guilds_only,
        identified(running, GUILDS | GUILD_MESSAGES) as messages,
        identified(running, GUILDS | GUILD_MESSAGE_REACTIONS) as reactions,
    ):
        posted = await post_as(running, running.owner_user_id, "hi")
        await _react(running, posted["id"])
        await _new_thread(running, "barrier")

        seen = {}
        for name, client in (("g", guilds_only), ("m", messages), ("r", reactions)):
            names = []
            while not names or names[-1] != "THREAD_CREATE":
                names.append((await client.dispatch())["t"])
            seen[name] = names

    assert seen == {
        "g": ["THREAD_CREATE"],
        "m": ["MESSAGE_CREATE", "THREAD_CREATE"],
        "r": ["MESSAGE_REACTION_ADD", "THREAD_CREATE"],
    }


async def test_without_message_content_a_users_message_arrives_empty(
    running: RunningEmulator,
) -> None:
    card = {
        "content": "Deploy?",
        "embeds": [{"title": "Plan"}],
        "components": [
            {"type": 1, "components": [{"type": 2, "style": 1, "label": "Y", "custom_id": "y"}]}
        ],
    }
    async with identified(running, GUILDS | GUILD_MESSAGES) as client:
        plain = await post_as(running, running.owner_user_id, "secret plan")
        mention = await post_as(running, running.owner_user_id, f"<@{running.bot_user_id}> hi")
        async with bot_api(running) as api:
            await api.post(f"/channels/{running.channel_id}/messages", json=card)
        received = [(await client.dispatch("MESSAGE_CREATE"))["d"] for _ in range(3)]

    withheld, mentioned, own = received
    assert withheld["id"] == plain["id"]
    assert (withheld["content"], withheld["embeds"], withheld["components"]) == ("", [], [])
    assert withheld["attachments"] == []
    assert mentioned["id"] == mention["id"]
    assert mentioned["content"] == f"<@{running.bot_user_id}> hi"
    assert own["content"] == "Deploy?"
    assert own["embeds"][0]["title"] == "Plan"
    assert own["components"][0]["components"][0]["custom_id"] == "y"


async def test_with_message_content_a_users_message_arrives_whole(
    running: RunningEmulator,
) -> None:
    async with identified(running, OUR_INTENTS) as client:
        await post_as(running, running.owner_user_id, "secret plan")
        created = (await client.dispatch("MESSAGE_CREATE"))["d"]

    assert created["content"] == "secret plan"


async def test_rest_reads_withhold_content_while_the_portal_toggle_is_off(
    running: RunningEmulator,
) -> None:
    theirs = await post_as(running, running.owner_user_id, "secret plan")
    async with bot_api(running) as api:
        url = f"/channels/{running.channel_id}/messages"
        ours = (await api.post(url, json={"content": "our card"})).json()
        before = (await api.get(f"{url}/{theirs['id']}")).json()
        await faults(running, {"message_content_intent_enabled": False})
        one = (await api.get(f"{url}/{theirs['id']}")).json()
        page = (await api.get(url)).json()

    assert before["content"] == "secret plan"
    assert one["content"] == ""
    assert [m["content"] for m in page] == ["our card", ""]
    assert page[0]["id"] == ours["id"]


async def test_an_interaction_reaches_a_session_without_intents(
    running: RunningEmulator,
) -> None:
    async with bot_api(running) as api:
        row = {"type": 1, "components": [{"type": 2, "style": 1, "label": "Y", "custom_id": "y"}]}
        card = (
            await api.post(
                f"/channels/{running.channel_id}/messages",
                json={"content": "Deploy?", "components": [row]},
            )
        ).json()
    async with identified(running, 0) as client, control(running) as ctl:
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
        interaction = (await client.dispatch("INTERACTION_CREATE"))["d"]
        await _answer(client, interaction, {"type": 6})
        answer = (await click).json()

    assert interaction["data"]["custom_id"] == "y"
    assert answer["acknowledged"] is True
    assert answer["delivered"] == 1


async def _answer(client: GatewayClient, interaction: dict[str, object], body: object) -> None:
    async with bot_api(client.running) as api:
        response = await api.post(
            f"/interactions/{interaction['id']}/{interaction['token']}/callback", json=body
        )
    assert response.status_code == 204, response.text
