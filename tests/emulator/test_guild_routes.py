"""The routes `discord-mcp doctor` reads: guild, roles, members, users, the application."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from discord_mcp.emulator import RunningEmulator
from discord_mcp.emulator.permissions import BOT_ROLE_PERMISSIONS, EVERYONE_PERMISSIONS
from tests.emulator.conftest import bot_client, control_client

GATEWAY_MESSAGE_CONTENT = 1 << 18
GATEWAY_MESSAGE_CONTENT_LIMITED = 1 << 19
UNKNOWN_ID = "123456789012345678"


def test_the_guild_has_its_owner_and_both_roles(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    guild = api.get(f"/guilds/{emulator.guild_id}").json()

    assert guild["id"] == emulator.guild_id
    assert guild["owner_id"] == emulator.owner_user_id
    roles = {role["id"]: role for role in guild["roles"]}
    assert roles[emulator.guild_id]["name"] == "@everyone"
    assert roles[emulator.guild_id]["permissions"] == str(EVERYONE_PERMISSIONS)
    bot_role = roles[emulator.bot_role_id]
    assert bot_role["permissions"] == str(BOT_ROLE_PERMISSIONS)
    assert bot_role["managed"] is True
    assert bot_role["tags"] == {"bot_id": emulator.bot_user_id}
    assert "approximate_member_count" not in guild


def test_with_counts_adds_the_approximate_counts(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    guild = api.get(f"/guilds/{emulator.guild_id}", params={"with_counts": "true"}).json()

    assert guild["approximate_member_count"] == 2
    assert guild["approximate_presence_count"] == 0


def test_the_role_list_and_one_role(emulator: RunningEmulator, api: httpx.Client) -> None:
    roles = api.get(f"/guilds/{emulator.guild_id}/roles").json()
    one = api.get(f"/guilds/{emulator.guild_id}/roles/{emulator.bot_role_id}").json()

    assert [role["id"] for role in roles] == [emulator.guild_id, emulator.bot_role_id]
    assert one == roles[1]


def test_the_bot_is_a_member_with_its_role(emulator: RunningEmulator, api: httpx.Client) -> None:
    member = api.get(f"/guilds/{emulator.guild_id}/members/{emulator.bot_user_id}").json()
    owner = api.get(f"/guilds/{emulator.guild_id}/members/{emulator.owner_user_id}").json()

    assert member["user"]["id"] == emulator.bot_user_id
    assert member["roles"] == [emulator.bot_role_id]
    assert owner["user"]["id"] == emulator.owner_user_id
    assert owner["roles"] == []


def test_the_owner_is_a_user_that_exists(emulator: RunningEmulator, api: httpx.Client) -> None:
    owner = api.get(f"/users/{emulator.owner_user_id}").json()

    assert owner["id"] == emulator.owner_user_id
    assert "bot" not in owner


def test_unknown_guild_member_role_and_user_have_discords_codes(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    guild = f"/guilds/{emulator.guild_id}"

    answers = {
        "guild": api.get(f"/guilds/{UNKNOWN_ID}"),
        "guild by name": api.get("/guilds/agents"),
        "member": api.get(f"{guild}/members/{UNKNOWN_ID}"),
        "role": api.get(f"{guild}/roles/{UNKNOWN_ID}"),
        "user": api.get(f"/users/{UNKNOWN_ID}"),
    }

    assert {name: r.status_code for name, r in answers.items()} == {
        "guild": 404,
        "guild by name": 404,
        "member": 404,
        "role": 404,
        "user": 404,
    }
    assert answers["guild"].json() == {"message": "Unknown Guild", "code": 10004}
    assert answers["guild by name"].json()["code"] == 10004
    assert answers["member"].json() == {"message": "Unknown Member", "code": 10007}
    assert answers["role"].json() == {"message": "Unknown Role", "code": 10011}
    assert answers["user"].json() == {"message": "Unknown User", "code": 10013}


def test_a_new_person_is_a_member_without_roles(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    person = control.post("/users", json={"username": "alice"}).json()

    member = api.get(f"/guilds/{emulator.guild_id}/members/{person['id']}").json()

    assert member["roles"] == []
    assert member["user"]["username"] == "alice"


def test_the_channel_carries_its_permission_overwrites(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    before = api.get(f"/channels/{emulator.channel_id}").json()
    control.post(
        f"/channels/{emulator.channel_id}/overwrites",
        json={
            "permission_overwrites": [
                {"id": emulator.guild_id, "type": 0, "deny": str(1 << 10)},
                {"id": emulator.bot_role_id, "type": 0, "allow": str(1 << 10)},
            ]
        },
    )
    after = api.get(f"/channels/{emulator.channel_id}").json()

    assert before["permission_overwrites"] == []
    assert before["guild_id"] == emulator.guild_id
    assert before["type"] == 0
    assert after["permission_overwrites"] == [
        {"id": emulator.guild_id, "type": 0, "allow": "0", "deny": "1024"},
        {"id": emulator.bot_role_id, "type": 0, "allow": "1024", "deny": "0"},
    ]


def test_the_application_is_the_bot_with_the_message_content_flag(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    application = api.get("/applications/@me").json()

    assert application["id"] == emulator.bot_user_id
    assert application["bot"]["id"] == emulator.bot_user_id
    assert application["owner"]["id"] == emulator.owner_user_id
    assert application["flags"] & GATEWAY_MESSAGE_CONTENT_LIMITED
    assert application["flags_new"] == str(application["flags"])
    assert application["bot_public"] is False


def test_the_flags_follow_the_portal_toggle_and_agree_with_the_oauth2_route(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    control.post("/faults", json={"message_content_intent_enabled": False})
    off = api.get("/applications/@me").json()["flags"]
    off_oauth2 = api.get("/oauth2/applications/@me").json()["flags"]
    control.post("/faults", json={"message_content_intent_enabled": True})
    on = api.get("/applications/@me").json()["flags"]

    assert not off & (GATEWAY_MESSAGE_CONTENT | GATEWAY_MESSAGE_CONTENT_LIMITED)
    assert off == off_oauth2
    assert on == off | GATEWAY_MESSAGE_CONTENT_LIMITED


def test_the_new_routes_have_rate_limit_buckets(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    paths = [
        "/applications/@me",
        f"/guilds/{emulator.guild_id}",
        f"/guilds/{emulator.guild_id}/roles",
        f"/guilds/{emulator.guild_id}/members/{emulator.bot_user_id}",
    ]

    for path in paths:
        response = api.get(path)
        assert response.status_code == 200, path
        assert response.headers["X-RateLimit-Limit"] == "5", path
        assert "X-RateLimit-Bucket" in response.headers, path


def test_the_state_shows_roles_members_and_the_bots_permissions(
    emulator: RunningEmulator, control: httpx.Client
) -> None:
    state = control.get("/state").json()

    assert state["bot_role_id"] == emulator.bot_role_id
    assert state["bot_in_guild"] is True
    assert [role["id"] for role in state["roles"]] == [emulator.guild_id, emulator.bot_role_id]
    members = {m["user"]["id"]: m["roles"] for m in state["members"]}
    assert members == {emulator.bot_user_id: [emulator.bot_role_id], emulator.owner_user_id: []}
    assert state["bot_permissions"] == {
        emulator.channel_id: str(EVERYONE_PERMISSIONS | BOT_ROLE_PERMISSIONS)
    }
    # Keys that were there before are still there.
    for key in ("guild", "channels", "users", "stats", "faults", "gateway_sessions"):
        assert key in state


def test_two_emulators_do_not_share_role_changes(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    first, second = make_emulator(), make_emulator()
    with control_client(first) as control, bot_client(second) as api:
        control.post(f"/roles/{first.bot_role_id}", json={"deny": ["VIEW_CHANNEL"]})
        response = api.get(f"/channels/{second.channel_id}")

    assert response.status_code == 200
