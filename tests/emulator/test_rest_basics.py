"""Authentication, users, the gateway URL, ids and unknown routes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import httpx

from discord_mcp.emulator import Exchange, RunningEmulator
from tests.emulator.conftest import bot_client

DISCORD_EPOCH_MS = 1_420_070_400_000


def test_a_request_without_a_token_gets_401_with_discords_body(emulator: RunningEmulator) -> None:
    response = httpx.get(emulator.api_base + "/users/@me")

    assert response.status_code == 401
    assert response.json() == {"message": "401: Unauthorized", "code": 0}


def test_a_wrong_token_or_a_missing_bot_prefix_gets_401(emulator: RunningEmulator) -> None:
    wrong = httpx.get(emulator.api_base + "/users/@me", headers={"Authorization": "Bot nope"})
    bare = httpx.get(emulator.api_base + "/users/@me", headers={"Authorization": emulator.token})

    assert wrong.status_code == 401
    assert bare.status_code == 401


def test_a_custom_token_is_the_only_one_accepted(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    running = make_emulator(token="my-own-token")
    url = running.api_base + "/users/@me"

    assert running.token == "my-own-token"
    assert httpx.get(url, headers={"Authorization": "Bot my-own-token"}).status_code == 200


def test_users_me_is_the_bot_with_the_fields_discord_sends(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    me = api.get("/users/@me").json()

    assert me["id"] == emulator.bot_user_id
    assert me["bot"] is True
    for field in ("username", "avatar", "discriminator", "public_flags", "flags", "global_name"):
        assert field in me
    assert "primary_guild" in me
    assert me["mfa_enabled"] is False


def test_users_by_id_returns_the_owner_as_a_human(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    owner = api.get(f"/users/{emulator.owner_user_id}").json()

    assert owner["id"] == emulator.owner_user_id
    assert "bot" not in owner


def test_an_unknown_user_is_10013(api: httpx.Client) -> None:
    response = api.get("/users/123456789012345678")

    assert response.status_code == 404
    assert response.json() == {"message": "Unknown User", "code": 10013}


def test_the_application_is_the_bots(emulator: RunningEmulator, api: httpx.Client) -> None:
    application = api.get("/oauth2/applications/@me").json()

    assert application["id"] == emulator.application_id == emulator.bot_user_id
    assert application["owner"]["id"] == emulator.owner_user_id


def test_gateway_bot_points_at_this_server(emulator: RunningEmulator, api: httpx.Client) -> None:
    gateway = api.get("/gateway/bot").json()

    assert gateway["url"] == f"ws://127.0.0.1:{emulator.port}/gateway" == emulator.gateway_url
    assert gateway["shards"] == 1
    limit = gateway["session_start_limit"]
    assert limit["total"] == 1000
    assert limit["max_concurrency"] == 1
    assert 0 <= limit["remaining"] <= 1000


def test_snowflakes_are_increasing_strings_that_encode_the_timestamp(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    url = f"/channels/{emulator.channel_id}/messages"
    first = api.post(url, json={"content": "one"}).json()
    second = api.post(url, json={"content": "two"}).json()

    assert isinstance(first["id"], str)
    assert int(second["id"]) > int(first["id"])
    encoded_ms = (int(first["id"]) >> 22) + DISCORD_EPOCH_MS
    stamp = datetime.fromisoformat(first["timestamp"])
    assert stamp.utcoffset() is not None
    assert int(stamp.timestamp() * 1000) == encoded_ms


def test_startup_ids_are_the_same_on_every_start(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    first, second = make_emulator(), make_emulator()

    assert first.port != second.port
    assert (first.guild_id, first.channel_id, first.bot_user_id, first.owner_user_id) == (
        second.guild_id,
        second.channel_id,
        second.bot_user_id,
        second.owner_user_id,
    )


def test_an_unknown_route_is_a_discord_404(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    with bot_client(make_emulator(check_openapi=False)) as api:
        response = api.get("/no/such/route")

    assert response.status_code == 404
    assert response.json() == {"message": "404: Not Found", "code": 0}


def test_a_known_route_with_another_method_is_405(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    with bot_client(make_emulator(check_openapi=False)) as api:
        response = api.put("/users/@me")

    assert response.status_code == 405
    assert response.json()["message"] == "405: Method Not Allowed"


def test_the_control_api_is_not_reachable_under_api_v10(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    with bot_client(make_emulator(check_openapi=False)) as api:
        response = api.get("/_emulator/state")

    assert response.status_code == 404
    assert response.json()["code"] == 0


def test_a_body_that_is_not_json_is_50109(emulator: RunningEmulator, api: httpx.Client) -> None:
    response = api.post(
        f"/channels/{emulator.channel_id}/messages",
        content=b"{not json",
        headers={"Content-Type": "application/json"},
    )

    assert response.status_code == 400
    assert response.json()["code"] == 50109


def test_a_body_with_another_content_type_is_50035(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = api.post(
        f"/channels/{emulator.channel_id}/messages",
        content=b"content=hi",
        headers={"Content-Type": "text/plain"},
    )

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == 50035
    assert body["errors"]["_errors"][0]["code"] == "CONTENT_TYPE_INVALID"


def test_the_exchange_hook_sees_the_raw_path_query_bodies_and_headers(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    seen: list[Exchange] = []
    running = make_emulator(exchange_hook=seen.append)
    with bot_client(running) as api:
        api.post(f"/channels/{running.channel_id}/messages", json={"content": "hello"})
        api.get(f"/channels/{running.channel_id}/messages", params={"limit": "1"})

    post, get = seen
    assert post.response_json is not None
    assert (post.method, post.path, post.status) == (
        "POST",
        f"/channels/{running.channel_id}/messages",
        200,
    )
    assert post.request_json == {"content": "hello"}
    assert post.response_json["content"] == "hello"
    assert post.response_headers["X-RateLimit-Limit"] == "5"
    assert post.response_headers["Content-Type"] == "application/json"
    assert get.query == {"limit": "1"}
    assert get.request_json is None
