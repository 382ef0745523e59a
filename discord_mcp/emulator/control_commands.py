"""The control API's application commands: a user runs a slash command, or types in one of
its options and sees the bot's suggestions; and the list of registered commands.

- ``GET /_emulator/commands``: every registered command as a JSON array of Discord's
  application command objects, the global ones first, then the guild's (those carry
  ``guild_id``).
- ``POST /_emulator/interactions`` with ``{"user_id", "channel_id", "command": "<name>",
  "options"?: [...], "focused"?: "<option name>"}``: the user runs the CHAT_INPUT command of
  that name (the guild's if it has one, else the global one) in that channel or thread.
  ``options`` is what the user filled in: ``{"name", "value"}`` for a value, ``{"name",
  "options": [...]}`` for the chosen subcommand or group (a command with subcommands needs
  exactly one). Values are JSON of the option's type: a string, an integer, a number, a
  boolean; a user, channel, role or mentionable as its id; an attachment as ``{"filename",
  "content_type"?, "data_base64"}``, which becomes an ephemeral attachment the interaction's
  ``resolved.attachments`` carries and its URL serves.

  Without ``focused`` it is an APPLICATION_COMMAND (type 2) interaction; with it, an
  APPLICATION_COMMAND_AUTOCOMPLETE (type 4) one in which that option (it must have
  ``autocomplete``) is marked ``focused`` and may hold a partial value (``""`` if not given;
  required options may be missing). Either way the answer is the report of
  ``control_interactions.py`` (``"choices"`` holds the bot's type 8 suggestions).

  Checked as Discord's client would: an unknown command is 404 ``{"error"}``; the user must be
  a member with the permissions of the command's ``default_member_permissions`` in that
  channel (the owner and administrators always pass; users made with ``/users`` hold only
  ``@everyone``'s permissions), the command must allow the GUILD context, the thread must not
  be archived; option names must be the command's, required ones present, values of the
  right type within ``choices``, ``min_value``/``max_value``, ``min_length``/``max_length``
  and ``channel_types``. Each failure is a 400 ``{"error"}`` saying which rule. Like the rest
  of the control API, the user's other permissions (VIEW_CHANNEL, USE_APPLICATION_COMMANDS)
  are not checked.

The interaction's ``data`` is Discord's: ``{"id", "name", "type": 1, "guild_id"?, "options"?:
[{"name", "type", "value", "focused"?} | {"name", "type", "options"}], "resolved"?: {"users",
"members", "roles", "channels", "attachments"}}``.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from discord_mcp.emulator import errors
from discord_mcp.emulator.attachments import clean_filename, content_type
from discord_mcp.emulator.command_schema import (
    ATTACHMENT,
    BOOLEAN,
    CHANNEL,
    INTEGER,
    MENTIONABLE,
    NUMBER,
    ROLE,
    STRING,
    SUB_COMMAND,
    SUB_COMMAND_GROUP,
    USER,
    typed_value,
)
from discord_mcp.emulator.commands import Command
from discord_mcp.emulator.control_base import (
    ControlError,
    discord_refusal,
    text_field,
)
from discord_mcp.emulator.interactions import (
    APPLICATION_COMMAND,
    AUTOCOMPLETE,
    Interaction,
    InteractionDesk,
)
from discord_mcp.emulator.models import Attachment, Channel
from discord_mcp.emulator.permissions import ADMINISTRATOR
from discord_mcp.emulator.state import State
from discord_mcp.emulator.uploads import FILE_SIZE_MAX

COMMAND_FIELDS = {"user_id", "channel_id", "command", "options", "focused"}
_TYPE_NAMES = {
    STRING: "a string",
    INTEGER: "an integer",
    BOOLEAN: "true or false",
    USER: "a user id",
    CHANNEL: "a channel id",
    ROLE: "a role id",
    MENTIONABLE: "a user or role id",
    NUMBER: "a number",
    ATTACHMENT: '{"filename", "content_type"?, "data_base64"}',
}
_PARTIAL_CHANNEL_KEYS = (
    "id",
    "name",
    "type",
    "guild_id",
    "parent_id",
    "flags",
    "last_message_id",
    "rate_limit_per_user",
    "topic",
    "position",
    "nsfw",
    "thread_metadata",
)


class UnknownCommand(ControlError):
    """No registered command by that name: answered with 404."""

    status = 404


def command_routes(state: State) -> list[Route]:
    """``GET /commands`` bound to one emulator's state."""

    async def list_commands(request: Request) -> Response:
        return JSONResponse([command.to_json() for command in state.commands.every()])

    return [Route("/commands", list_commands, methods=["GET"])]


@dataclass
class _Invocation:
    """What an invocation is building: the data's resolved objects, the focused option."""

    state: State
    channel: Channel
    focused: str | None
    resolved: dict[str, dict[str, Any]] = field(default_factory=dict)
    focused_type: int | None = None

    def resolve(self, kind: str, key: str, value: dict[str, Any]) -> None:
        self.resolved.setdefault(kind, {})[key] = value


