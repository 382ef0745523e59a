"""The control API contract: paths and fields that tests, benchmarks and people rely on."""

from __future__ import annotations

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator

STATS = (
    "rest_requests",
    "rest_429",
    "gateway_identifies",
    "gateway_resumes",
    "gateway_connections_open",
    "gateway_connections_total",
    "gateway_heartbeats",
    "gateway_dispatches",
    "interactions_failed",
)


def test_the_state_holds_the_guild_channels_users_and_stats(
    emulator: RunningEmulator, control: httpx.Client
) -> None:
    state = control.get("/state").json()

    assert state["guild"]["id"] == emulator.guild_id
    assert [c["id"] for c in state["channels"]] == [emulator.channel_id]
    assert state["channels"][0]["type"] == 0
    users = {u["id"]: u for u in state["users"]}
    assert users[emulator.bot_user_id]["bot"] is True
    assert "bot" not in users[emulator.owner_user_id]
    for counter in STATS:
        assert state["stats"][counter] == 0, counter
    assert state["bot_user_id"] == emulator.bot_user_id
    assert state["owner_user_id"] == emulator.owner_user_id
    assert state["channel_id"] == emulator.channel_id


def test_the_state_lists_threads_among_the_channels(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    thread = api.post(f"/channels/{emulator.channel_id}/threads", json={"name": "t"}).json()

    channels = control.get("/state").json()["channels"]

    assert thread["id"] in [c["id"] for c in channels]


def test_rest_requests_are_counted(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    api.get("/users/@me")
    api.get("/users/@me")

    assert control.get("/state").json()["stats"]["rest_requests"] == 2


def test_a_new_user_is_a_human_member(control: httpx.Client) -> None:
    response = control.post("/users", json={"username": "alice"})

    assert response.status_code == 201
    user = response.json()
    assert user["username"] == "alice"
    assert "bot" not in user
    assert user["id"] in [u["id"] for u in control.get("/state").json()["users"]]


def test_a_person_posts_a_message_that_the_bot_reads(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    posted = control.post(
        f"/channels/{emulator.channel_id}/messages",
        json={"author_id": emulator.owner_user_id, "content": "ship it"},
    )

    assert posted.status_code == 200
    message = posted.json()
    assert message["author"]["id"] == emulator.owner_user_id
    listed = api.get(f"/channels/{emulator.channel_id}/messages").json()
    assert [m["id"] for m in listed] == [message["id"]]


def test_a_person_replies_with_a_message_reference(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    question = api.post(f"/channels/{emulator.channel_id}/messages", json={"content": "?"}).json()

    reply = control.post(
        f"/channels/{emulator.channel_id}/messages",
        json={
            "author_id": emulator.owner_user_id,
            "content": "yes",
            "message_reference": {"message_id": question["id"]},
        },
    ).json()

    assert reply["type"] == 19
    assert reply["message_reference"]["message_id"] == question["id"]


def test_the_control_listing_is_every_message_oldest_first_with_components_and_reactions(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    row = {"type": 1, "components": [{"type": 2, "style": 1, "label": "Go", "custom_id": "go"}]}
    first = api.post(
        f"/channels/{emulator.channel_id}/messages", json={"content": "one", "components": [row]}
    ).json()
    second = control.post(
        f"/channels/{emulator.channel_id}/messages",
        json={"author_id": emulator.owner_user_id, "content": "two"},
    ).json()
    control.post(
        "/reactions",
        json={
            "user_id": emulator.owner_user_id,
            "channel_id": emulator.channel_id,
            "message_id": first["id"],
            "emoji": "✅",
        },
    )

    history = control.get(f"/channels/{emulator.channel_id}/messages").json()

    assert [m["id"] for m in history] == [first["id"], second["id"]]
    assert history[0]["components"][0]["components"][0]["custom_id"] == "go"
    assert history[0]["reactions"][0]["emoji"]["name"] == "✅"


def test_a_message_discord_would_refuse_is_400_with_discords_reason(
    emulator: RunningEmulator, control: httpx.Client
) -> None:
    response = control.post(
        f"/channels/{emulator.channel_id}/messages",
        json={"author_id": emulator.owner_user_id, "content": "x" * 2001},
    )

    assert response.status_code == 400
    body = response.json()
    assert "50035" in body["error"]
    assert body["discord"]["errors"]["content"]["_errors"][0]["code"] == "BASE_TYPE_MAX_LENGTH"


@pytest.mark.parametrize(
    ("path", "body", "complaint"),
    [
        ("/users", {}, "missing field"),
        ("/users", {"username": ""}, "non-empty"),
        ("/users", {"username": "a", "extra": 1}, "unknown field"),
        ("/reactions", {"user_id": "1"}, "missing field"),
    ],
)
def test_a_malformed_control_request_is_400_with_a_clear_message(
    control: httpx.Client, path: str, body: dict[str, object], complaint: str
) -> None:
    response = control.post(path, json=body)

    assert response.status_code == 400
    assert complaint in response.json()["error"]


def test_a_control_body_that_is_not_json_is_400(control: httpx.Client) -> None:
    response = control.post(
        "/users", content=b"{nope", headers={"Content-Type": "application/json"}
    )

    assert response.status_code == 400
    assert "JSON" in response.json()["error"]


def test_posting_as_an_unknown_user_is_400(
    emulator: RunningEmulator, control: httpx.Client
) -> None:
    response = control.post(
        f"/channels/{emulator.channel_id}/messages", json={"author_id": "42", "content": "hi"}
    )

    assert response.status_code == 400
    assert "no user" in response.json()["error"]


def test_posting_to_an_unknown_channel_is_400_with_10003(
    emulator: RunningEmulator, control: httpx.Client
) -> None:
    response = control.post(
        "/channels/42/messages", json={"author_id": emulator.owner_user_id, "content": "hi"}
    )

    assert response.status_code == 400
    assert response.json()["discord"]["code"] == 10003


def test_the_control_api_needs_no_token(emulator: RunningEmulator) -> None:
    response = httpx.get(emulator.base_url + "/_emulator/state")

    assert response.status_code == 200
