"""Slash commands end to end: a user runs a registered command through
``POST /_emulator/interactions``, the bot hears INTERACTION_CREATE on the gateway and answers
over REST, and the control API reports the answer (and checks what Discord's client would)."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator
from tests.emulator.gateway_client import GUILDS, GatewayClient, bot_api, control, identified

MakeEmulator = Callable[..., RunningEmulator]
EPHEMERAL = 64


def _option(kind: int, name: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "name": name, "description": f"The {name}"} | fields


START = {
    "name": "start",
    "description": "Start a run",
    "options": [
        _option(3, "project", required=True, autocomplete=True),
        _option(3, "prompt", required=True, max_length=50),
        _option(3, "tool", choices=[{"name": n, "value": n} for n in ("claude", "codex")]),
        _option(4, "budget", min_value=1, max_value=10),
        _option(5, "dry"),
        _option(6, "for"),
        _option(7, "where", channel_types=[0]),
        _option(8, "role"),
        _option(10, "ratio"),
        _option(11, "file"),
    ],
}
SESSION = {
    "name": "session",
    "description": "Sessions",
    "options": [
        {
            "type": 2,
            "name": "thread",
            "description": "Thread sessions",
            "options": [
                _option(1, "rename", options=[_option(3, "name", required=True)]),
                _option(1, "close"),
            ],
        },
        _option(1, "list"),
    ],
}
ADMIN = {"name": "admin", "description": "Owners only", "default_member_permissions": "8"}


@pytest.fixture
def running(make_emulator: MakeEmulator) -> RunningEmulator:
    return make_emulator(rate_limit_scale=0.0001)


async def _register(running: RunningEmulator, *commands: dict[str, Any]) -> list[dict[str, Any]]:
    async with bot_api(running) as api:
        response = await api.put(
            f"/applications/{running.application_id}/guilds/{running.guild_id}/commands",
            json=list(commands),
        )
    assert response.status_code == 200, response.text
    return list(response.json())


def _run(running: RunningEmulator, body: dict[str, Any]) -> asyncio.Task[httpx.Response]:
    """A user runs a command; the task ends once the bot answered (or the deadline passed)."""

    async def run() -> httpx.Response:
        async with control(running) as client:
            return await client.post("/interactions", json=body)

    return asyncio.create_task(run())


def _as_owner(running: RunningEmulator, command: str, **fields: Any) -> dict[str, Any]:
    return {
        "user_id": running.owner_user_id,
        "channel_id": running.channel_id,
        "command": command,
    } | fields


async def _answer(bot: GatewayClient, body: dict[str, Any], *, expect: int = 204) -> dict[str, Any]:
    """Read the next INTERACTION_CREATE and answer it with ``body``; returns the interaction."""
    interaction = (await bot.dispatch("INTERACTION_CREATE"))["d"]
    async with bot_api(bot.running) as api:
        response = await api.post(
            f"/interactions/{interaction['id']}/{interaction['token']}/callback", json=body
        )
    assert response.status_code == expect, response.text
    return dict(interaction)


async def _refused(running: RunningEmulator, body: dict[str, Any]) -> httpx.Response:
    async with control(running) as client:
        return await client.post("/interactions", json=body)


async def test_a_slash_command_reaches_the_bot_with_typed_resolved_options(
    running: RunningEmulator,
) -> None:
    [registered] = await _register(running, START)
    async with control(running) as ctl:
        friend = (await ctl.post("/users", json={"username": "friend"})).json()
        state = (await ctl.get("/state")).json()
    options = [
        {"name": "project", "value": "api"},
        {"name": "prompt", "value": "fix the tests"},
        {"name": "tool", "value": "codex"},
        {"name": "budget", "value": 3},
        {"name": "dry", "value": True},
        {"name": "for", "value": friend["id"]},
        {"name": "where", "value": running.channel_id},
        {"name": "role", "value": state["bot_role_id"]},
        {"name": "ratio", "value": 0.5},
    ]
    async with identified(running, GUILDS) as bot:
        run = _run(running, _as_owner(running, "start", options=options))
        interaction = await _answer(bot, {"type": 4, "data": {"content": "Queued.", "flags": 64}})
        report = (await run).json()
    async with control(running) as ctl:
        history = (await ctl.get(f"/channels/{running.channel_id}/messages")).json()

    data = interaction["data"]
    assert interaction["type"] == 2
    assert (data["id"], data["name"], data["type"]) == (registered["id"], "start", 1)
    assert data["guild_id"] == running.guild_id
    assert [(o["name"], o["type"], o["value"]) for o in data["options"]] == [
        ("project", 3, "api"),
        ("prompt", 3, "fix the tests"),
        ("tool", 3, "codex"),
        ("budget", 4, 3),
        ("dry", 5, True),
        ("for", 6, friend["id"]),
        ("where", 7, running.channel_id),
        ("role", 8, state["bot_role_id"]),
        ("ratio", 10, 0.5),
    ]
    resolved = data["resolved"]
    assert resolved["users"][friend["id"]]["username"] == "friend"
    assert "user" not in resolved["members"][friend["id"]]
    assert resolved["channels"][running.channel_id]["name"] == "agents"
    assert resolved["roles"][state["bot_role_id"]]["id"] == state["bot_role_id"]
    assert interaction["member"]["user"]["id"] == running.owner_user_id
    assert "message" not in interaction
    assert (report["type"], report["message_id"], report["choices"]) == (2, None, None)
    assert (report["response_type"], report["ephemeral"]) == (4, True)
    message = report["message"]
    assert (message["type"], message["content"]) == (20, "Queued.")
    assert message["interaction_metadata"]["id"] == interaction["id"]
    assert message["interaction_metadata"]["user"]["id"] == running.owner_user_id
    assert history == []


async def test_subcommands_and_groups_nest_in_the_interaction_data(
    running: RunningEmulator,
) -> None:
    await _register(running, SESSION)
    rename = [
        {
            "name": "thread",
            "options": [{"name": "rename", "options": [{"name": "name", "value": "x"}]}],
        }
    ]
    async with identified(running, GUILDS) as bot:
        run = _run(running, _as_owner(running, "session", options=rename))
        interaction = await _answer(bot, {"type": 4, "data": {"content": "Renamed."}})
        await run
        listing = _run(running, _as_owner(running, "session", options=[{"name": "list"}]))
        listed = await _answer(bot, {"type": 4, "data": {"content": "None."}})
        await listing

    assert interaction["data"]["options"] == [
        {
            "name": "thread",
            "type": 2,
            "options": [
                {
                    "name": "rename",
                    "type": 1,
                    "options": [{"name": "name", "type": 3, "value": "x"}],
                }
            ],
        }
    ]
    assert listed["data"]["options"] == [{"name": "list", "type": 1, "options": []}]


async def test_a_deferred_command_is_filled_in_and_followed_up_only_for_its_user(
    running: RunningEmulator,
) -> None:
    await _register(running, SESSION)
    async with identified(running, GUILDS) as bot, bot_api(running) as api:
        run = _run(running, _as_owner(running, "session", options=[{"name": "list"}]))
        interaction = await _answer(bot, {"type": 5, "data": {"flags": EPHEMERAL}})
        deferred = (await run).json()
        hook = f"/webhooks/{running.application_id}/{interaction['token']}"
        await api.patch(hook + "/messages/@original", json={"content": "Two sessions."})
        followup = await api.post(hook, json={"content": "Details.", "flags": EPHEMERAL})
    async with control(running) as ctl:
        report = (await ctl.get(f"/interactions/{deferred['interaction_id']}")).json()
        history = (await ctl.get(f"/channels/{running.channel_id}/messages")).json()

    assert deferred["response_type"] == 5
    assert deferred["message"]["flags"] == EPHEMERAL | 128
    assert report["message"]["content"] == "Two sessions."
    assert report["message"]["flags"] == EPHEMERAL
    assert report["message"]["type"] == 20
    assert followup.status_code == 200
    [details] = report["followups"]
    assert (details["content"], details["flags"]) == ("Details.", EPHEMERAL)
    assert (
        details["interaction_metadata"]["original_response_message_id"] == (report["message"]["id"])
    )
    assert history == []


async def test_autocomplete_sends_the_focused_option_and_reports_the_bots_choices(
    running: RunningEmulator,
) -> None:
    await _register(running, START)
    choices = [{"name": "api (~/src/api)", "value": "api"}, {"name": "app", "value": "app"}]
    typing = _as_owner(
        running,
        "start",
        options=[{"name": "prompt", "value": "go"}, {"name": "project", "value": "ap"}],
        focused="project",
    )
    async with identified(running, GUILDS) as bot:
        run = _run(running, typing)
        interaction = await _answer(bot, {"type": 8, "data": {"choices": choices}})
        report = (await run).json()
        empty = _run(running, _as_owner(running, "start", focused="project"))
        started = await _answer(bot, {"type": 8, "data": {"choices": []}})
        await empty

    assert interaction["type"] == 4
    assert interaction["data"]["options"] == [
        {"name": "prompt", "type": 3, "value": "go"},
        {"name": "project", "type": 3, "value": "ap", "focused": True},
    ]
    assert (report["type"], report["response_type"], report["choices"]) == (4, 8, choices)
    assert report["message"] is None
    assert started["data"]["options"] == [
        {"name": "project", "type": 3, "value": "", "focused": True}
    ]


async def _callback(bot: GatewayClient, interaction: dict[str, Any], body: Any) -> httpx.Response:
    async with bot_api(bot.running) as api:
        return await api.post(
            f"/interactions/{interaction['id']}/{interaction['token']}/callback", json=body
        )


@pytest.mark.parametrize(
    "refused",
    [
        {"type": 4, "data": {"content": "no"}},
        {"type": 8, "data": {"choices": [{"name": str(i), "value": str(i)} for i in range(26)]}},
        {"type": 8, "data": {"choices": [{"name": "n", "value": 5}]}},
        {"type": 9, "data": {"custom_id": "m", "title": "M", "components": []}},
    ],
)
async def test_an_autocomplete_is_answered_only_by_up_to_25_typed_choices(
    running: RunningEmulator, refused: dict[str, Any]
) -> None:
    await _register(running, START)
    async with identified(running, GUILDS) as bot:
        run = _run(running, _as_owner(running, "start", focused="project"))
        interaction = (await bot.dispatch("INTERACTION_CREATE"))["d"]
        refusal = await _callback(bot, interaction, refused)
        accepted = await _callback(bot, interaction, {"type": 8, "data": {"choices": []}})
        report = (await run).json()

    assert (refusal.status_code, refusal.json()["code"]) == (400, 50035)
    assert accepted.status_code == 204
    assert (report["response_type"], report["choices"]) == (8, [])


async def test_a_command_is_not_answered_with_choices(running: RunningEmulator) -> None:
    await _register(running, SESSION)
    async with identified(running, GUILDS) as bot:
        run = _run(running, _as_owner(running, "session", options=[{"name": "list"}]))
        interaction = (await bot.dispatch("INTERACTION_CREATE"))["d"]
        refusal = await _callback(bot, interaction, {"type": 8, "data": {"choices": []}})
        await _callback(bot, interaction, {"type": 4, "data": {"content": "None."}})
        await run

    assert (refusal.status_code, refusal.json()["code"]) == (400, 50035)


async def test_an_unknown_command_is_404(running: RunningEmulator) -> None:
    response = await _refused(running, _as_owner(running, "nope"))

    assert response.status_code == 404
    assert "nope" in response.json()["error"]


@pytest.mark.parametrize(
    ("options", "focused", "words"),
    [
        ([], None, "required option(s) ['project', 'prompt']"),
        ([{"name": "project", "value": "a"}], None, "required option(s) ['prompt']"),
        ([{"name": "nope", "value": 1}], None, "has no option(s) ['nope']"),
        ([{"name": "budget", "value": "3"}], None, "takes an integer"),
        ([{"name": "budget", "value": 11}], None, "within 1..10"),
        ([{"name": "dry", "value": 1}], None, "takes true or false"),
        ([{"name": "tool", "value": "gemini"}], None, "one of its choices"),
        ([{"name": "prompt", "value": "x" * 51}], None, "0 to 50 characters"),
        ([{"name": "for", "value": "123"}], None, "a user id that exists"),
        ([{"name": "file", "value": "x"}], None, "data_base64"),
        ([], "tool", "has no autocomplete"),
        ([], "nothing", "has no option 'nothing'"),
    ],
)
async def test_a_command_the_discord_client_would_not_send_is_400(
    running: RunningEmulator, options: list[dict[str, Any]], focused: str | None, words: str
) -> None:
    await _register(running, START)
    body = _as_owner(running, "start", options=options)
    if focused is not None:
        body["focused"] = focused

    response = await _refused(running, body)

    assert response.status_code == 400
    assert words in response.json()["error"]


async def test_a_command_with_subcommands_needs_exactly_one(running: RunningEmulator) -> None:
    await _register(running, SESSION)

    bare = await _refused(running, _as_owner(running, "session"))
    both = await _refused(
        running, _as_owner(running, "session", options=[{"name": "list"}, {"name": "thread"}])
    )

    for response in (bare, both):
        assert response.status_code == 400
        assert "exactly one of its subcommands" in response.json()["error"]


@pytest.mark.parametrize("needed", ["8", "0"])
async def test_default_member_permissions_keep_a_command_from_members_without_them(
    running: RunningEmulator, needed: str
) -> None:
    await _register(running, ADMIN | {"default_member_permissions": needed})
    async with control(running) as ctl:
        stranger = (await ctl.post("/users", json={"username": "stranger"})).json()

    refused = await _refused(
        running,
        {"user_id": stranger["id"], "channel_id": running.channel_id, "command": "admin"},
    )
    async with identified(running, GUILDS) as bot:
        run = _run(running, _as_owner(running, "admin"))
        await _answer(bot, {"type": 4, "data": {"content": "ok"}})
        allowed = await run

    assert refused.status_code == 400
    assert f"default_member_permissions {needed}" in refused.json()["error"]
    assert allowed.json()["response_type"] == 4


async def test_an_attachment_option_is_resolved_with_a_url_that_serves_it(
    running: RunningEmulator,
) -> None:
    await _register(running, START)
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    options = [
        {"name": "project", "value": "api"},
        {"name": "prompt", "value": "see the screenshot"},
        {
            "name": "file",
            "value": {"filename": "shot.png", "data_base64": base64.b64encode(png).decode()},
        },
    ]
    async with identified(running, GUILDS) as bot:
        run = _run(running, _as_owner(running, "start", options=options))
        interaction = await _answer(bot, {"type": 4, "data": {"content": "Got it."}})
        await run
    attachment_id = interaction["data"]["options"][2]["value"]
    attachment = interaction["data"]["resolved"]["attachments"][attachment_id]
    async with httpx.AsyncClient() as client:
        served = await client.get(attachment["url"])

    assert (attachment["filename"], attachment["size"]) == ("shot.png", len(png))
    assert attachment["content_type"] == "image/png"
    assert attachment["ephemeral"] is True
    assert served.content == png
    assert served.headers["content-type"] == "image/png"


async def test_the_control_api_lists_every_registered_command(running: RunningEmulator) -> None:
    guild = await _register(running, START, SESSION)
    async with bot_api(running) as api:
        created = await api.post(
            f"/applications/{running.application_id}/commands",
            json={"name": "help", "description": "Help"},
        )
    async with control(running) as ctl:
        listed = (await ctl.get("/commands")).json()

    assert [c["name"] for c in listed] == ["help", "start", "session"]
    assert listed[0] == created.json()
    assert listed[1:] == guild
