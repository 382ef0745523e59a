"""Registering application commands over REST: Discord's endpoints, upserts, versions and
validation errors (every exchange is judged by the OpenAPI spec too)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from discord_mcp.emulator import RunningEmulator


def _global(running: RunningEmulator) -> str:
    return f"/applications/{running.application_id}/commands"


def _guild(running: RunningEmulator) -> str:
    return f"/applications/{running.application_id}/guilds/{running.guild_id}/commands"


def _command(name: str = "status", **fields: Any) -> dict[str, Any]:
    return {"name": name, "description": f"The {name} command"} | fields


def _string(name: str, **fields: Any) -> dict[str, Any]:
    return {"type": 3, "name": name, "description": f"The {name}"} | fields


PROJECT = _command(
    "project",
    options=[
        {
            "type": 1,
            "name": "add",
            "description": "Add a project",
            "options": [_string("path", required=True), _string("name")],
        },
        {"type": 1, "name": "list", "description": "List projects"},
    ],
)


def _field_errors(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    body = response.json()
    assert (body["code"], body["message"]) == (50035, "Invalid Form Body")
    return dict(body["errors"])


def _codes(node: Any) -> list[str]:
    """Every field error code in an error tree."""
    if isinstance(node, dict):
        found = [e["code"] for e in node.get("_errors", [])]
        return found + [c for k, v in node.items() if k != "_errors" for c in _codes(v)]
    return []


def test_a_bulk_overwrite_registers_guild_commands_as_discord_returns_them(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = api.put(_guild(emulator), json=[PROJECT, _command("status")])
    listed = api.get(_guild(emulator)).json()

    assert response.status_code == 200, response.text
    created = response.json()
    assert [c["name"] for c in created] == ["project", "status"]
    first = created[0]
    assert first["application_id"] == emulator.application_id
    assert first["guild_id"] == emulator.guild_id
    assert (first["type"], first["default_member_permissions"]) == (1, None)
    assert first["options"][0]["options"][0] == {
        "type": 3,
        "name": "path",
        "description": "The path",
        "required": True,
    }
    assert listed == created
    assert api.get(_global(emulator)).json() == []


def test_an_identical_overwrite_keeps_ids_and_versions_and_a_change_bumps_one_version(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    first = api.put(_guild(emulator), json=[PROJECT, _command("status")]).json()
    same = api.put(_guild(emulator), json=[PROJECT, _command("status")]).json()
    changed = api.put(
        _guild(emulator), json=[PROJECT, _command("status", description="Show the status")]
    ).json()

    assert [(c["id"], c["version"]) for c in same] == [(c["id"], c["version"]) for c in first]
    assert [c["id"] for c in changed] == [c["id"] for c in first]
    assert changed[0]["version"] == first[0]["version"]
    assert changed[1]["version"] != first[1]["version"]


def test_an_overwrite_deletes_the_commands_it_does_not_name(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    api.put(_guild(emulator), json=[PROJECT, _command("status")])

    left = api.put(_guild(emulator), json=[_command("status")]).json()

    assert [c["name"] for c in api.get(_guild(emulator)).json()] == ["status"]
    assert [c["name"] for c in left] == ["status"]


def test_creating_a_command_twice_by_name_is_an_upsert(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    created = api.post(_global(emulator), json=_command("status"))
    again = api.post(_global(emulator), json=_command("status", description="New words"))

    assert created.status_code == 201
    assert again.status_code == 200
    assert again.json()["id"] == created.json()["id"]
    assert again.json()["description"] == "New words"
    assert created.json()["dm_permission"] is True
    assert "guild_id" not in created.json()
    assert len(api.get(_global(emulator)).json()) == 1


def test_a_global_and_a_guild_command_may_share_a_name(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    api.post(_global(emulator), json=_command("status"))
    api.post(_guild(emulator), json=_command("status"))

    registered = control.get("/commands").json()

    assert [(c["name"], c.get("guild_id")) for c in registered] == [
        ("status", None),
        ("status", emulator.guild_id),
    ]


def test_a_command_is_read_edited_and_deleted_by_id(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    command = api.post(_guild(emulator), json=_command("status")).json()
    url = f"{_guild(emulator)}/{command['id']}"

    read = api.get(url).json()
    edited = api.patch(url, json={"description": "Edited", "default_member_permissions": "8"})
    deleted = api.delete(url)
    gone = api.get(url)

    assert read == command
    assert edited.status_code == 200
    assert (edited.json()["description"], edited.json()["name"]) == ("Edited", "status")
    assert edited.json()["default_member_permissions"] == "8"
    assert edited.json()["version"] != command["version"]
    assert deleted.status_code == 204
    assert gone.status_code == 404
    assert gone.json() == {"message": "Unknown application command", "code": 10063}


def test_renaming_a_command_to_a_taken_name_is_40041(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    api.post(_guild(emulator), json=_command("status"))
    other = api.post(_guild(emulator), json=_command("stop")).json()

    response = api.patch(f"{_guild(emulator)}/{other['id']}", json={"name": "status"})

    assert response.status_code == 400
    assert response.json()["code"] == 40041


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("status", True),
        ("set-model_2", True),
        ("café", True),
        ("日本語", True),
        ("it's", True),
        ("Status", False),
        ("two words", False),
        ("emoji😀", False),
    ],
)
def test_chat_command_names_follow_discords_rule(
    emulator: RunningEmulator, api: httpx.Client, name: str, valid: bool
) -> None:
    response = api.post(_guild(emulator), json=_command(name))

    if valid:
        assert response.status_code == 201, response.text
    else:
        assert _field_errors(response) == {
            "name": {
                "_errors": [
                    {
                        "code": "APPLICATION_COMMAND_INVALID_NAME",
                        "message": "Command name is invalid",
                    }
                ]
            }
        }


def test_user_and_message_commands_may_use_capitals_and_spaces(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    response = api.post(_guild(emulator), json={"name": "Ask the agent", "type": 3})

    assert response.status_code == 201, response.text
    assert (response.json()["type"], response.json()["description"]) == (3, "")


@pytest.mark.parametrize(
    ("body", "path", "code"),
    [
        (_command("status", description=""), ("description",), "BASE_TYPE_BAD_LENGTH"),
        (_command("status", description="x" * 101), ("description",), "BASE_TYPE_BAD_LENGTH"),
        (_command("x" * 33), ("name",), "BASE_TYPE_BAD_LENGTH"),
        (
            _command("status", options=[_string(f"o{i}") for i in range(26)]),
            ("options",),
            "BASE_TYPE_MAX_LENGTH",
        ),
        (
            _command("status", options=[{"type": 12, "name": "x", "description": "x"}]),
            ("options", "0", "type"),
            "BASE_TYPE_CHOICES",
        ),
        (
            _command("status", options=[_string("a"), _string("b", required=True)]),
            ("options", "1"),
            "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
        ),
        (
            _command("status", options=[_string("a"), _string("a")]),
            ("options", "1", "name"),
            "APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS",
        ),
        (
            _command(
                "status",
                options=[{"type": 1, "name": "sub", "description": "s"}, _string("a")],
            ),
            ("options",),
            "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
        ),
        (
            _command(
                "status",
                options=[
                    {
                        "type": 2,
                        "name": "group",
                        "description": "g",
                        "options": [{"type": 2, "name": "inner", "description": "i"}],
                    }
                ],
            ),
            ("options", "0", "options"),
            "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
        ),
        (
            _command(
                "status",
                options=[
                    _string("a", choices=[{"name": f"c{i}", "value": f"{i}"} for i in range(26)])
                ],
            ),
            ("options", "0", "choices"),
            "BASE_TYPE_MAX_LENGTH",
        ),
        (
            _command(
                "status",
                options=[_string("a", autocomplete=True, choices=[{"name": "x", "value": "x"}])],
            ),
            ("options", "0", "autocomplete"),
            "APPLICATION_COMMAND_OPTION_AUTOCOMPLETE_WITH_CHOICES",
        ),
        (
            _command(
                "status",
                options=[
                    {
                        "type": 4,
                        "name": "n",
                        "description": "n",
                        "choices": [{"name": "one", "value": "1"}],
                    }
                ],
            ),
            ("options", "0", "choices", "0", "value"),
            "APPLICATION_COMMAND_OPTION_CHOICE_VALUE_INVALID",
        ),
    ],
)
def test_a_command_breaking_a_rule_is_50035_at_the_field(
    emulator: RunningEmulator,
    api: httpx.Client,
    body: dict[str, Any],
    path: tuple[str, ...],
    code: str,
) -> None:
    errors = _field_errors(api.post(_guild(emulator), json=body))

    node: Any = errors
    for key in path:
        node = node[key]
    assert code in [e["code"] for e in node["_errors"]]


def test_a_command_over_8000_characters_is_too_large(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    options = [
        _string(f"o{i}", choices=[{"name": "c" * 100, "value": f"{i}-{j}"} for j in range(25)])
        for i in range(4)
    ]

    errors = _field_errors(api.post(_guild(emulator), json=_command("big", options=options)))

    assert errors["_errors"][0] == {
        "code": "APPLICATION_COMMAND_TOO_LARGE",
        "message": "Command exceeds maximum size (8000)",
    }


def test_a_bulk_overwrite_with_a_duplicate_name_is_refused_whole(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    api.put(_guild(emulator), json=[_command("status")])

    errors = _field_errors(
        api.put(_guild(emulator), json=[_command("stop"), _command("status"), _command("stop")])
    )

    assert _codes(errors) == ["APPLICATION_COMMANDS_DUPLICATE_NAME"]
    assert list(errors) == ["2"]
    assert [c["name"] for c in api.get(_guild(emulator)).json()] == ["status"]


def test_errors_in_a_bulk_body_are_keyed_by_the_commands_index(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    errors = _field_errors(
        api.put(_guild(emulator), json=[_command("ok"), _command("Bad"), _command("fine")])
    )

    assert list(errors) == ["1"]
    assert _codes(errors) == ["APPLICATION_COMMAND_INVALID_NAME"]


def test_more_than_100_chat_commands_is_30032(emulator: RunningEmulator, api: httpx.Client) -> None:
    hundred = [_command(f"c{i}") for i in range(100)]

    full = api.put(_guild(emulator), json=hundred)
    one_more = api.post(_guild(emulator), json=_command("extra"))
    too_many = api.put(_guild(emulator), json=[*hundred, _command("extra")])

    assert full.status_code == 200
    for response in (one_more, too_many):
        assert response.status_code == 400
        assert response.json()["code"] == 30032


def test_permissions_and_contexts_are_kept_as_discord_shows_them(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    body = _command("status", default_member_permissions=8, contexts=[0], dm_permission=False)

    command = api.post(_global(emulator), json=body).json()

    assert command["default_member_permissions"] == "8"
    assert command["contexts"] == [0]
    assert command["dm_permission"] is False
    assert command["integration_types"] == [0]


def test_a_guild_commands_contexts_are_ignored_as_discord_does(
    emulator: RunningEmulator, api: httpx.Client
) -> None:
    # Only global commands take contexts; Discord keeps none for a guild's.
    body = _command("status", contexts=[0, 1])

    created = api.post(_guild(emulator), json=body).json()
    again = api.put(_guild(emulator), json=[_command("status")]).json()

    assert created["contexts"] is None
    assert again[0]["contexts"] is None
    assert again[0]["version"] == created["version"]  # nothing that counts changed


def test_another_applications_commands_are_out_of_reach(
    emulator: RunningEmulator, api: httpx.Client, control: httpx.Client
) -> None:
    other = api.get("/applications/1234/commands")
    control.post(f"/members/{emulator.bot_user_id}", json={"in_guild": False})
    left = api.get(_guild(emulator))

    assert (other.status_code, other.json()["code"]) == (403, 50001)
    assert (left.status_code, left.json()["code"]) == (403, 50001)
