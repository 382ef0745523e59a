"""The control API's permission routes: their contract, their refusals, their dispatches."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.emulator.permissions import BOT_ROLE_PERMISSIONS
from tests.emulator.gateway_client import (
    OUR_INTENTS,
    bot_api,
    control,
    gateway,
    identified,
)

GUILD_MEMBERS = 1 << 1


def test_a_role_takes_exact_permissions_or_named_changes(
    emulator: RunningEmulator, control: httpx.Client
) -> None:
    url = f"/roles/{emulator.bot_role_id}"

    exact = control.post(url, json={"permissions": str(1 << 10 | 1 << 11)}).json()
    named = control.post(url, json={"allow": ["ADD_REACTIONS"], "deny": ["SEND_MESSAGES"]}).json()
    as_int = control.post(url, json={"permissions": BOT_ROLE_PERMISSIONS}).json()

    assert exact["permissions"] == str(1 << 10 | 1 << 11)
    assert named["permissions"] == str(1 << 10 | 1 << 6)
    assert as_int["permissions"] == str(BOT_ROLE_PERMISSIONS)
    assert as_int["id"] == emulator.bot_role_id


@pytest.mark.parametrize(
    ("path", "body", "says"),
    [
        ("/roles/{bot_role}", {}, "give 'permissions'"),
        ("/roles/{bot_role}", {"permissions": "1", "deny": []}, "not both"),
        ("/roles/{bot_role}", {"deny": ["SEND_MESSAGE"]}, "unknown permission name"),
        ("/roles/{bot_role}", {"permissions": "-1"}, "decimal string"),
        ("/roles/{bot_role}", {"permissions": str(1 << 47)}, "does not define"),
        ("/roles/{bot_role}", {"colour": 1}, "unknown field"),
        ("/channels/{channel}/overwrites", {}, "missing field"),
        ("/channels/{channel}/overwrites", {"permission_overwrites": [{"id": "1"}]}, "type"),
        (
            "/channels/{channel}/overwrites",
            {"permission_overwrites": [{"id": "{bot}", "type": 1, "mask": "1"}]},
            "unknown field",
        ),
        (
            "/channels/{channel}/overwrites",
            {
                "permission_overwrites": [
                    {"id": "{bot}", "type": 1},
                    {"id": "{bot}", "type": 1},
                ]
            },
            "a second overwrite",
        ),
        ("/members/{owner}", {"in_guild": False}, "only the bot"),
        ("/members/{bot}", {"roles": "x"}, "list of role ids"),
        ("/members/{bot}", {"roles": [], "in_guild": False}, "no roles"),
        ("/members/{bot}", {}, "give 'roles'"),
    ],
)
def test_bad_control_requests_are_400_with_a_sentence(
    emulator: RunningEmulator, control: httpx.Client, path: str, body: Any, says: str
) -> None:
    ids = {
        "{bot_role}": emulator.bot_role_id,
        "{channel}": emulator.channel_id,
        "{owner}": emulator.owner_user_id,
        "{bot}": emulator.bot_user_id,
    }
    text = json.dumps(body)
    for name, value in ids.items():
        path = path.replace(name, value)
        text = text.replace(name, value)

    response = control.post(path, content=text, headers={"Content-Type": "application/json"})

    assert response.status_code == 400
    assert says in response.json()["error"]


def test_refusals_discord_would_make_carry_discords_body(
    emulator: RunningEmulator, control: httpx.Client, api: httpx.Client
) -> None:
    unknown = "123456789012345678"
    thread = api.post(f"/channels/{emulator.channel_id}/threads", json={"name": "t"}).json()

    answers = {
        "role": control.post(f"/roles/{unknown}", json={"permissions": "0"}),
        "overwrite role": control.post(
            f"/channels/{emulator.channel_id}/overwrites",
            json={"permission_overwrites": [{"id": unknown, "type": 0}]},
        ),
        "overwrite member": control.post(
            f"/channels/{emulator.channel_id}/overwrites",
            json={"permission_overwrites": [{"id": unknown, "type": 1}]},
        ),
        "thread": control.post(
            f"/channels/{thread['id']}/overwrites", json={"permission_overwrites": []}
        ),
        "everyone as a role": control.post(
            f"/members/{emulator.bot_user_id}", json={"roles": [emulator.guild_id]}
        ),
        "user": control.post(f"/members/{unknown}", json={"roles": []}),
    }

    codes = {name: r.json().get("discord", {}).get("code") for name, r in answers.items()}
    assert codes == {
        "role": 10011,
        "overwrite role": 10011,
        "overwrite member": 10007,
        "thread": 50024,
        "everyone as a role": 10011,
        "user": 10013,
    }
    assert {r.status_code for r in answers.values()} == {400}


@pytest.fixture
def running(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.0001)


async def test_role_and_overwrite_changes_reach_the_gateway(running: RunningEmulator) -> None:
    async with identified(running) as client, control(running) as people:
        await people.post(f"/roles/{running.bot_role_id}", json={"deny": ["ADD_REACTIONS"]})
        role_update = (await client.dispatch("GUILD_ROLE_UPDATE"))["d"]
        await people.post(
            f"/channels/{running.channel_id}/overwrites",
            json={"permission_overwrites": [{"id": running.guild_id, "type": 0, "deny": "64"}]},
        )
        channel_update = (await client.dispatch("CHANNEL_UPDATE"))["d"]

    assert role_update["guild_id"] == running.guild_id
    assert role_update["role"]["permissions"] == str(BOT_ROLE_PERMISSIONS & ~(1 << 6))
    assert channel_update["permission_overwrites"] == [
        {"id": running.guild_id, "type": 0, "allow": "0", "deny": "64"}
    ]


async def test_member_role_changes_need_the_guild_members_intent(
    running: RunningEmulator,
) -> None:
    async with (
        identified(running, OUR_INTENTS | GUILD_MEMBERS) as members,
        identified(running) as plain,
        control(running) as people,
    ):
        await people.post(f"/members/{running.bot_user_id}", json={"roles": []})
        update = await members.dispatch()
        # A barrier both sessions receive: the next thing `plain` sees must be it.
        await people.post(f"/roles/{running.bot_role_id}", json={"allow": []})
        barrier = await plain.dispatch()

    assert update["t"] == "GUILD_MEMBER_UPDATE"
    update = update["d"]
    assert update["user"]["id"] == running.bot_user_id
    assert update["roles"] == []
    assert update["guild_id"] == running.guild_id
    assert barrier["t"] == "GUILD_ROLE_UPDATE"


async def test_a_bot_removed_from_the_guild_gets_guild_delete_then_guild_create(
    running: RunningEmulator,
) -> None:
    async with identified(running) as client, control(running) as people:
        await people.post(f"/members/{running.bot_user_id}", json={"in_guild": False})
        deleted = await client.dispatch()
        # Nothing of the guild reaches the bot meanwhile; the re-add is the next dispatch.
        await people.post(
            f"/channels/{running.channel_id}/messages",
            json={"author_id": running.owner_user_id, "content": "unseen"},
        )
        await people.post(f"/members/{running.bot_user_id}", json={"in_guild": True})
        created = await client.dispatch()

    assert deleted["t"] == "GUILD_DELETE"
    assert deleted["d"] == {"id": running.guild_id}
    assert created["t"] == "GUILD_CREATE"
    assert created["d"]["members"][0]["roles"] == [running.bot_role_id]


async def test_ready_lists_no_guild_while_the_bot_is_out_of_it(running: RunningEmulator) -> None:
    async with control(running) as people:
        await people.post(f"/members/{running.bot_user_id}", json={"in_guild": False})
        async with gateway(running) as client:
            await client.hello()
            ready = await client.identify(OUR_INTENTS)
            async with bot_api(running) as api:
                seen = await api.get(f"/channels/{running.channel_id}")
            await people.post(f"/members/{running.bot_user_id}", json={"in_guild": True})
            await people.post(
                f"/channels/{running.channel_id}/messages",
                json={"author_id": running.owner_user_id, "content": "welcome back"},
            )
            after_ready = [(await client.dispatch())["t"] for _ in range(2)]

    assert ready["guilds"] == []
    assert seen.status_code == 403
    # No GUILD_CREATE followed READY: the first is the one the re-add sent.
    assert after_ready == ["GUILD_CREATE", "MESSAGE_CREATE"]
