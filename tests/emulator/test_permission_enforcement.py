"""The bot's REST calls are refused as Discord refuses them when a permission is missing,
and work again once it is restored; the control API (people) is never refused."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator, serve
from tests.emulator.conftest import bot_client, control_client
from tests.support.openapi_check import OpenAPIChecker

MISSING_ACCESS = {"message": "Missing Access", "code": 50001}
MISSING_PERMISSIONS = {"message": "Missing Permissions", "code": 50013}
THUMBS_UP = "👍"


@pytest.fixture
def fast(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    """Tiny rate-limit windows: these tests repeat calls on one route."""
    return make_emulator(rate_limit_scale=0.0001)


@pytest.fixture
def api(fast: RunningEmulator) -> Iterator[httpx.Client]:
    with bot_client(fast) as client:
        yield client


@pytest.fixture
def control(fast: RunningEmulator) -> Iterator[httpx.Client]:
    with control_client(fast) as client:
        yield client


def _deny(control: httpx.Client, running: RunningEmulator, *names: str) -> None:
    response = control.post(f"/roles/{running.bot_role_id}", json={"deny": list(names)})
    assert response.status_code == 200, response.text


def _allow(control: httpx.Client, running: RunningEmulator, *names: str) -> None:
    response = control.post(f"/roles/{running.bot_role_id}", json={"allow": list(names)})
    assert response.status_code == 200, response.text


def _post(api: httpx.Client, channel_id: str, body: dict[str, Any] | None = None) -> httpx.Response:
    return api.post(f"/channels/{channel_id}/messages", json=body or {"content": "hello"})


def _posted_by_owner(control: httpx.Client, running: RunningEmulator, channel_id: str) -> str:
    response = control.post(
        f"/channels/{channel_id}/messages",
        json={"author_id": running.owner_user_id, "content": "from a person"},
    )
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def _public_thread(api: httpx.Client, running: RunningEmulator) -> str:
    starter = _post(api, running.channel_id).json()
    url = f"/channels/{running.channel_id}/messages/{starter['id']}/threads"
    response = api.post(url, json={"name": "t"})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _refused(response: httpx.Response, body: dict[str, Any]) -> None:
    assert response.status_code == 403, response.text
    assert response.json() == body


# -- reading ----------------------------------------------------------------------------------


def test_without_view_channel_every_channel_route_is_missing_access(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    message_id = _post(api, fast.channel_id).json()["id"]
    channel = f"/channels/{fast.channel_id}"
    _deny(control, fast, "VIEW_CHANNEL")

    answers = [
        api.get(channel),
        api.get(channel + "/messages"),
        api.get(f"{channel}/messages/{message_id}"),
        _post(api, fast.channel_id),
        api.post(channel + "/typing"),
        api.put(f"{channel}/messages/{message_id}/reactions/{quote(THUMBS_UP)}/@me"),
        api.post(f"{channel}/threads", json={"name": "t", "type": 11}),
    ]
    _allow(control, fast, "VIEW_CHANNEL")
    restored = api.get(channel)

    for response in answers:
        _refused(response, MISSING_ACCESS)
    assert restored.status_code == 200


def test_without_read_message_history_the_list_is_empty_and_one_message_is_refused(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    message_id = _post(api, fast.channel_id).json()["id"]
    messages = f"/channels/{fast.channel_id}/messages"
    _deny(control, fast, "READ_MESSAGE_HISTORY")

    listed = api.get(messages)
    one = api.get(f"{messages}/{message_id}")
    reactors = api.get(f"{messages}/{message_id}/reactions/{quote(THUMBS_UP)}")
    _allow(control, fast, "READ_MESSAGE_HISTORY")

    # Discord's docs: "If the current user is missing the READ_MESSAGE_HISTORY permission in
    # the channel, then no messages will be returned."
    assert listed.status_code == 200
    assert listed.json() == []
    _refused(one, MISSING_ACCESS)
    _refused(reactors, MISSING_ACCESS)
    assert [m["id"] for m in api.get(messages).json()] == [message_id]
    assert api.get(f"{messages}/{message_id}").status_code == 200


# -- sending ----------------------------------------------------------------------------------


def test_sending_needs_send_messages(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    _deny(control, fast, "SEND_MESSAGES")
    refused = _post(api, fast.channel_id)
    typing = api.post(f"/channels/{fast.channel_id}/typing")
    _allow(control, fast, "SEND_MESSAGES")

    _refused(refused, MISSING_PERMISSIONS)
    _refused(typing, MISSING_PERMISSIONS)
    assert _post(api, fast.channel_id).status_code == 200
    assert api.post(f"/channels/{fast.channel_id}/typing").status_code == 204


def test_a_thread_needs_send_messages_in_threads_not_send_messages(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    thread_id = _public_thread(api, fast)

    _deny(control, fast, "SEND_MESSAGES")
    in_thread_without_send = _post(api, thread_id)
    _allow(control, fast, "SEND_MESSAGES")
    _deny(control, fast, "SEND_MESSAGES_IN_THREADS")
    in_thread = _post(api, thread_id)
    in_channel = _post(api, fast.channel_id)
    _allow(control, fast, "SEND_MESSAGES_IN_THREADS")

    assert in_thread_without_send.status_code == 200
    _refused(in_thread, MISSING_PERMISSIONS)
    assert in_channel.status_code == 200
    assert _post(api, thread_id).status_code == 200


def test_a_reply_needs_read_message_history(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    target = _posted_by_owner(control, fast, fast.channel_id)
    reply = {"content": "yes", "message_reference": {"message_id": target}}
    _deny(control, fast, "READ_MESSAGE_HISTORY")

    refused = _post(api, fast.channel_id, reply)
    plain = _post(api, fast.channel_id)
    _allow(control, fast, "READ_MESSAGE_HISTORY")

    _refused(refused, MISSING_PERMISSIONS)
    assert plain.status_code == 200
    assert _post(api, fast.channel_id, reply).status_code == 200


# -- threads ----------------------------------------------------------------------------------


def test_creating_public_threads_needs_create_public_threads(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    starter = _post(api, fast.channel_id).json()["id"]
    from_message = f"/channels/{fast.channel_id}/messages/{starter}/threads"
    without_message = f"/channels/{fast.channel_id}/threads"
    _deny(control, fast, "CREATE_PUBLIC_THREADS")

    refused = [
        api.post(from_message, json={"name": "t"}),
        api.post(without_message, json={"name": "t", "type": 11}),
    ]
    private = api.post(without_message, json={"name": "p"})
    _allow(control, fast, "CREATE_PUBLIC_THREADS")

    for response in refused:
        _refused(response, MISSING_PERMISSIONS)
    assert private.status_code == 201  # CREATE_PRIVATE_THREADS comes from @everyone
    assert api.post(from_message, json={"name": "t"}).status_code == 201


def test_a_private_thread_needs_create_private_threads(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    everyone = control.get("/state").json()["roles"][0]
    denied = control.post(f"/roles/{fast.guild_id}", json={"deny": ["CREATE_PRIVATE_THREADS"]})

    refused = api.post(f"/channels/{fast.channel_id}/threads", json={"name": "p"})
    restored = control.post(
        f"/roles/{fast.guild_id}", json={"permissions": everyone["permissions"]}
    )

    assert denied.status_code == restored.status_code == 200
    assert restored.json() == everyone
    _refused(refused, MISSING_PERMISSIONS)
    created = api.post(f"/channels/{fast.channel_id}/threads", json={"name": "p"})
    assert created.status_code == 201


def test_the_creator_archives_its_thread_but_locking_needs_manage_threads(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    thread_id = _public_thread(api, fast)
    _deny(control, fast, "MANAGE_THREADS")

    archived = api.patch(f"/channels/{thread_id}", json={"archived": True})
    unarchived = api.patch(f"/channels/{thread_id}", json={"archived": False, "name": "r"})
    locked = api.patch(f"/channels/{thread_id}", json={"locked": True})
    slowed = api.patch(f"/channels/{thread_id}", json={"rate_limit_per_user": 5})
    _allow(control, fast, "MANAGE_THREADS")

    assert archived.status_code == 200
    assert archived.json()["thread_metadata"]["archived"] is True
    assert unarchived.status_code == 200
    _refused(locked, MISSING_PERMISSIONS)
    _refused(slowed, MISSING_PERMISSIONS)
    assert api.patch(f"/channels/{thread_id}", json={"locked": True}).status_code == 200


# -- reactions and deletes --------------------------------------------------------------------


def test_a_new_reaction_needs_add_reactions_but_joining_one_does_not(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    message_id = _posted_by_owner(control, fast, fast.channel_id)
    control.post(
        "/reactions",
        json={
            "user_id": fast.owner_user_id,
            "channel_id": fast.channel_id,
            "message_id": message_id,
            "emoji": "✅",
        },
    )
    base = f"/channels/{fast.channel_id}/messages/{message_id}/reactions"
    _deny(control, fast, "ADD_REACTIONS")

    new = api.put(f"{base}/{quote(THUMBS_UP)}/@me")
    joined = api.put(f"{base}/{quote('✅')}/@me")
    _allow(control, fast, "ADD_REACTIONS")

    _refused(new, MISSING_PERMISSIONS)
    assert joined.status_code == 204
    assert api.put(f"{base}/{quote(THUMBS_UP)}/@me").status_code == 204


def test_reacting_needs_read_message_history(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    message_id = _post(api, fast.channel_id).json()["id"]
    url = f"/channels/{fast.channel_id}/messages/{message_id}/reactions/{quote(THUMBS_UP)}/@me"
    _deny(control, fast, "READ_MESSAGE_HISTORY")

    refused = api.put(url)
    _allow(control, fast, "READ_MESSAGE_HISTORY")

    _refused(refused, MISSING_PERMISSIONS)
    assert api.put(url).status_code == 204


def test_deleting_someone_elses_message_needs_manage_messages(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    theirs = _posted_by_owner(control, fast, fast.channel_id)
    mine = _post(api, fast.channel_id).json()["id"]
    url = f"/channels/{fast.channel_id}/messages"

    refused = api.delete(f"{url}/{theirs}")
    own = api.delete(f"{url}/{mine}")
    _allow(control, fast, "MANAGE_MESSAGES")

    _refused(refused, MISSING_PERMISSIONS)
    assert own.status_code == 204
    assert api.delete(f"{url}/{theirs}").status_code == 204


# -- overwrites, membership, the ban ----------------------------------------------------------


def test_a_member_overwrite_hides_the_channel_until_cleared(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    overwrites = f"/channels/{fast.channel_id}/overwrites"
    set_ = control.post(
        overwrites,
        json={"permission_overwrites": [{"id": fast.bot_user_id, "type": 1, "deny": "1024"}]},
    )
    hidden = api.get(f"/channels/{fast.channel_id}")
    state = control.get("/state").json()
    control.post(overwrites, json={"permission_overwrites": []})

    assert set_.status_code == 200
    _refused(hidden, MISSING_ACCESS)
    assert state["bot_permissions"][fast.channel_id] == "0"
    assert api.get(f"/channels/{fast.channel_id}").status_code == 200


def test_a_bot_out_of_the_guild_sees_nothing_until_it_is_back(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    left = control.post(f"/members/{fast.bot_user_id}", json={"in_guild": False})
    answers = [
        api.get(f"/channels/{fast.channel_id}"),
        api.get(f"/guilds/{fast.guild_id}"),
        api.get(f"/guilds/{fast.guild_id}/roles"),
        api.get(f"/guilds/{fast.guild_id}/members/{fast.bot_user_id}"),
    ]
    me = api.get("/users/@me")
    back = control.post(f"/members/{fast.bot_user_id}", json={"in_guild": True})

    assert left.json() == {"user_id": fast.bot_user_id, "in_guild": False, "member": None}
    for response in answers:
        _refused(response, MISSING_ACCESS)
    assert me.status_code == 200
    assert back.json()["member"]["roles"] == [fast.bot_role_id]
    assert _post(api, fast.channel_id).status_code == 200


def test_the_bot_can_be_given_another_role(
    fast: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    _deny(control, fast, "SEND_MESSAGES")
    control.post(f"/roles/{fast.guild_id}", json={"allow": ["SEND_MESSAGES"]})
    via_everyone = _post(api, fast.channel_id)
    stripped = control.post(f"/members/{fast.bot_user_id}", json={"roles": []})
    without_role = api.get(f"/channels/{fast.channel_id}")

    assert via_everyone.status_code == 200
    assert stripped.json()["member"]["roles"] == []
    _refused(without_role, MISSING_ACCESS)


def test_forbidden_answers_count_toward_the_cloudflare_ban(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    running = make_emulator(invalid_request_limit=3)
    with bot_client(running) as api, control_client(running) as control:
        _deny(control, running, "VIEW_CHANNEL")
        statuses = [api.get(f"/channels/{running.channel_id}").status_code for _ in range(3)]
        banned = api.get("/users/@me")
        stats = control.get("/state").json()["stats"]

    assert statuses == [403, 403, 403]
    assert banned.status_code == 429
    assert banned.headers["Content-Type"].startswith("text/html")
    assert stats["rest_403"] == 3


def test_people_act_through_the_control_api_whatever_the_bots_permissions(
    fast: RunningEmulator, control: httpx.Client
) -> None:
    _deny(control, fast, "VIEW_CHANNEL", "SEND_MESSAGES", "ADD_REACTIONS")
    control.post(f"/roles/{fast.guild_id}", json={"permissions": "0"})

    message_id = _posted_by_owner(control, fast, fast.channel_id)
    person = control.post("/users", json={"username": "alice"}).json()
    posted = control.post(
        f"/channels/{fast.channel_id}/messages",
        json={"author_id": person["id"], "content": "still here"},
    )
    reacted = control.post(
        "/reactions",
        json={
            "user_id": person["id"],
            "channel_id": fast.channel_id,
            "message_id": message_id,
            "emoji": THUMBS_UP,
        },
    )

    assert posted.status_code == 200
    assert reacted.status_code == 200


# -- threads someone else started (in this test's loop, to start one as a person) ------------


@pytest.fixture
async def in_loop() -> AsyncIterator[tuple[RunningEmulator, httpx.AsyncClient]]:
    checker = OpenAPIChecker()
    async with serve(rate_limit_scale=0.0001, exchange_hook=checker) as running:
        headers = {"Authorization": f"Bot {running.token}"}
        async with httpx.AsyncClient(base_url=running.api_base, headers=headers) as api:
            yield running, api
    assert not checker.report(), checker.report()


async def test_archiving_someone_elses_thread_needs_manage_threads(
    in_loop: tuple[RunningEmulator, httpx.AsyncClient],
) -> None:
    running, api = in_loop
    state = running.emulator.state
    thread = state.create_thread(state.channel.id, state.owner.id, {"name": "theirs", "type": 11})
    role = state.bot_role
    state.set_role_permissions(role.id, role.permissions & ~(1 << 34))

    archive = await api.patch(f"/channels/{thread.id}", json={"archived": True})
    rename = await api.patch(f"/channels/{thread.id}", json={"name": "mine now"})
    state.set_role_permissions(role.id, role.permissions | 1 << 34)
    archived = await api.patch(f"/channels/{thread.id}", json={"archived": True})

    _refused(archive, MISSING_PERMISSIONS)
    _refused(rename, MISSING_PERMISSIONS)
    assert archived.status_code == 200


async def test_a_thread_member_unarchives_a_thread_it_did_not_start(
    in_loop: tuple[RunningEmulator, httpx.AsyncClient],
) -> None:
    running, api = in_loop
    state = running.emulator.state
    thread = state.create_thread(state.channel.id, state.owner.id, {"name": "theirs", "type": 11})
    joined = await api.post(f"/channels/{thread.id}/messages", json={"content": "on it"})
    state.update_channel(thread.id, {"archived": True})
    role = state.bot_role
    state.set_role_permissions(role.id, role.permissions & ~(1 << 34))

    reopened = await api.patch(f"/channels/{thread.id}", json={"archived": False})
    state.update_channel(thread.id, {"archived": True, "locked": True})
    locked = await api.patch(f"/channels/{thread.id}", json={"archived": False})

    assert joined.status_code == 200
    assert reopened.status_code == 200
    assert reopened.json()["thread_metadata"]["archived"] is False
    _refused(locked, MISSING_PERMISSIONS)
