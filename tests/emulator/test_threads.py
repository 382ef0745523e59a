"""Threads: creating them, posting in them, archiving, locking, and the strict mode."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from tests.emulator.conftest import bot_client, control_client


def _post(api: httpx.Client, channel_id: str, content: str = "hello") -> httpx.Response:
    return api.post(f"/channels/{channel_id}/messages", json={"content": content})


def _thread_from_message(emulator: RunningEmulator, api: httpx.Client, name: str = "t") -> str:
    message = _post(api, emulator.channel_id, "starter").json()
    response = api.post(
        f"/channels/{emulator.channel_id}/messages/{message['id']}/threads", json={"name": name}
    )
    assert response.status_code == 201
    return str(response.json()["id"])


def _archive(api: httpx.Client, thread_id: str, *, locked: bool = False) -> None:
    body = {"archived": True} | ({"locked": True} if locked else {})
    response = api.patch(f"/channels/{thread_id}", json=body)
    assert response.status_code == 200


def test_a_thread_from_a_message_has_the_messages_id_and_status_201(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    message = _post(api, emulator.channel_id, "starter").json()

    response = api.post(
        f"/channels/{emulator.channel_id}/messages/{message['id']}/threads",
        json={"name": "Deploy?", "auto_archive_duration": 60},
    )

    assert response.status_code == 201
    thread = response.json()
    assert thread["id"] == message["id"]
    assert thread["type"] == 11
    assert thread["parent_id"] == emulator.channel_id
    assert thread["guild_id"] == emulator.guild_id
    assert thread["owner_id"] == emulator.bot_user_id
    assert thread["name"] == "Deploy?"
    metadata = thread["thread_metadata"]
    assert metadata["archived"] is False
    assert metadata["locked"] is False
    assert metadata["auto_archive_duration"] == 60


def test_the_starter_message_gains_its_thread(emulator: RunningEmulator, api: httpx.Client) -> None:
    thread_id = _thread_from_message(emulator, api, "Deploy?")

    starter = api.get(f"/channels/{emulator.channel_id}/messages/{thread_id}").json()

    assert starter["thread"]["id"] == thread_id
    assert starter["thread"]["name"] == "Deploy?"


def test_a_second_thread_on_the_same_message_is_160004(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    thread_id = _thread_from_message(emulator, api)

    again = api.post(
        f"/channels/{emulator.channel_id}/messages/{thread_id}/threads", json={"name": "again"}
    )

    assert again.status_code == 400
    assert again.json()["code"] == 160004


def test_a_thread_from_an_unknown_message_is_10008(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = api.post(f"/channels/{emulator.channel_id}/messages/42/threads", json={"name": "t"})

    assert response.status_code == 404
    assert response.json()["code"] == 10008


def test_a_thread_needs_a_name_of_1_to_100_characters(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    missing = api.post(f"/channels/{emulator.channel_id}/threads", json={"type": 11})
    too_long = api.post(f"/channels/{emulator.channel_id}/threads", json={"name": "n" * 101})

    assert missing.status_code == too_long.status_code == 400
    assert missing.json()["errors"]["name"]["_errors"][0]["code"] == "BASE_TYPE_REQUIRED"
    assert too_long.json()["errors"]["name"]["_errors"][0]["code"] == "BASE_TYPE_BAD_LENGTH"


def test_an_auto_archive_duration_discord_does_not_offer_is_50035(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = api.post(
        f"/channels/{emulator.channel_id}/threads",
        json={"name": "t", "auto_archive_duration": 100},
    )

    assert response.status_code == 400
    assert "auto_archive_duration" in response.json()["errors"]


def test_a_thread_without_a_message_is_private_unless_asked(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    private = api.post(f"/channels/{emulator.channel_id}/threads", json={"name": "secret"})
    public = api.post(f"/channels/{emulator.channel_id}/threads", json={"name": "open", "type": 11})

    assert private.status_code == public.status_code == 201
    assert private.json()["type"] == 12
    assert public.json()["type"] == 11


def test_a_public_thread_without_a_message_is_announced_in_its_parent(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    thread = api.post(
        f"/channels/{emulator.channel_id}/threads", json={"name": "open", "type": 11}
    ).json()
    api.post(f"/channels/{emulator.channel_id}/threads", json={"name": "secret"})

    history = api.get(f"/channels/{emulator.channel_id}/messages").json()

    assert [m["type"] for m in history] == [18]
    assert history[0]["content"] == "open"
    assert history[0]["message_reference"]["channel_id"] == thread["id"]


def test_a_thread_cannot_be_started_inside_a_thread(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    thread_id = _thread_from_message(emulator, api)

    response = api.post(f"/channels/{thread_id}/threads", json={"name": "nested"})

    assert response.status_code == 400
    assert response.json()["code"] == 50024


def test_messages_in_a_thread_carry_the_threads_id_and_stay_out_of_the_parent(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    thread_id = _thread_from_message(emulator, api)

    message = _post(api, thread_id, "inside").json()

    assert message["channel_id"] == thread_id
    assert [m["id"] for m in api.get(f"/channels/{thread_id}/messages").json()] == [message["id"]]
    parent = api.get(f"/channels/{emulator.channel_id}/messages").json()
    assert message["id"] not in [m["id"] for m in parent]
    thread = api.get(f"/channels/{thread_id}").json()
    assert thread["message_count"] == 1
    assert thread["last_message_id"] == message["id"]


def test_a_thread_is_archived_and_unarchived_with_patch(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    thread_id = _thread_from_message(emulator, api)

    archived = api.patch(f"/channels/{thread_id}", json={"archived": True}).json()
    unarchived = api.patch(f"/channels/{thread_id}", json={"archived": False}).json()

    assert archived["thread_metadata"]["archived"] is True
    assert unarchived["thread_metadata"]["archived"] is False


def test_an_archived_thread_accepts_only_edits_that_unarchive_it(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    thread_id = _thread_from_message(emulator, api)
    _archive(api, thread_id)

    rename = api.patch(f"/channels/{thread_id}", json={"name": "renamed"})
    lock = api.patch(f"/channels/{thread_id}", json={"locked": True})
    reopen = api.patch(f"/channels/{thread_id}", json={"archived": False, "name": "renamed"})

    assert rename.status_code == lock.status_code == 400
    assert rename.json() == {"message": "Thread is archived", "code": 50083}
    assert reopen.status_code == 200
    assert reopen.json()["name"] == "renamed"


def test_editing_a_message_in_an_archived_thread_is_50083(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    thread_id = _thread_from_message(emulator, api)
    message = _post(api, thread_id).json()
    _archive(api, thread_id)

    response = api.patch(f"/channels/{thread_id}/messages/{message['id']}", json={"content": "x"})

    assert response.status_code == 400
    assert response.json()["code"] == 50083


def test_deleting_a_message_in_an_archived_thread_works(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    thread_id = _thread_from_message(emulator, api)
    message = _post(api, thread_id).json()
    _archive(api, thread_id)

    response = api.delete(f"/channels/{thread_id}/messages/{message['id']}")

    assert response.status_code == 204


def test_sending_to_an_archived_unlocked_thread_unarchives_it(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    thread_id = _thread_from_message(emulator, api)
    _archive(api, thread_id)

    response = _post(api, thread_id, "wake up")

    assert response.status_code == 200
    assert api.get(f"/channels/{thread_id}").json()["thread_metadata"]["archived"] is False


def test_strict_mode_refuses_to_send_to_an_archived_thread_with_50083(
    make_emulator: Callable[..., RunningEmulator],
) -> None:
    running = make_emulator(strict_archived_threads=True)
    with bot_client(running) as api:
        thread_id = _thread_from_message(running, api)
        _archive(api, thread_id)

        response = _post(api, thread_id, "wake up")
        still_archived = api.get(f"/channels/{thread_id}").json()["thread_metadata"]["archived"]

    assert response.status_code == 400
    assert response.json() == {"message": "Thread is archived", "code": 50083}
    assert still_archived is True


def test_strict_mode_can_be_switched_on_at_run_time(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    thread_id = _thread_from_message(emulator, api)
    _archive(api, thread_id)

    control.post("/faults", json={"strict_archived_threads": True})
    refused = _post(api, thread_id)
    control.post("/faults", json={"strict_archived_threads": False})
    accepted = _post(api, thread_id)

    assert refused.status_code == 400
    assert accepted.status_code == 200


def test_sending_to_a_locked_archived_thread_is_160005(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    thread_id = _thread_from_message(emulator, api)
    api.patch(f"/channels/{thread_id}", json={"locked": True})
    _archive(api, thread_id)

    response = _post(api, thread_id)

    assert response.status_code == 400
    assert response.json() == {"message": "Thread is locked", "code": 160005}


def test_a_person_posting_to_an_archived_thread_unarchives_it_too(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    thread_id = _thread_from_message(emulator, api)
    _archive(api, thread_id)

    with control_client(emulator) as control:
        response = control.post(
            f"/channels/{thread_id}/messages",
            json={"author_id": emulator.owner_user_id, "content": "yes"},
        )

    assert response.status_code == 200
    assert response.json()["channel_id"] == thread_id
    assert api.get(f"/channels/{thread_id}").json()["thread_metadata"]["archived"] is False


@pytest.mark.parametrize("duration", [60, 1440, 4320, 10080])
def test_a_thread_takes_each_auto_archive_duration_discord_offers(
    emulator: RunningEmulator, api: httpx.Client, duration: int
) -> None:
    thread_id = _thread_from_message(emulator, api)

    response = api.patch(f"/channels/{thread_id}", json={"auto_archive_duration": duration})

    assert response.json()["thread_metadata"]["auto_archive_duration"] == duration


def test_the_text_channel_is_a_guild_text_channel(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    channel = api.get(f"/channels/{emulator.channel_id}").json()

    assert channel["type"] == 0
    assert channel["name"] == "agents"
    assert channel["guild_id"] == emulator.guild_id


def test_the_text_channel_can_be_renamed(emulator: RunningEmulator, api: httpx.Client) -> None:
    renamed = api.patch(f"/channels/{emulator.channel_id}", json={"name": "builds"}).json()

    assert renamed["name"] == "builds"
    assert renamed["type"] == 0
