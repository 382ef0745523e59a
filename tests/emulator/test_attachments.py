"""Files on messages: multipart uploads, attachment objects, the URLs that serve the bytes,
Discord's limits and error codes, editing attachments, and files people post."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.emulator.interactions import (
    APPLICATION_COMMAND,
    MESSAGE_COMPONENT,
    InteractionDesk,
)
from discord_mcp.emulator.state import State
from discord_mcp.emulator.uploads import FILE_SIZE_MAX, Upload
from tests.emulator.conftest import bot_client, control_client
from tests.emulator.gateway_client import control, identified

MIB = 1024 * 1024
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
VOICE = 1 << 13


@pytest.fixture
def running(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.0001)


@pytest.fixture
def rest(running: RunningEmulator) -> Iterator[httpx.Client]:
    with bot_client(running) as client:
        yield client


@pytest.fixture
def people(running: RunningEmulator) -> Iterator[httpx.Client]:
    with control_client(running) as client:
        yield client


def _messages(running: RunningEmulator) -> str:
    return f"/channels/{running.channel_id}/messages"


def _send(
    rest: httpx.Client,
    url: str,
    payload: dict[str, Any] | None,
    files: list[tuple[str, bytes, str]],
    *,
    method: str = "POST",
) -> httpx.Response:
    """A multipart request as discord.py sends it: payload_json and files[n]."""
    data = {} if payload is None else {"payload_json": json.dumps(payload)}
    parts = {f"files[{i}]": file for i, file in enumerate(files)}
    return rest.request(method, url, data=data, files=parts)


def test_a_message_with_files_carries_discords_attachment_objects(
    running: RunningEmulator, rest: httpx.Client
) -> None:
    payload = {
        "content": "the logs",
        "attachments": [{"id": 0, "filename": "build.log", "description": "Build output"}],
    }
    response = _send(
        rest,
        _messages(running),
        payload,
        [("build.log", b"ok\n", "application/octet-stream"), ("shot.png", PNG, "image/png")],
    )

    assert response.status_code == 200, response.text
    log, shot = response.json()["attachments"]
    assert set(log) == {
        "id",
        "filename",
        "size",
        "url",
        "proxy_url",
        "content_type",
        "description",
    }
    assert (log["filename"], log["size"], log["description"]) == ("build.log", 3, "Build output")
    assert log["content_type"] == "text/plain; charset=utf-8"
    assert (shot["filename"], shot["size"], shot["content_type"]) == (
        "shot.png",
        len(PNG),
        "image/png",
    )
    assert log["id"] != shot["id"]
    assert log["url"].startswith(
        f"{running.base_url}/attachments/{running.channel_id}/{log['id']}/build.log?ex="
    )
    assert log["proxy_url"].startswith(f"{running.base_url}/media/attachments/")


def test_an_attachments_url_serves_exactly_its_bytes(
    running: RunningEmulator, rest: httpx.Client
) -> None:
    binary = bytes(range(256)) * 100 + b"\r\n--not-a-boundary\r\n"
    message = _send(
        rest, _messages(running), {}, [("blob.bin", binary, "application/octet-stream")]
    ).json()
    attachment = message["attachments"][0]

    direct = httpx.get(attachment["url"])
    proxied = httpx.get(attachment["proxy_url"])

    assert direct.status_code == 200
    assert direct.content == proxied.content == binary
    assert direct.headers["content-type"] == "application/octet-stream"


def test_a_file_name_keeps_its_letters_loses_its_spaces_and_still_serves(
    running: RunningEmulator, rest: httpx.Client
) -> None:
    message = _send(
        rest, _messages(running), {}, [("dir/résumé de bug.txt", b"x", "text/plain")]
    ).json()
    [attachment] = message["attachments"]

    assert attachment["filename"] == "résumé_de_bug.txt"
    assert httpx.get(attachment["url"]).content == b"x"


def test_an_unsigned_forged_or_deleted_attachment_url_is_gone(
    running: RunningEmulator, rest: httpx.Client
) -> None:
    message = _send(rest, _messages(running), {}, [("a.txt", b"secret", "text/plain")]).json()
    url = message["attachments"][0]["url"]
    unsigned = url.split("?", 1)[0]
    forged = url.replace("hm=", "hm=0")

    before = [httpx.get(u) for u in (unsigned, forged)]
    rest.delete(f"{_messages(running)}/{message['id']}")
    after = httpx.get(url)

    for response in (*before, after):
        assert response.status_code == 404
        assert response.text == "This content is no longer available."


def test_a_file_alone_is_not_an_empty_message(running: RunningEmulator, rest: httpx.Client) -> None:
    response = _send(rest, _messages(running), None, [("a.txt", b"hi", "text/plain")])

    assert response.status_code == 200, response.text
    assert response.json()["content"] == ""


def test_more_than_10_files_is_30015(running: RunningEmulator, rest: httpx.Client) -> None:
    files = [(f"{i}.txt", b"x", "text/plain") for i in range(11)]

    response = _send(rest, _messages(running), {"content": "many"}, files)

    assert response.status_code == 400
    assert response.json() == {
        "message": "Maximum number of attachments in a message reached (10)",
        "code": 30015,
    }


def test_a_file_over_10_mib_is_413_request_entity_too_large(
    running: RunningEmulator, rest: httpx.Client
) -> None:
    exactly = _send(rest, _messages(running), {}, [("ok.bin", bytes(FILE_SIZE_MAX), "a/b")])
    over = _send(rest, _messages(running), {}, [("big.bin", bytes(FILE_SIZE_MAX + 1), "a/b")])

    assert FILE_SIZE_MAX == 10 * MIB
    assert exactly.status_code == 200
    assert over.status_code == 413
    assert over.json() == {"message": "Request entity too large", "code": 40005}


def test_a_payload_json_that_is_not_json_is_50035(
    running: RunningEmulator, rest: httpx.Client
) -> None:
    response = rest.post(
        _messages(running),
        data={"payload_json": "{not json"},
        files={"files[0]": ("a.txt", b"x", "text/plain")},
    )

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == 50035
    assert "payload_json" in body["errors"]


def test_an_attachments_entry_for_no_file_is_50035(
    running: RunningEmulator, rest: httpx.Client
) -> None:
    payload = {"content": "x", "attachments": [{"id": 3, "filename": "missing.txt"}]}

    response = _send(rest, _messages(running), payload, [("a.txt", b"x", "text/plain")])

    assert response.status_code == 400
    errors = response.json()["errors"]
    assert errors["attachments"]["0"]["id"]["_errors"][0]["code"] == "ATTACHMENT_NOT_FOUND"


def test_files_need_attach_files(
    running: RunningEmulator, rest: httpx.Client, people: httpx.Client
) -> None:
    state = people.get("/state").json()
    people.post(f"/roles/{state['bot_role_id']}", json={"deny": ["ATTACH_FILES"]})

    with_file = _send(rest, _messages(running), {}, [("a.txt", b"x", "text/plain")])
    without = rest.post(_messages(running), json={"content": "text is fine"})

    assert (with_file.status_code, with_file.json()["code"]) == (403, 50013)
    assert without.status_code == 200


def test_an_edit_appends_files_and_an_attachments_list_keeps_only_what_it_names(
    running: RunningEmulator, rest: httpx.Client
) -> None:
    message = _send(
        rest, _messages(running), {}, [("a.txt", b"a", "text/plain"), ("b.txt", b"b", "text/plain")]
    ).json()
    url = f"{_messages(running)}/{message['id']}"
    first, second = (a["id"] for a in message["attachments"])

    appended = _send(
        rest, url, {"content": "more"}, [("c.txt", b"c", "text/plain")], method="PATCH"
    )
    kept = rest.patch(
        url, json={"attachments": [{"id": second, "description": "the second"}]}
    ).json()
    replaced = _send(
        rest,
        url,
        {"attachments": [{"id": 0, "filename": "d.txt"}]},
        [("d.txt", b"d", "text/plain")],
        method="PATCH",
    ).json()
    old_url = message["attachments"][0]["url"]

    assert [a["filename"] for a in appended.json()["attachments"]] == ["a.txt", "b.txt", "c.txt"]
    assert [(a["id"], a.get("description")) for a in kept["attachments"]] == [
        (second, "the second")
    ]
    assert [a["filename"] for a in replaced["attachments"]] == ["d.txt"]
    assert first not in {a["id"] for a in replaced["attachments"]}
    assert httpx.get(old_url).status_code == 404


def test_emptying_a_file_only_message_is_50006(
    running: RunningEmulator, rest: httpx.Client
) -> None:
    message = _send(rest, _messages(running), {}, [("a.txt", b"a", "text/plain")]).json()

    response = rest.patch(f"{_messages(running)}/{message['id']}", json={"attachments": []})

    assert (response.status_code, response.json()["code"]) == (400, 50006)


def test_a_person_posts_a_screenshot_that_rest_and_its_url_show(
    running: RunningEmulator, rest: httpx.Client, people: httpx.Client
) -> None:
    posted = people.post(
        f"/channels/{running.channel_id}/messages",
        json={
            "author_id": running.owner_user_id,
            "attachments": [
                {
                    "filename": "screen shot.png",
                    "content_type": "image/png",
                    "data_base64": base64.b64encode(PNG).decode(),
                    "description": "the error",
                }
            ],
        },
    )

    assert posted.status_code == 200, posted.text
    [listed] = rest.get(_messages(running)).json()
    [attachment] = listed["attachments"]
    assert listed["content"] == ""
    assert (attachment["filename"], attachment["description"]) == ("screen_shot.png", "the error")
    assert attachment["content_type"] == "image/png"
    assert httpx.get(attachment["url"]).content == PNG


def test_a_person_posts_a_voice_message(
    running: RunningEmulator, rest: httpx.Client, people: httpx.Client
) -> None:
    voice = {
        "filename": "voice-message.ogg",
        "content_type": "audio/ogg",
        "data_base64": base64.b64encode(b"OggS fake opus").decode(),
        "duration_secs": 2.5,
        "waveform": base64.b64encode(bytes(32)).decode(),
    }
    posted = people.post(
        f"/channels/{running.channel_id}/messages",
        json={"author_id": running.owner_user_id, "attachments": [voice], "voice_message": True},
    )

    assert posted.status_code == 200, posted.text
    message = rest.get(f"{_messages(running)}/{posted.json()['id']}").json()
    assert message["flags"] == VOICE
    [attachment] = message["attachments"]
    assert (attachment["duration_secs"], attachment["waveform"]) == (2.5, voice["waveform"])
    assert attachment["content_type"] == "audio/ogg"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"content": "hello"}, "50160"),
        ({"content_type": "image/png"}, "50160"),
        ({"duration_secs": None}, "50192"),
    ],
)
def test_a_voice_message_is_one_audio_file_with_a_duration_and_nothing_else(
    running: RunningEmulator, people: httpx.Client, change: dict[str, Any], words: str
) -> None:
    voice: dict[str, Any] = {
        "filename": "v.ogg",
        "content_type": "audio/ogg",
        "data_base64": base64.b64encode(b"x").decode(),
        "duration_secs": 1.0,
    }
    body: dict[str, Any] = {"author_id": running.owner_user_id, "voice_message": True}
    if "content" in change:
        body["content"] = change["content"]
    else:
        voice |= change
        voice = {k: v for k, v in voice.items() if v is not None}
    body["attachments"] = [voice]

    response = people.post(f"/channels/{running.channel_id}/messages", json=body)

    assert response.status_code == 400
    assert words in response.json()["error"]


@pytest.mark.parametrize(
    ("attachment", "words"),
    [
        ({"filename": "a.txt", "data_base64": "not base64!"}, "base64"),
        ({"data_base64": ""}, "filename"),
        ({"filename": "a.txt", "data_base64": "", "colour": "red"}, "colour"),
    ],
)
def test_a_person_cannot_post_a_broken_attachment(
    running: RunningEmulator, people: httpx.Client, attachment: dict[str, Any], words: str
) -> None:
    response = people.post(
        f"/channels/{running.channel_id}/messages",
        json={"author_id": running.owner_user_id, "attachments": [attachment]},
    )

    assert response.status_code == 400
    assert words in response.json()["error"]


def test_without_message_content_the_bot_reads_no_attachments(
    running: RunningEmulator, rest: httpx.Client, people: httpx.Client
) -> None:
    people.post(
        f"/channels/{running.channel_id}/messages",
        json={
            "author_id": running.owner_user_id,
            "attachments": [{"filename": "a.txt", "data_base64": base64.b64encode(b"a").decode()}],
        },
    )
    people.post("/faults", json={"message_content_intent_enabled": False})

    [message] = rest.get(_messages(running)).json()

    assert message["attachments"] == []


# -- interaction responses with files, on the desk -------------------------------------------


def test_followups_and_original_edits_take_files() -> None:
    state = State()
    desk = InteractionDesk(state)
    card, _ = state.create_message(
        state.channel.id,
        state.bot.id,
        {
            "content": "Deploy?",
            "components": [
                {
                    "type": 1,
                    "components": [{"type": 2, "style": 1, "label": "Yes", "custom_id": "yes"}],
                }
            ],
        },
    )
    interaction = desk.create(
        type_=MESSAGE_COMPONENT,
        user_id=state.owner.id,
        channel_id=state.channel.id,
        data={"custom_id": "yes", "component_type": 2},
        message_id=card.id,
    )
    log = Upload("0", "deploy.log", "text/plain", b"done\n")
    desk.callback(interaction.id, interaction.token, {"type": 5}, with_response=False)

    original = desk.edit_original(
        state.bot.id, interaction.token, {"content": "Done."}, uploads=[log]
    )
    followup = desk.followup(
        state.bot.id, interaction.token, {}, [Upload("0", "diff.patch", None, b"+x")]
    )

    assert [a["filename"] for a in original["attachments"]] == ["deploy.log"]
    assert [a["filename"] for a in followup["attachments"]] == ["diff.patch"]
    assert followup["attachments"][0]["content_type"] == "text/x-diff; charset=utf-8"
    assert state.files[followup["attachments"][0]["id"]].data == b"+x"


async def test_a_persons_file_reaches_the_bot_in_message_create(running: RunningEmulator) -> None:
    async with identified(running) as bot, control(running) as ctl:
        posted = await ctl.post(
            f"/channels/{running.channel_id}/messages",
            json={
                "author_id": running.owner_user_id,
                "content": "see this",
                "attachments": [
                    {"filename": "shot.png", "data_base64": base64.b64encode(PNG).decode()}
                ],
            },
        )
        created = (await bot.dispatch("MESSAGE_CREATE"))["d"]

    assert created["id"] == posted.json()["id"]
    [attachment] = created["attachments"]
    assert (attachment["filename"], attachment["size"]) == ("shot.png", len(PNG))
    async with httpx.AsyncClient() as client:
        assert (await client.get(attachment["url"])).content == PNG


def test_an_interaction_response_takes_files() -> None:
    state = State()
    desk = InteractionDesk(state)
    interaction = desk.create(
        type_=APPLICATION_COMMAND,
        user_id=state.owner.id,
        channel_id=state.channel.id,
        data={"id": "1", "name": "logs", "type": 1},
    )
    upload = Upload("0", "job.log", "text/plain", b"line\n")

    result = desk.callback(
        interaction.id,
        interaction.token,
        {"type": 4, "data": {"content": "The log", "attachments": [{"id": 0}]}},
        with_response=True,
        uploads=[upload],
    )

    assert result is not None
    [attachment] = result["resource"]["message"]["attachments"]
    assert (attachment["filename"], attachment["size"]) == ("job.log", 5)
