"""The command table: the ``!`` parser reads what the owner types the way the slash command
would have it, and a registered set is recognised as ours despite Discord's own additions."""

from __future__ import annotations

import copy

import pytest

from discord_mcp.errors import RunError
from discord_mcp.watch.commands import parse_command
from discord_mcp.watch.control.dispatch import HANDLERS
from discord_mcp.watch.control.registration import same_commands
from discord_mcp.watch.control.spec import SPECS, discord_commands, from_text


def parsed(text: str) -> tuple[str, dict[str, str]]:
    command = parse_command(text)
    assert command is not None
    spec, options = from_text(command)
    return spec.path, options


@pytest.mark.parametrize(
    ("text", "path", "options"),
    [
        ("!start app fix the tests", "start", {"project": "app", "prompt": "fix the tests"}),
        (
            "!start app --tool codex --model=o3 fix\nthe tests",
            "start",
            {"project": "app", "tool": "codex", "model": "o3", "prompt": "fix\nthe tests"},
        ),
        ("!start app", "start", {"project": "app"}),
        ("!session rename release checks", "session rename", {"name": "release checks"}),
        ("!PROJECT Status app", "project status", {"project": "app"}),
        ("!retry job_1", "retry", {"job": "job_1"}),
        ("!usage app 30d", "usage", {"project": "app", "period": "30d"}),
        ("!schedule add 30m check --all", "schedule add", {"when": "30m", "prompt": "check --all"}),
        ("!status", "status", {}),
    ],
)
def test_text_commands_take_options_in_order_and_by_name(
    text: str, path: str, options: dict[str, str]
) -> None:
    assert parsed(text) == (path, options)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("!tool", "E_BAD_ARGUMENTS"),
        ("!stop now please", "E_BAD_ARGUMENTS"),
        ("!start app --colour red go", "E_BAD_ARGUMENTS"),
        ("!project", "E_UNKNOWN_COMMAND"),
        ("!deploy", "E_UNKNOWN_COMMAND"),
    ],
)
def test_malformed_text_commands_say_how_to_use_them(text: str, code: str) -> None:
    with pytest.raises(RunError) as caught:
        parsed(text)
    assert caught.value.code == code


def test_every_declared_command_has_a_handler_and_required_options_come_first() -> None:
    assert set(HANDLERS) == {spec.path for spec in SPECS}
    for command in discord_commands():
        for option in [command, *command["options"]]:
            flags = [
                o.get("required", False) for o in option.get("options") or [] if o["type"] == 3
            ]
            assert flags == sorted(flags, reverse=True), command["name"]


def test_the_registered_set_is_ours_until_a_field_we_set_differs() -> None:
    wanted = discord_commands()
    returned = copy.deepcopy(wanted)
    for number, command in enumerate(returned):  # what Discord adds on its own
        command |= {"id": str(number), "version": "1", "application_id": "9", "nsfw": False}
        command["name_localizations"] = None
        for option in command["options"]:
            option.setdefault("required", False)
    assert same_commands(wanted, list(reversed(returned)))
    changed = copy.deepcopy(returned)
    changed[0]["options"][0]["description"] = "something else"
    assert not same_commands(wanted, changed)
    assert not same_commands(wanted, returned[1:])
