"""Live interactions: a user clicks through ``POST /_emulator/interactions``, the bot hears it
on the gateway and answers over REST, and the control API reports the answer."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from tests.emulator.gateway_client import (
    GUILDS,
    OUR_INTENTS,
    GatewayClient,
    bot_api,
    control,
    identified,
    stats,
)

MakeEmulator = Callable[..., RunningEmulator]
EPHEMERAL = 64
BUTTONS = {
    "type": 1,
    "components": [
        {"type": 2, "style": 3, "label": "Approve", "custom_id": "approve"},
        {"type": 2, "style": 4, "label": "Reject", "custom_id": "reject", "disabled": True},
        {"type": 2, "style": 5, "label": "Docs", "url": "https://example.com"},
    ],
}
SELECT = {
    "type": 1,
    "components": [
        {
            "type": 3,
            "custom_id": "pick",
            "max_values": 2,
            "options": [{"label": n, "value": n} for n in ("a", "b", "c")],
        }
    ],
}
MODAL = {
    "custom_id": "why",
    "title": "Why?",
    "components": [
        {
            "type": 18,
            "label": "Reason",
            "component": {"type": 4, "custom_id": "reason", "style": 2, "max_length": 20},
        },
        {
            "type": 18,
            "label": "Note",
            "component": {"type": 4, "custom_id": "note", "style": 1, "required": False},
        },
    ],
}


@pytest.fixture
def running(make_emulator: MakeEmulator) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.0001)


async def _card(running: RunningEmulator, *rows: dict[str, Any]) -> dict[str, Any]:
    async with bot_api(running) as api:
        response = await api.post(
            f"/channels/{running.channel_id}/messages",
            json={"content": "Deploy?", "components": list(rows)},
        )
    assert response.status_code == 200, response.text
    return dict(response.json())


def _click(running: RunningEmulator, body: dict[str, Any]) -> asyncio.Task[httpx.Response]:
    """Start a click; it answers once the bot has (or the deadline has passed)."""

    async def click() -> httpx.Response:
        async with control(running) as client:
            return await client.post("/interactions", json=body)

    return asyncio.create_task(click())


async def _callback(
    client: GatewayClient, body: dict[str, Any], *, query: str = ""
) -> dict[str, Any]:
    """Read the next INTERACTION_CREATE and answer it with ``body``; returns the interaction."""
    interaction = (await client.dispatch("INTERACTION_CREATE"))["d"]
    async with bot_api(client.running) as api:
        response = await api.post(
            f"/interactions/{interaction['id']}/{interaction['token']}/callback{query}", json=body
        )
    assert response.status_code in (200, 204), response.text
    return dict(interaction)


async def test_a_button_click_reaches_the_bot_and_its_ephemeral_refusal_the_control_api(
    running: RunningEmulator,
) -> None:
    async with control(running) as ctl:
        user = (await ctl.post("/users", json={"username": "intruder"})).json()
    card = await _card(running, BUTTONS)
    async with identified(running) as bot:
        click = _click(
            running, {"user_id": user["id"], "message_id": card["id"], "custom_id": "approve"}
        )
        refusal = {"type": 4, "data": {"content": "Only the owner may answer.", "flags": 64}}
        interaction = await _callback(bot, refusal)
        answer = (await click).json()
        # The ephemeral reply is no MESSAGE_CREATE for the bot: the next dispatch is the edit.
        async with bot_api(running) as api:
            await api.patch(
                f"/channels/{running.channel_id}/messages/{card['id']}", json={"content": "x"}
            )
        barrier = await bot.dispatch()
    async with control(running) as ctl:
        history = (await ctl.get(f"/channels/{running.channel_id}/messages")).json()
        report = (await ctl.get(f"/interactions/{answer['interaction_id']}")).json()

    assert interaction["type"] == 3
    assert interaction["data"] == {"custom_id": "approve", "component_type": 2, "id": 2}
    assert interaction["message"]["id"] == card["id"]
    assert interaction["member"]["user"]["id"] == user["id"]
    assert interaction["channel_id"] == interaction["channel"]["id"] == running.channel_id
    assert interaction["guild_id"] == running.guild_id
    assert interaction["application_id"] == running.application_id
    assert interaction["version"] == 1
    for key in ("app_permissions", "locale", "entitlements", "authorizing_integration_owners"):
        assert key in interaction
    assert (interaction["context"], interaction["attachment_size_limit"]) == (0, 10_485_760)
    assert answer["acknowledged"] is True
    assert answer["response_type"] == 4
    assert answer["response"] == refusal
    assert answer["ephemeral"] is True
    assert answer["message"]["content"] == "Only the owner may answer."
    assert answer["delivered"] == 1
    assert barrier["t"] == "MESSAGE_UPDATE"
    assert [m["id"] for m in history] == [card["id"]]
    assert report["message"]["flags"] & EPHEMERAL
    assert "delivered" not in report


async def test_a_select_sends_its_values(running: RunningEmulator) -> None:
    card = await _card(running, SELECT)
    async with identified(running, GUILDS) as bot:
        click = _click(
            running,
            {
                "user_id": running.owner_user_id,
                "message_id": card["id"],
                "custom_id": "pick",
                "values": ["c", "a"],
            },
        )
        interaction = await _callback(bot, {"type": 6})
        answer = (await click).json()

    assert interaction["data"]["component_type"] == 3
    assert interaction["data"]["values"] == ["c", "a"]
    assert (answer["acknowledged"], answer["response_type"], answer["ephemeral"]) == (
        True,
        6,
        False,
    )
    assert answer["message"]["id"] == card["id"]


async def test_update_message_edits_the_clicked_card_and_dispatches_the_update(
    running: RunningEmulator,
) -> None:
    card = await _card(running, BUTTONS)
    async with identified(running) as bot:
        click = _click(
            running,
            {"user_id": running.owner_user_id, "message_id": card["id"], "custom_id": "approve"},
        )
        update = {"type": 7, "data": {"content": "Deploy? Approved.", "components": []}}
        await _callback(bot, update, query="?with_response=true")
        answer = (await click).json()
        updated = (await bot.dispatch("MESSAGE_UPDATE"))["d"]

    assert answer["response_type"] == 7
    assert answer["message"]["content"] == "Deploy? Approved."
    assert updated["id"] == card["id"]
    assert updated["components"] == []


async def test_a_deferred_reply_is_filled_in_and_followed_up_later(
    running: RunningEmulator,
) -> None:
    card = await _card(running, BUTTONS)
    async with identified(running, GUILDS) as bot, bot_api(running) as api:
        click = _click(
            running,
            {"user_id": running.owner_user_id, "message_id": card["id"], "custom_id": "approve"},
        )
        interaction = await _callback(bot, {"type": 5})
        answer = (await click).json()
        hook = f"/webhooks/{running.application_id}/{interaction['token']}"
        await api.patch(hook + "/messages/@original", json={"content": "Deployed."})
        followup = (await api.post(hook, json={"content": "Logs attached."})).json()
        original = (await api.get(hook + "/messages/@original")).json()
        edited = await api.patch(f"{hook}/messages/{followup['id']}", json={"content": "Logs."})
    async with control(running) as ctl:
        report = (await ctl.get(f"/interactions/{answer['interaction_id']}")).json()

    assert answer["response_type"] == 5
    assert answer["message"]["flags"] & 128  # LOADING until the original response is edited
    assert original["content"] == "Deployed."
    assert edited.json()["content"] == "Logs."
    assert report["message"]["content"] == "Deployed."
    assert [m["content"] for m in report["followups"]] == ["Logs."]


async def test_a_missed_deadline_fails_the_interaction_and_a_late_callback_is_10062(
    make_emulator: MakeEmulator,
) -> None:
    running = make_emulator(rate_limit_scale=0.0001, interaction_deadline=0.2)
    card = await _card(running, BUTTONS)
    async with identified(running, GUILDS) as bot:
        answer = (
            await _click(
                running,
                {
                    "user_id": running.owner_user_id,
                    "message_id": card["id"],
                    "custom_id": "approve",
                },
            )
        ).json()
        interaction = (await bot.dispatch("INTERACTION_CREATE"))["d"]
        async with bot_api(running) as api:
            late = await api.post(
                f"/interactions/{interaction['id']}/{interaction['token']}/callback",
                json={"type": 6},
            )

    assert (answer["acknowledged"], answer["response_type"], answer["expired"]) == (
        False,
        None,
        True,
    )
    assert late.status_code == 404
    assert late.json()["code"] == 10062
    assert (await stats(running))["interactions_failed"] == 1


async def test_a_click_with_no_gateway_session_goes_unanswered(make_emulator: MakeEmulator) -> None:
    running = make_emulator(rate_limit_scale=0.0001, interaction_deadline=0.05)
    card = await _card(running, BUTTONS)

    answer = (
        await _click(
            running,
            {"user_id": running.owner_user_id, "message_id": card["id"], "custom_id": "approve"},
        )
    ).json()

    assert (answer["delivered"], answer["acknowledged"]) == (0, False)


async def test_a_modal_opens_and_its_submit_reaches_the_bot(running: RunningEmulator) -> None:
    card = await _card(running, BUTTONS)
    async with identified(running, GUILDS) as bot:
        click = _click(
            running,
            {"user_id": running.owner_user_id, "message_id": card["id"], "custom_id": "approve"},
        )
        await _callback(bot, {"type": 9, "data": MODAL})
        opened = (await click).json()
        submit = _click(
            running,
            {
                "user_id": running.owner_user_id,
                "message_id": card["id"],
                "custom_id": "approve",
                "modal": {"custom_id": "why", "values": {"reason": "tests pass"}},
            },
        )
        submitted = await _callback(bot, {"type": 4, "data": {"content": "Thanks"}})
        answer = (await submit).json()
        async with control(running) as ctl:
            again = await ctl.post(
                "/interactions",
                json={
                    "user_id": running.owner_user_id,
                    "message_id": card["id"],
                    "modal": {"custom_id": "why", "values": {"reason": "twice"}},
                },
            )

    assert opened["response_type"] == 9
    assert opened["modal"]["custom_id"] == "why"
    assert submitted["type"] == 5
    assert submitted["message"]["id"] == card["id"]
    assert submitted["data"] == {
        "custom_id": "why",
        "components": [
            {
                "type": 18,
                "id": 1,
                "component": {"type": 4, "id": 2, "custom_id": "reason", "value": "tests pass"},
            },
            {
                "type": 18,
                "id": 3,
                "component": {"type": 4, "id": 4, "custom_id": "note", "value": ""},
            },
        ],
    }
    assert answer["type"] == 5
    assert answer["response_type"] == 4
    assert answer["message"]["content"] == "Thanks"
    assert again.status_code == 400
    assert "no open modal" in again.json()["error"]


@pytest.mark.parametrize(
    ("values", "complaint"),
    [
        ({"reason": "x" * 21}, "0 to 20 characters"),
        ({}, "'reason' is required"),
        ({"reason": "ok", "other": "x"}, "no input(s) ['other']"),
    ],
)
async def test_a_modal_submit_is_checked_as_discords_client_would(
    running: RunningEmulator, values: dict[str, str], complaint: str
) -> None:
    card = await _card(running, BUTTONS)
    async with identified(running, GUILDS) as bot:
        click = _click(
            running,
            {"user_id": running.owner_user_id, "message_id": card["id"], "custom_id": "approve"},
        )
        await _callback(bot, {"type": 9, "data": MODAL})
        await click
        async with control(running) as ctl:
            response = await ctl.post(
                "/interactions",
                json={
                    "user_id": running.owner_user_id,
                    "message_id": card["id"],
                    "modal": {"custom_id": "why", "values": values},
                },
            )

    assert response.status_code == 400
    assert complaint in response.json()["error"]


@pytest.mark.parametrize(
    ("body", "complaint"),
    [
        ({"custom_id": "nope"}, "no component with custom_id 'nope'"),
        ({"custom_id": "reject"}, "disabled"),
        ({"custom_id": "approve", "values": ["a"]}, "a button takes no 'values'"),
        ({"custom_id": "pick"}, "list of option values"),
        ({"custom_id": "pick", "values": ["z"]}, "not options of this select"),
        ({"custom_id": "pick", "values": ["a", "b", "c"]}, "1 to 2 different values"),
        ({"modal": {"custom_id": "why", "values": {}}}, "no open modal"),
        ({}, "missing field(s) ['custom_id']"),
    ],
)
async def test_a_click_the_discord_client_could_not_make_is_400(
    running: RunningEmulator, body: dict[str, Any], complaint: str
) -> None:
    card = await _card(running, BUTTONS, SELECT)

    async with control(running) as ctl:
        response = await ctl.post(
            "/interactions",
            json={"user_id": running.owner_user_id, "message_id": card["id"], **body},
        )
        unknown = await ctl.get("/interactions/123")

    assert response.status_code == 400
    assert complaint in response.json()["error"]
    assert unknown.status_code == 400


async def test_a_link_button_sends_no_interaction(running: RunningEmulator) -> None:
    row = {"type": 1, "components": [{"type": 2, "style": 5, "label": "D", "url": "https://x.y"}]}
    card = await _card(running, row, BUTTONS)
    link = next(c for r in card["components"] for c in r["components"] if c.get("style") == 5)

    async with control(running) as ctl:
        response = await ctl.post(
            "/interactions",
            json={"user_id": running.owner_user_id, "message_id": card["id"], "custom_id": "x"},
        )

    assert "url" in link
    assert response.status_code == 400


async def test_only_the_intended_user_can_click_an_ephemeral_message(
    running: RunningEmulator,
) -> None:
    card = await _card(running, BUTTONS)
    async with identified(running, OUR_INTENTS) as bot:
        click = _click(
            running,
            {"user_id": running.owner_user_id, "message_id": card["id"], "custom_id": "approve"},
        )
        private = {"type": 4, "data": {"content": "Sure?", "flags": 64, "components": [BUTTONS]}}
        await _callback(bot, private)
        ephemeral = (await click).json()["message"]
        async with control(running) as ctl:
            other = (await ctl.post("/users", json={"username": "other"})).json()
            refused = await ctl.post(
                "/interactions",
                json={
                    "user_id": other["id"],
                    "message_id": ephemeral["id"],
                    "custom_id": "approve",
                },
            )
        mine = _click(
            running,
            {
                "user_id": running.owner_user_id,
                "message_id": ephemeral["id"],
                "custom_id": "approve",
            },
        )
        interaction = await _callback(bot, {"type": 6})
        await mine

    assert refused.status_code == 400
    assert "ephemeral" in refused.json()["error"]
    assert interaction["message"]["id"] == ephemeral["id"]