def issue_command(state: State, desk: InteractionDesk, data: dict[str, Any]) -> Interaction:
    """Run (or, with ``focused``, autocomplete) a command as the user; see the docstring."""
    user_id, channel_id = text_field(data, "user_id"), text_field(data, "channel_id")
    name = text_field(data, "command")
    if user_id not in state.users:
        raise ControlError(f"no user with id {user_id!r}; create one with /users")
    channel = state.channels.get(channel_id)
    if channel is None:
        raise ControlError(f"no channel with id {channel_id!r}")
    if channel.is_dm:
        raise ControlError("commands in direct messages are not emulated; use a guild channel")
    command = state.commands.find(name, state.guild.id)
    if command is None:
        raise UnknownCommand(f"no command named {name!r} is registered (see GET /commands)")
    _check_usable(state, command, user_id, channel)
    focused = data.get("focused")
    if focused is not None and (not isinstance(focused, str) or not focused):
        raise ControlError("'focused' must be the name of an option")
    invocation = _Invocation(state, channel, focused)
    options = _fill(invocation, command.options, data.get("options", []), f"/{command.name}")
    if focused is not None and invocation.focused_type is None:
        raise ControlError(f"/{command.name} has no option {focused!r} where it was given")
    payload: dict[str, Any] = {"id": command.id, "name": command.name, "type": command.type}
    if command.guild_id is not None:
        payload["guild_id"] = command.guild_id
    if options:
        payload["options"] = options
    if invocation.resolved:
        payload["resolved"] = invocation.resolved
    try:
        return desk.create(
            type_=APPLICATION_COMMAND if focused is None else AUTOCOMPLETE,
            user_id=user_id,
            channel_id=channel.id,
            data=payload,
            focused_type=invocation.focused_type or STRING,
        )
    except errors.DiscordError as exc:
        raise discord_refusal(exc, "create this interaction") from None


def _check_usable(state: State, command: Command, user_id: str, channel: Channel) -> None:
    """What Discord's client checks before it shows a user a command."""
    if user_id not in state.members:
        raise ControlError("this user is not a member of the guild")
    permissions = state.permissions_for(user_id, channel)
    required = command.fields.default_member_permissions
    admin = permissions & ADMINISTRATOR or user_id == state.guild.owner_id
    # "0" leaves a command to administrators only.
    bits = None if required is None else int(required)
    if bits is not None and not admin and (bits == 0 or permissions & bits != bits):
        raise ControlError(
            f"/{command.name} needs default_member_permissions {required}, which this user "
            "lacks: Discord's client does not offer it to them"
        )
    contexts = command.fields.contexts
    if contexts is not None and 0 not in contexts:
        raise ControlError(f"/{command.name} cannot be used in a guild (contexts {contexts})")
    if channel.is_thread and channel.archived:
        raise ControlError("commands cannot be used in an archived thread")


def _fill(
    invocation: _Invocation, defined: list[dict[str, Any]], given: Any, where: str
) -> list[dict[str, Any]]:
    """The interaction's options for one level of the command's tree."""
    if not isinstance(given, list) or not all(isinstance(o, dict) for o in given):
        raise ControlError(f"the options of {where} must be a list of objects")
    by_name = {option["name"]: option for option in defined}
    names = [o.get("name") for o in given]
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ControlError(f"{where} has no option(s) {unknown}; it has {sorted(by_name)}")
    if len(set(names)) != len(names):
        raise ControlError(f"an option of {where} is given twice")
    if any(o["type"] in (SUB_COMMAND, SUB_COMMAND_GROUP) for o in defined):
        if len(given) != 1:
            raise ControlError(f"{where} needs exactly one of its subcommands {sorted(by_name)}")
        chosen = by_name[given[0]["name"]]
        if set(given[0]) - {"name", "options"}:
            raise ControlError(f"the subcommand {chosen['name']!r} takes only 'options'")
        inner = _fill(
            invocation,
            chosen.get("options", []),
            given[0].get("options", []),
            f"{where} {chosen['name']}",
        )
        entry: dict[str, Any] = {"name": chosen["name"], "type": chosen["type"]}
        return [entry | {"options": inner}]
    filled = [_value(invocation, by_name[o["name"]], o, where) for o in given]
    if invocation.focused in by_name and invocation.focused not in names:
        filled.append(_value(invocation, by_name[invocation.focused], {}, where))
    if invocation.focused is None:
        missing = [o["name"] for o in defined if o.get("required") and o["name"] not in names]
        if missing:
            raise ControlError(f"{where} needs its required option(s) {missing}")
    return filled


