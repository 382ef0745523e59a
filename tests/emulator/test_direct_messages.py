"""Direct messages as Discord has them: the bot opens a DM channel with a user and writes there.

Every exchange is checked against Discord's OpenAPI spec (the ``make_emulator`` fixture).
"Receives nothing" is checked with a barrier, as in ``test_gateway_dispatch.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import Forbidden
from discord_mcp.transport.rest import RestClient
from tests.emulator.gateway_client import (
    GUILD_MESSAGES,
    GUILDS,
    MESSAGE_CONTENT,
    bot_api,
    control,
    identified,
)

DIRECT_MESSAGES = 1 << 12
DIRECT_MESSAGE_REACTIONS = 1 << 13


@pytest.fixture
def running(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.0001)


async def open_dm(running: RunningEmulator, recipient: Any) -> tuple[int, dict[str, Any]]:
    async with bot_api(running) as api:
        response = await api.post("/users/@me/channels", json={"recipient_id": recipient})
    return response.status_code, dict(response.json())


async def control_post(running: RunningEmulator, path: str, body: dict[str, Any]) -> Any:
    async with control(running) as client:
        return await client.post(path, json=body)


async def test_opening_a_dm_gives_a_type_1_channel_with_its_recipient_and_the_same_one_again(
    running: RunningEmulator,
) -> None:
    status, channel = await open_dm(running, running.owner_user_id)
    assert status == 200
    assert channel["type"] == 1
    assert [u["id"] for u in channel["recipients"]] == [running.owner_user_id]
    assert "guild_id" not in channel
    assert "name" not in channel

    again = await open_dm(running, running.owner_user_id)
    assert again == (200, channel)
    async with bot_api(running) as api:
        fetched = (await api.get(f"/channels/{channel['id']}")).json()
    assert fetched["id"] == channel["id"]
    assert fetched["type"] == 1


async def test_an_unknown_user_or_the_bot_itself_is_an_invalid_recipient(
    running: RunningEmulator,
) -> None:
    for recipient in ("1234567890123456789", running.bot_user_id):
        status, body = await open_dm(running, recipient)
        assert (status, body["code"]) == (400, 50033)
    async with bot_api(running) as api:
        missing = await api.post("/users/@me/channels", json={})
    assert missing.status_code == 400
    assert "recipient_id" in missing.json()["errors"]


async def test_the_bot_writes_in_the_dm_and_only_the_recipient_answers_there(
    running: RunningEmulator,
) -> None:
    _, channel = await open_dm(running, running.owner_user_id)
    async with bot_api(running) as api:
        sent = await api.post(f"/channels/{channel['id']}/messages", json={"content": "psst"})
        assert sent.status_code == 200, sent.text
        reply = await control_post(
            running,
            f"/channels/{channel['id']}/messages",
            {"author_id": running.owner_user_id, "content": "got it"},
        )
        assert reply.status_code == 200, reply.text
        listed = (await api.get(f"/channels/{channel['id']}/messages")).json()
    assert [m["content"] for m in listed] == ["got it", "psst"]

    async with control(running) as client:
        stranger = (await client.post("/users", json={"username": "mallory"})).json()["id"]
        intruding = await client.post(
            f"/channels/{channel['id']}/messages", json={"author_id": stranger, "content": "hi"}
        )
    assert intruding.status_code == 400
    assert intruding.json()["discord"]["code"] == 50001


async def test_a_user_who_accepts_no_dms_makes_the_bots_message_fail_with_50007(
    running: RunningEmulator,
) -> None:
    refused = await control_post(running, f"/users/{running.owner_user_id}", {"accepts_dms": False})
    assert refused.json() == {"user_id": running.owner_user_id, "accepts_dms": False}
    status, channel = await open_dm(running, running.owner_user_id)
    assert status == 200  # opening works; sending is refused
    async with bot_api(running) as api:
        sent = await api.post(f"/channels/{channel['id']}/messages", json={"content": "psst"})
        assert (sent.status_code, sent.json()["code"]) == (403, 50007)
        assert sent.json()["message"] == "Cannot send messages to this user"

        await control_post(running, f"/users/{running.owner_user_id}", {"accepts_dms": True})
        sent = await api.post(f"/channels/{channel['id']}/messages", json={"content": "psst"})
    assert sent.status_code == 200


async def test_the_control_api_refuses_a_bad_dm_setting(running: RunningEmulator) -> None:
    async with control(running) as client:
        bad = await client.post(f"/users/{running.owner_user_id}", json={"accepts_dms": "no"})
        nobody = await client.post("/users/1234567890123456789", json={"accepts_dms": False})
    assert bad.status_code == 400
    assert "accepts_dms" in bad.json()["error"]
    assert nobody.status_code == 400


async def test_dm_messages_reach_only_sessions_with_the_direct_messages_intent(
    running: RunningEmulator,
) -> None:
    _, channel = await open_dm(running, running.owner_user_id)
    async with (
        identified(running, GUILDS | GUILD_MESSAGES) as guild_only,
        identified(running, GUILDS | DIRECT_MESSAGES) as direct,
    ):
        reply = await control_post(
            running,
            f"/channels/{channel['id']}/messages",
            {"author_id": running.owner_user_id, "content": "yes, go"},
        )
        async with bot_api(running) as api:  # a barrier both sessions receive
            await api.post(
                f"/channels/{running.channel_id}/threads", json={"name": "b", "type": 11}
            )
        created = (await direct.dispatch("MESSAGE_CREATE"))["d"]
        assert (await direct.dispatch())["t"] == "THREAD_CREATE"
        assert (await guild_only.dispatch())["t"] == "THREAD_CREATE"

    assert created["id"] == reply.json()["id"]
    assert created["channel_id"] == channel["id"]
    assert "guild_id" not in created
    assert "member" not in created
    # MESSAGE_CONTENT never withholds a DM's content.
    assert created["content"] == "yes, go"


async def test_a_dm_reaction_needs_the_direct_message_reactions_intent(
    running: RunningEmulator,
) -> None:
    _, channel = await open_dm(running, running.owner_user_id)
    async with bot_api(running) as api:
        sent = (
            await api.post(f"/channels/{channel['id']}/messages", json={"content": "ok?"})
        ).json()
    async with identified(running, DIRECT_MESSAGES | DIRECT_MESSAGE_REACTIONS) as client:
        await control_post(
            running,
            "/reactions",
            {
                "user_id": running.owner_user_id,
                "channel_id": channel["id"],
                "message_id": sent["id"],
                "emoji": "👍",
            },
        )
        added = (await client.dispatch("MESSAGE_REACTION_ADD"))["d"]
    assert added["channel_id"] == channel["id"]
    assert "guild_id" not in added
    assert "member" not in added


async def test_the_guild_lists_no_dm_channel_and_no_thread_starts_in_a_dm(
    running: RunningEmulator,
) -> None:
    _, channel = await open_dm(running, running.owner_user_id)
    async with identified(running, GUILDS | MESSAGE_CONTENT) as client:
        guild = (client.received[-1])["d"]
    assert channel["id"] not in [c["id"] for c in guild["channels"]]
    async with bot_api(running) as api:
        thread = await api.post(
            f"/channels/{channel['id']}/threads", json={"name": "x", "type": 11}
        )
    assert thread.status_code in (400, 403)


async def test_our_client_sends_a_direct_message_and_reports_a_refusal(
    running: RunningEmulator,
) -> None:
    async with RestClient(_token(running), api_base=running.api_base) as rest:
        sent = await rest.send_direct_message(running.owner_user_id, "A question waits")
        assert sent[0]["content"] == "A question waits"
        await control_post(running, f"/users/{running.owner_user_id}", {"accepts_dms": False})
        with pytest.raises(Forbidden) as refused:
            await rest.send_direct_message(running.owner_user_id, "again")
    assert refused.value.code == 50007


def _token(running: RunningEmulator) -> Any:
    from discord_mcp.config import Secret

    return Secret(running.token)
