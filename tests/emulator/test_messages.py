"""Creating, reading, editing, deleting and listing messages, with Discord's errors."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator

MESSAGE_FIELDS = (
    "id",
    "channel_id",
    "author",
    "content",
    "timestamp",
    "edited_timestamp",
    "tts",
    "mention_everyone",
    "mentions",
    "mention_roles",
    "attachments",
    "embeds",
    "pinned",
    "type",
    "flags",
    "components",
)


def _messages_url(running: RunningEmulator, channel_id: str | None = None) -> str:
    return f"/channels/{channel_id or running.channel_id}/messages"


def _seed(control: httpx.Client, running: RunningEmulator, count: int) -> list[str]:
    """Post ``count`` messages as the owner through the control API (no rate limits there)."""
    ids = []
    for number in range(count):
        response = control.post(
            f"/channels/{running.channel_id}/messages",
            json={"author_id": running.owner_user_id, "content": f"message {number}"},
        )
        ids.append(response.json()["id"])
    return ids


def test_a_created_message_is_a_full_message_object(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = api.post(_messages_url(emulator), json={"content": "hello"})

    assert response.status_code == 200
    message = response.json()
    for field in MESSAGE_FIELDS:
        assert field in message, field
    assert message["channel_id"] == emulator.channel_id
    assert message["author"]["id"] == emulator.bot_user_id
    assert message["content"] == "hello"
    assert message["edited_timestamp"] is None
    assert message["type"] == 0
    assert "reactions" not in message
    assert "nonce" not in message


def test_content_of_exactly_2000_characters_is_accepted(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = api.post(_messages_url(emulator), json={"content": "x" * 2000})

    assert response.status_code == 200


def test_content_over_2000_characters_is_rejected_with_50035(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = api.post(_messages_url(emulator), json={"content": "x" * 2001})

    assert response.status_code == 400
    assert response.json() == {
        "message": "Invalid Form Body",
        "code": 50035,
        "errors": {
            "content": {
                "_errors": [
                    {"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}
                ]
            }
        },
    }


@pytest.mark.parametrize("body", [{}, {"content": ""}, {"content": "   "}, {"embeds": []}])
def test_an_empty_message_is_rejected_with_50006(
    emulator: RunningEmulator, api: httpx.Client, body: dict[str, Any]
) -> None:
    response = api.post(_messages_url(emulator), json=body)

    assert response.status_code == 400
    assert response.json() == {"message": "Cannot send an empty message", "code": 50006}


def test_a_message_with_only_an_embed_is_not_empty(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = api.post(_messages_url(emulator), json={"embeds": [{"title": "Status"}]})

    assert response.status_code == 200
    assert response.json()["embeds"] == [{"type": "rich", "title": "Status"}]


def test_more_than_10_embeds_are_rejected_with_50035(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    embeds = [{"title": str(n)} for n in range(11)]
    response = api.post(_messages_url(emulator), json={"embeds": embeds})

    assert response.status_code == 400
    errors = response.json()["errors"]["embeds"]["_errors"]
    assert errors[0]["code"] == "BASE_TYPE_MAX_LENGTH"


def test_embed_field_limits_are_enforced_per_field(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    embed = {"title": "t" * 257, "fields": [{"name": "n", "value": "v" * 1025}]}
    response = api.post(_messages_url(emulator), json={"embeds": [embed]})

    assert response.status_code == 400
    errors = response.json()["errors"]["embeds"]["0"]
    assert errors["title"]["_errors"][0]["code"] == "BASE_TYPE_MAX_LENGTH"
    assert errors["fields"]["0"]["value"]["_errors"][0]["code"] == "BASE_TYPE_MAX_LENGTH"


def test_embeds_over_6000_characters_in_total_are_rejected(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    embeds = [{"description": "d" * 4000}, {"description": "d" * 2001}]
    response = api.post(_messages_url(emulator), json={"embeds": embeds})

    assert response.status_code == 400
    errors = response.json()["errors"]["embeds"]["_errors"]
    assert errors[0]["code"] == "MAX_EMBED_SIZE_EXCEEDED"


def test_a_message_to_an_unknown_channel_is_10003(api: httpx.Client) -> None:
    response = api.post("/channels/42/messages", json={"content": "hi"})

    assert response.status_code == 404
    assert response.json() == {"message": "Unknown Channel", "code": 10003}


def test_an_unknown_message_is_10008(emulator: RunningEmulator, api: httpx.Client) -> None:
    response = api.get(_messages_url(emulator) + "/42")

    assert response.status_code == 404
    assert response.json() == {"message": "Unknown Message", "code": 10008}


def test_a_message_is_read_back_by_id(emulator: RunningEmulator, api: httpx.Client) -> None:
    created = api.post(_messages_url(emulator), json={"content": "hello"}).json()

    fetched = api.get(_messages_url(emulator) + f"/{created['id']}").json()

    assert fetched == created


def test_editing_sets_content_and_edited_timestamp(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    created = api.post(_messages_url(emulator), json={"content": "draft"}).json()

    response = api.patch(_messages_url(emulator) + f"/{created['id']}", json={"content": "final"})

    assert response.status_code == 200
    edited = response.json()
    assert edited["content"] == "final"
    assert edited["edited_timestamp"] is not None
    assert edited["timestamp"] == created["timestamp"]


@pytest.mark.parametrize("cleared", [None, []])
def test_editing_with_null_or_empty_components_removes_them(
    emulator: RunningEmulator, api: httpx.Client, cleared: list[Any] | None
) -> None:
    row = {"type": 1, "components": [{"type": 2, "style": 1, "label": "Go", "custom_id": "go"}]}
    created = api.post(_messages_url(emulator), json={"content": "q", "components": [row]}).json()

    edited = api.patch(
        _messages_url(emulator) + f"/{created['id']}", json={"components": cleared}
    ).json()

    assert created["components"] != []
    assert edited["components"] == []
    assert edited["content"] == "q"


def test_editing_another_users_message_is_50005(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    (owner_message,) = _seed(control, emulator, 1)

    response = api.patch(_messages_url(emulator) + f"/{owner_message}", json={"content": "x"})

    assert response.status_code == 403
    assert response.json()["code"] == 50005


def test_a_deleted_message_is_gone(emulator: RunningEmulator, api: httpx.Client) -> None:
    created = api.post(_messages_url(emulator), json={"content": "bye"}).json()
    url = _messages_url(emulator) + f"/{created['id']}"

    deleted = api.delete(url)

    assert deleted.status_code == 204
    assert deleted.content == b""
    assert api.get(url).status_code == 404


def test_the_list_is_newest_first_with_50_by_default(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    ids = _seed(control, emulator, 55)

    page = api.get(_messages_url(emulator)).json()

    assert [m["id"] for m in page] == list(reversed(ids))[:50]


@pytest.mark.parametrize("limit", ["0", "101", "many"])
def test_a_limit_outside_1_to_100_is_50035(
    emulator: RunningEmulator, api: httpx.Client, limit: str
) -> None:
    response = api.get(_messages_url(emulator), params={"limit": limit})

    assert response.status_code == 400
    assert response.json()["code"] == 50035
    assert "limit" in response.json()["errors"]


def test_before_pages_toward_older_messages(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    ids = _seed(control, emulator, 10)

    page = api.get(_messages_url(emulator), params={"before": ids[5], "limit": 3}).json()

    assert [m["id"] for m in page] == [ids[4], ids[3], ids[2]]


def test_after_returns_the_messages_right_after_newest_first(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    ids = _seed(control, emulator, 10)

    page = api.get(_messages_url(emulator), params={"after": ids[2], "limit": 3}).json()

    assert [m["id"] for m in page] == [ids[5], ids[4], ids[3]]


def test_around_returns_half_the_limit_on_each_side_and_the_message_itself(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    ids = _seed(control, emulator, 10)

    even = api.get(_messages_url(emulator), params={"around": ids[5], "limit": 4}).json()
    odd = api.get(_messages_url(emulator), params={"around": ids[5], "limit": 3}).json()
    alone = api.get(_messages_url(emulator), params={"around": ids[5], "limit": 1}).json()

    # An even limit gives limit + 1 messages (discord.py asks for 100 to get 101).
    assert [m["id"] for m in even] == [ids[7], ids[6], ids[5], ids[4], ids[3]]
    assert [m["id"] for m in odd] == [ids[6], ids[5], ids[4]]
    assert [m["id"] for m in alone] == [ids[5]]


def test_around_an_id_that_is_no_message_takes_its_neighbours(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    ids = _seed(control, emulator, 6)
    # Two messages made in one millisecond have consecutive ids (the snowflake's increment):
    # take a pair with room between them for an id that is no message (a later one has room).

    def gap() -> int | None:
        return next((i for i in range(1, len(ids) - 2) if int(ids[i + 1]) - int(ids[i]) > 1), None)

    while (i := gap()) is None and len(ids) < 60:
        ids += _seed(control, emulator, 6)
    assert i is not None
    between = str(int(ids[i]) + 1)

    page = api.get(_messages_url(emulator), params={"around": between, "limit": 4}).json()

    assert [m["id"] for m in page] == [ids[i + 2], ids[i + 1], ids[i], ids[i - 1]]


def test_paging_with_before_walks_the_whole_history_without_gaps(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    ids = _seed(control, emulator, 7)

    seen: list[str] = []
    before: str | None = None
    while True:
        params = {"limit": 3} | ({"before": before} if before else {})
        page = [m["id"] for m in api.get(_messages_url(emulator), params=params).json()]
        if not page:
            break
        seen += page
        before = page[-1]

    assert seen == list(reversed(ids))


def test_before_after_and_around_are_mutually_exclusive(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    ids = _seed(control, emulator, 3)

    response = api.get(_messages_url(emulator), params={"before": ids[2], "after": ids[0]})

    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"before", "after"}


def test_a_nonce_is_echoed_in_the_create_response_only(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    created = api.post(_messages_url(emulator), json={"content": "n", "nonce": "abc"}).json()

    fetched = api.get(_messages_url(emulator) + f"/{created['id']}").json()

    assert created["nonce"] == "abc"
    assert "nonce" not in fetched


def test_enforce_nonce_returns_the_earlier_message_instead_of_a_duplicate(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    body = {"content": "once", "nonce": "retry-1", "enforce_nonce": True}

    first = api.post(_messages_url(emulator), json=body).json()
    second = api.post(_messages_url(emulator), json=body).json()

    assert second["id"] == first["id"]
    assert len(api.get(_messages_url(emulator)).json()) == 1


def test_a_repeated_nonce_without_enforce_nonce_creates_two_messages(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    body = {"content": "twice", "nonce": "same"}

    first = api.post(_messages_url(emulator), json=body).json()
    second = api.post(_messages_url(emulator), json=body).json()

    assert second["id"] != first["id"]


def test_a_nonce_over_25_characters_is_50035(emulator: RunningEmulator, api: httpx.Client) -> None:
    response = api.post(_messages_url(emulator), json={"content": "n", "nonce": "n" * 26})

    assert response.status_code == 400
    assert "nonce" in response.json()["errors"]


def test_a_reply_carries_the_reference_and_mentions_the_replied_author(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    (question,) = _seed(control, emulator, 1)

    reply = api.post(
        _messages_url(emulator),
        json={"content": "answer", "message_reference": {"message_id": question}},
    ).json()

    assert reply["type"] == 19
    assert reply["message_reference"]["message_id"] == question
    assert reply["message_reference"]["channel_id"] == emulator.channel_id
    assert reply["referenced_message"]["id"] == question
    assert [u["id"] for u in reply["mentions"]] == [emulator.owner_user_id]


def test_a_reply_to_an_unknown_message_is_50035_unless_told_not_to_fail(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    reference = {"message_id": "42"}
    failing = api.post(
        _messages_url(emulator), json={"content": "r", "message_reference": reference}
    )
    lenient = api.post(
        _messages_url(emulator),
        json={"content": "r", "message_reference": reference | {"fail_if_not_exists": False}},
    )

    assert failing.status_code == 400
    assert "message_reference" in failing.json()["errors"]
    assert lenient.status_code == 200
    assert "message_reference" not in lenient.json()


def test_allowed_mentions_with_an_empty_parse_mentions_nobody(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    content = f"<@{emulator.owner_user_id}> look @everyone"
    pinged = api.post(_messages_url(emulator), json={"content": content}).json()
    silent = api.post(
        _messages_url(emulator),
        json={"content": content, "allowed_mentions": {"parse": []}},
    ).json()

    assert [u["id"] for u in pinged["mentions"]] == [emulator.owner_user_id]
    assert pinged["mention_everyone"] is True
    assert silent["mentions"] == []
    assert silent["mention_everyone"] is False


def test_allowed_mentions_can_name_the_users_to_ping(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    content = f"<@{emulator.owner_user_id}> and <@{emulator.bot_user_id}>"

    message = api.post(
        _messages_url(emulator),
        json={"content": content, "allowed_mentions": {"users": [emulator.owner_user_id]}},
    ).json()

    assert [u["id"] for u in message["mentions"]] == [emulator.owner_user_id]


def test_an_unknown_allowed_mentions_kind_is_50035(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = api.post(
        _messages_url(emulator),
        json={"content": "x", "allowed_mentions": {"parse": ["robots"]}},
    )

    assert response.status_code == 400
    assert "allowed_mentions" in response.json()["errors"]


def test_typing_is_204(emulator: RunningEmulator, api: httpx.Client) -> None:
    response = api.post(f"/channels/{emulator.channel_id}/typing")

    assert response.status_code == 204
    assert response.content == b""