def _value(
    invocation: _Invocation, option: dict[str, Any], given: dict[str, Any], where: str
) -> dict[str, Any]:
    name, kind = option["name"], option["type"]
    if set(given) - {"name", "value"}:
        raise ControlError(f"the option {name!r} of {where} takes only 'name' and 'value'")
    entry: dict[str, Any] = {"name": name, "type": kind}
    if name == invocation.focused:
        if not option.get("autocomplete"):
            raise ControlError(f"the option {name!r} of {where} has no autocomplete")
        value = given.get("value", "")
        if not isinstance(value, str) and typed_value(value, kind) is None:
            raise ControlError(f"the focused option {name!r} takes {_TYPE_NAMES[kind]} or text")
        invocation.focused_type = kind
        return entry | {"value": value, "focused": True}
    if "value" not in given:
        raise ControlError(f"the option {name!r} of {where} needs a 'value'")
    return entry | {"value": _checked(invocation, option, given["value"], f"{name!r} of {where}")}


def _checked(invocation: _Invocation, option: dict[str, Any], value: Any, label: str) -> Any:
    """The value as the interaction carries it, after the client's checks."""
    kind = option["type"]
    if kind in (STRING, INTEGER, NUMBER):
        typed = typed_value(value, kind)
        if typed is None:
            raise ControlError(f"the option {label} takes {_TYPE_NAMES[kind]}")
        _check_bounds(option, typed, label)
        return typed
    if kind == BOOLEAN:
        if not isinstance(value, bool):
            raise ControlError(f"the option {label} takes true or false")
        return value
    if kind == ATTACHMENT:
        return _attachment(invocation, value, label)
    if not isinstance(value, str) or not value.isdigit():
        raise ControlError(f"the option {label} takes {_TYPE_NAMES[kind]}")
    state = invocation.state
    if kind in (USER, MENTIONABLE) and value in state.users:
        _resolve_user(invocation, value)
    elif kind in (ROLE, MENTIONABLE) and value in state.roles:
        invocation.resolve("roles", value, state.roles[value].to_json())
    elif kind == CHANNEL and value in state.channels:
        _resolve_channel(invocation, option, state.channels[value], label)
    else:
        raise ControlError(f"the option {label} takes {_TYPE_NAMES[kind]} that exists")
    return value


def _check_bounds(option: dict[str, Any], value: str | int | float, label: str) -> None:
    choices = option.get("choices")
    if choices and value not in [c["value"] for c in choices]:
        allowed = [c["value"] for c in choices]
        raise ControlError(f"the option {label} must be one of its choices {allowed}")
    if isinstance(value, str):
        low, high = option.get("min_length", 0), option.get("max_length", 6000)
        if not low <= len(value) <= high:
            raise ControlError(f"the option {label} takes {low} to {high} characters")
        return
    low_value, high_value = option.get("min_value"), option.get("max_value")
    if (low_value is not None and value < low_value) or (
        high_value is not None and value > high_value
    ):
        raise ControlError(f"the option {label} must be within {low_value}..{high_value}")


def _resolve_user(invocation: _Invocation, user_id: str) -> None:
    state = invocation.state
    invocation.resolve("users", user_id, state.users[user_id].to_json())
    if user_id in state.members:
        member = state.member_json(user_id, with_user=False)
        for key in ("deaf", "mute"):
            member.pop(key, None)
        member["permissions"] = str(state.permissions_for(user_id, invocation.channel))
        invocation.resolve("members", user_id, member)


def _resolve_channel(
    invocation: _Invocation, option: dict[str, Any], channel: Channel, label: str
) -> None:
    types = option.get("channel_types")
    if types and channel.type not in types:
        raise ControlError(f"the option {label} takes channels of types {types}")
    full = channel.to_json()
    partial = {key: full[key] for key in _PARTIAL_CHANNEL_KEYS if key in full}
    partial["permissions"] = str(invocation.state.permissions_for(invocation.state.bot.id, channel))
    invocation.resolve("channels", channel.id, partial)


def _attachment(invocation: _Invocation, value: Any, label: str) -> str:
    """An uploaded file given as an attachment option: stored, resolved, its id returned."""
    if not isinstance(value, dict) or set(value) - {"filename", "content_type", "data_base64"}:
        raise ControlError(f"the option {label} takes {_TYPE_NAMES[ATTACHMENT]}")
    filename, encoded = value.get("filename"), value.get("data_base64")
    declared = value.get("content_type")
    if not isinstance(filename, str) or not filename or not isinstance(encoded, str):
        raise ControlError(f"the option {label} takes {_TYPE_NAMES[ATTACHMENT]}")
    if declared is not None and not isinstance(declared, str):
        raise ControlError(f"the 'content_type' of the option {label} must be a string")
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ControlError(f"the 'data_base64' of the option {label} is not base64") from None
    if len(data) > FILE_SIZE_MAX:
        raise ControlError(f"the file of the option {label} is over Discord's 10 MiB limit")
    state = invocation.state
    attachment = Attachment(
        id=state.new_id(),
        channel_id=invocation.channel.id,
        filename=clean_filename(filename),
        data=data,
        content_type=content_type(filename, declared, data),
        ephemeral=True,
    )
    state.keep_files([attachment])
    invocation.resolve("attachments", attachment.id, state.attachment_json(attachment))
    return attachment.id
