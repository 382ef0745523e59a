"""Reactions by the bot (REST) and by people (control API)."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from tests.emulator.conftest import bot_client, control_client, until_not_429

THUMBS_UP = "👍"
CHECK = "✅"


def _message(running: RunningEmulator, api: httpx.Client) -> str:
    response = api.post(f"/channels/{running.channel_id}/messages", json={"content": "React"})
    return str(response.json()["id"])


def _own(running: RunningEmulator, message_id: str, emoji: str) -> str:
    return f"/channels/{running.channel_id}/messages/{message_id}/reactions/{quote(emoji)}/@me"


def _react_as(
    control: httpx.Client, running: RunningEmulator, user_id: str, message_id: str, emoji: str
) -> httpx.Response:
    return control.post(
        "/reactions",
        json={
            "user_id": user_id,
            "channel_id": running.channel_id,
            "message_id": message_id,
            "emoji": emoji,
        },
    )


@pytest.fixture
def fast(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    """The reaction bucket allows 1 request per 0.25 s; these tests add several in a row."""
    return make_emulator(rate_limit_scale=0.0001)


def test_adding_a_reaction_is_204_and_shows_on_the_message(fast: RunningEmulator) -> None:
    with bot_client(fast) as api:
        message_id = _message(fast, api)

        response = api.put(_own(fast, message_id, THUMBS_UP))
        message = api.get(f"/channels/{fast.channel_id}/messages/{message_id}").json()

    assert response.status_code == 204
    assert message["reactions"] == [
        {
            "emoji": {"id": None, "name": THUMBS_UP},
            "count": 1,
            "count_details": {"burst": 0, "normal": 1},
            "burst_colors": [],
            "me_burst": False,
            "me": True,
        }
    ]


def test_adding_the_same_reaction_twice_counts_once(fast: RunningEmulator) -> None:
    with bot_client(fast) as api:
        message_id = _message(fast, api)
        first = until_not_429(lambda: api.put(_own(fast, message_id, THUMBS_UP)))
        second = until_not_429(lambda: api.put(_own(fast, message_id, THUMBS_UP)))
        message = api.get(f"/channels/{fast.channel_id}/messages/{message_id}").json()

    assert first.status_code == second.status_code == 204
    assert message["reactions"][0]["count"] == 1


def test_removing_the_bots_reaction_removes_it(fast: RunningEmulator) -> None:
    with bot_client(fast) as api:
        message_id = _message(fast, api)
        api.put(_own(fast, message_id, THUMBS_UP))

        response = until_not_429(lambda: api.delete(_own(fast, message_id, THUMBS_UP)))
        message = api.get(f"/channels/{fast.channel_id}/messages/{message_id}").json()

    assert response.status_code == 204
    assert "reactions" not in message


@pytest.mark.parametrize("emoji", ["thumbsup", "name:123456789012345678", "a b"])
def test_an_emoji_discord_does_not_know_is_10014(
    emulator: RunningEmulator, api: httpx.Client, emoji: str
) -> None:
    message_id = _message(emulator, api)

    response = api.put(_own(emulator, message_id, emoji))

    assert response.status_code == 400
    assert response.json() == {"message": "Unknown Emoji", "code": 10014}


def test_reacting_to_an_unknown_message_is_10008(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = api.put(_own(emulator, "42", THUMBS_UP))

    assert response.status_code == 404
    assert response.json()["code"] == 10008


def test_a_persons_reaction_counts_but_is_not_the_bots(fast: RunningEmulator) -> None:
    with bot_client(fast) as api, control_client(fast) as control:
        message_id = _message(fast, api)

        response = _react_as(control, fast, fast.owner_user_id, message_id, CHECK)

    assert response.status_code == 200
    reaction = response.json()["reactions"][0]
    assert reaction["emoji"]["name"] == CHECK
    assert (reaction["count"], reaction["me"]) == (1, False)


def test_reactors_are_listed_by_id_with_after_and_limit(fast: RunningEmulator) -> None:
    with bot_client(fast) as api, control_client(fast) as control:
        message_id = _message(fast, api)
        users = [control.post("/users", json={"username": f"u{n}"}).json() for n in range(3)]
        for user in reversed(users):
            _react_as(control, fast, user["id"], message_id, CHECK)
        url = f"/channels/{fast.channel_id}/messages/{message_id}/reactions/{quote(CHECK)}"

        everyone = until_not_429(lambda: api.get(url)).json()
        page = until_not_429(
            lambda: api.get(url, params={"after": users[0]["id"], "limit": 1})
        ).json()

    assert [u["id"] for u in everyone] == [u["id"] for u in users]
    assert [u["id"] for u in page] == [users[1]["id"]]


def test_a_person_can_take_a_reaction_back(fast: RunningEmulator) -> None:
    with bot_client(fast) as api, control_client(fast) as control:
        message_id = _message(fast, api)
        _react_as(control, fast, fast.owner_user_id, message_id, CHECK)

        response = control.post(
            "/reactions",
            json={
                "user_id": fast.owner_user_id,
                "channel_id": fast.channel_id,
                "message_id": message_id,
                "emoji": CHECK,
                "remove": True,
            },
        )

    assert response.status_code == 200
    assert "reactions" not in response.json()


def test_reacting_in_an_archived_thread_is_50083(fast: RunningEmulator) -> None:
    with bot_client(fast) as api:
        thread_message = _message(fast, api)
        api.post(
            f"/channels/{fast.channel_id}/messages/{thread_message}/threads", json={"name": "t"}
        )
        inner = api.post(f"/channels/{thread_message}/messages", json={"content": "in"}).json()
        api.patch(f"/channels/{thread_message}", json={"archived": True})

        url = f"/channels/{thread_message}/messages/{inner['id']}/reactions/{quote(CHECK)}/@me"
        response = until_not_429(lambda: api.put(url))

    assert response.status_code == 400
    assert response.json()["code"] == 50083
