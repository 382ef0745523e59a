"""Application command bodies (create, edit, bulk overwrite): Discord's rules for them.

From Discord's docs (interactions/application-commands):

- ``type`` 1 CHAT_INPUT (the default), 2 USER or 3 MESSAGE (4, an Activity's entry point, needs
  an app this emulator is not).
- CHAT_INPUT names and option names match ``^[-_'\\p{L}\\p{N}\\p{sc=Deva}\\p{sc=Thai}]{1,32}$``
  and use the lowercase form of every letter that has one; USER and MESSAGE names are any 1-32
  characters. Descriptions are 1-100 characters (empty for USER and MESSAGE commands).
- At most 25 options (and 25 choices); option types 1-11; a command's options are either all
  subcommands and groups or none; a group holds only subcommands, a subcommand only values;
  required options come before optional ones; option names are unique within their list;
  ``choices`` (names 1-100, string values up to 100) and ``autocomplete`` exclude each other.
- ``default_member_permissions`` is a bit set as a string (an integer is taken too, as the
  spec types it) or null; ``dm_permission``, ``contexts`` (0 GUILD, 1 BOT_DM, 2
  PRIVATE_CHANNEL) and ``integration_types`` (0, 1) as documented.
- The names, descriptions and choice names and values of a command together stay within 8000
  characters ("Command exceeds maximum size").

Every problem is a 50035 field error. The codes ``APPLICATION_COMMAND_INVALID_NAME``,
``APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID``, ``APPLICATION_COMMAND_OPTIONS_TYPE_INVALID``,
``APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS`` and ``APPLICATION_COMMAND_TOO_LARGE`` are the
ones Discord is seen to send; the few others are this emulator's own, with readable messages.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

from discord_mcp.emulator.errors import FormErrors
from discord_mcp.emulator.validation import (
    Path,
    array,
    boolean,
    json_object,
    required_error,
    string,
    too_long_error,
)

CHAT_INPUT, USER_COMMAND, MESSAGE_COMMAND = 1, 2, 3
COMMAND_TYPES = (CHAT_INPUT, USER_COMMAND, MESSAGE_COMMAND)
SUB_COMMAND, SUB_COMMAND_GROUP = 1, 2
STRING, INTEGER, BOOLEAN, USER, CHANNEL, ROLE, MENTIONABLE, NUMBER, ATTACHMENT = range(3, 12)
CHOICE_TYPES = frozenset({STRING, INTEGER, NUMBER})
OPTIONS_MAX = 25
CHOICES_MAX = 25
SIZE_MAX = 8000
INT_LIMIT = 2**53 - 1
PERMISSIONS_MAX = 2**54 - 1
_NAME_PUNCTUATION = frozenset("-_'")


@dataclass
class CommandFields:
    """A validated command body; ``given`` names the keys it carried (for a PATCH)."""

    given: set[str] = field(default_factory=set)
    id: str | None = None
    type: int = CHAT_INPUT
    name: str = ""
    description: str = ""
    options: list[dict[str, Any]] = field(default_factory=list)
    default_member_permissions: str | None = None
    dm_permission: bool | None = None
    contexts: list[int] | None = None
    integration_types: list[int] | None = None
    nsfw: bool = False
    name_localizations: dict[str, str] | None = None
    description_localizations: dict[str, str] | None = None


def parse_command(
    errors: FormErrors, prefix: Path, body: Any, *, partial: bool = False, kind: int | None = None
) -> CommandFields:
    """Check one command body, recording problems under ``prefix`` (an index in a bulk body).

    ``partial`` is a PATCH: every field is optional and ``kind`` is the command's type.
    """
    out = CommandFields()
    data = json_object(errors, prefix, body)
    if data is None:
        return out
    out.given = {key for key in data if data[key] is not None or partial}
    if kind is None:
        raw_type = data.get("type")
        if raw_type is None:
            kind = CHAT_INPUT
        elif isinstance(raw_type, bool) or raw_type not in COMMAND_TYPES:
            errors.add((*prefix, "type"), "BASE_TYPE_CHOICES", "Value must be one of (1, 2, 3).")
            kind = CHAT_INPUT
        else:
            kind = int(raw_type)
    out.type = kind
    chat = kind == CHAT_INPUT
    if data.get("id") is not None:
        out.id = str(data["id"])
    if data.get("name") is not None:
        out.name = _name(errors, (*prefix, "name"), data["name"], chat=chat)
    elif not partial:
        required_error(errors, (*prefix, "name"))
    if chat and (not partial or "description" in data):
        out.description = (
            string(
                errors,
                (*prefix, "description"),
                data.get("description") or "",
                min_length=1,
                max_length=100,
            )
            or ""
        )
    if data.get("options") is not None:
        if chat:
            out.options = _options(errors, (*prefix, "options"), data["options"], level=0)
        elif data["options"]:
            errors.add(
                (*prefix, "options"),
                "APPLICATION_COMMAND_OPTIONS_NOT_ALLOWED",
                "Only CHAT_INPUT commands have options.",
            )
    _settings(errors, prefix, data, out)
    if chat and command_size(out) > SIZE_MAX:
        errors.add(
            prefix, "APPLICATION_COMMAND_TOO_LARGE", f"Command exceeds maximum size ({SIZE_MAX})"
        )
    return out


def _settings(errors: FormErrors, prefix: Path, data: dict[str, Any], out: CommandFields) -> None:
    permissions = data.get("default_member_permissions")
    if permissions is not None:
        number = _permission_bits(permissions)
        if number is None:
            errors.add(
                (*prefix, "default_member_permissions"),
                "NUMBER_TYPE_COERCE",
                f'Value "{permissions}" is not a permission bit set.',
            )
        else:
            out.default_member_permissions = str(number)
    if data.get("dm_permission") is not None:
        out.dm_permission = boolean(errors, (*prefix, "dm_permission"), data["dm_permission"])
    if data.get("nsfw") is not None:
        out.nsfw = bool(boolean(errors, (*prefix, "nsfw"), data["nsfw"]))
    for key, allowed in (("contexts", (0, 1, 2)), ("integration_types", (0, 1))):
        value = data.get(key)
        if value is None:
            continue
        items = array(errors, (*prefix, key), value)
        if items is None:
            continue
        good = [i for i in items if not isinstance(i, bool) and i in allowed]
        if not items or len(good) != len(items) or len(set(good)) != len(good):
            errors.add(
                (*prefix, key),
                "BASE_TYPE_CHOICES",
                f"Must be a non-empty list of different values from {allowed}.",
            )
            continue
        setattr(out, key, [int(i) for i in good])
    for key, high in (("name_localizations", 32), ("description_localizations", 100)):
        value = data.get(key)
        if isinstance(value, dict) and all(
            isinstance(v, str) and 1 <= len(v) <= high for v in value.values()
        ):
            setattr(out, key, dict(value) or None)


def _permission_bits(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= PERMISSIONS_MAX:
        return value
    return None


def valid_name(name: str, *, chat: bool) -> bool:
    """Discord's naming rule (module docstring); length is checked separately."""
    if not chat:
        return True
    return all(_name_character(ch) and ch.lower() == ch for ch in name)


def _name_character(ch: str) -> bool:
    if ch in _NAME_PUNCTUATION:
        return True
    if unicodedata.category(ch)[0] in "LN":
        return True
    # \p{sc=Deva} and \p{sc=Thai}: their combining marks count too.
    return 0x0900 <= ord(ch) <= 0x097F or 0x0E00 <= ord(ch) <= 0x0E7F


def _name(errors: FormErrors, path: Path, value: Any, *, chat: bool) -> str:
    name = string(errors, path, value, min_length=1, max_length=32)
    if name is None:
        return ""
    if not valid_name(name, chat=chat):
        errors.add(path, "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
    return name


def _options(errors: FormErrors, path: Path, value: Any, *, level: int) -> list[dict[str, Any]]:
    """Options at ``level`` 0 (the command's), 1 (a group's) or 2 (a subcommand's)."""
    items = array(errors, path, value)
    if items is None:
        return []
    if len(items) > OPTIONS_MAX:
        too_long_error(errors, path, OPTIONS_MAX)
        return []
    kinds = [item.get("type") if isinstance(item, dict) else None for item in items]
    structural = [k in (SUB_COMMAND, SUB_COMMAND_GROUP) for k in kinds]
    allowed_here = {
        0: "Sub-command and sub-command group option types are mutually exclusive to all "
        "other types",
        1: "Sub-command groups can only contain sub-commands",
        2: "Sub-commands cannot contain sub-commands or sub-command groups",
    }
    misplaced = (
        (level == 0 and any(structural) and not all(structural))
        or (level == 1 and any(k != SUB_COMMAND for k in kinds))
        or (level == 2 and any(structural))
    )
    if misplaced:
        errors.add(path, "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID", allowed_here[level])
        return []
    result: list[dict[str, Any]] = []
    names: set[str] = set()
    optional_seen = False
    for index, item in enumerate(items):
        option = _option(errors, (*path, index), item, level=level)
        if option is None:
            continue
        if option["name"] in names:
            errors.add(
                (*path, index, "name"),
                "APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS",
                "Option name already used in this command",
            )
        names.add(option["name"])
        if option["type"] not in (SUB_COMMAND, SUB_COMMAND_GROUP):
            if option.get("required") and optional_seen:
                errors.add(
                    (*path, index),
                    "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
                    "Required options must be placed before non-required options",
                )
            optional_seen = optional_seen or not option.get("required")
        result.append(option)
    return result


def _option(errors: FormErrors, path: Path, item: Any, *, level: int) -> dict[str, Any] | None:
    data = json_object(errors, path, item)
    if data is None:
        return None
    kind = data.get("type")
    if isinstance(kind, bool) or not isinstance(kind, int) or not 1 <= kind <= 11:
        errors.add((*path, "type"), "BASE_TYPE_CHOICES", "Value must be one of (1, ..., 11).")
        return None
    out: dict[str, Any] = {"type": kind}
    if data.get("name") is None:
        required_error(errors, (*path, "name"))
        out["name"] = ""
    else:
        out["name"] = _name(errors, (*path, "name"), data["name"], chat=True)
    description = data.get("description")
    if description is None:
        required_error(errors, (*path, "description"))
    out["description"] = (
        string(errors, (*path, "description"), description or "", min_length=1, max_length=100)
        or ""
    )
    for key in ("name_localizations", "description_localizations"):
        if isinstance(data.get(key), dict) and data[key]:
            out[key] = data[key]
    if kind in (SUB_COMMAND, SUB_COMMAND_GROUP):
        nested = data.get("options")
        inner = 1 if kind == SUB_COMMAND_GROUP else 2
        out["options"] = (
            [] if nested is None else _options(errors, (*path, "options"), nested, level=inner)
        )
        return out
    if data.get("required") is not None and boolean(errors, (*path, "required"), data["required"]):
        out["required"] = True
    _typed_fields(errors, path, data, out)
    return out


def _typed_fields(
    errors: FormErrors, path: Path, data: dict[str, Any], out: dict[str, Any]
) -> None:
    """The fields that only some option types have; others are dropped, as Discord does."""
    kind = out["type"]
    choices = data.get("choices")
    autocomplete = data.get("autocomplete")
    checked = kind in CHOICE_TYPES and autocomplete is not None
    if checked and boolean(errors, (*path, "autocomplete"), autocomplete):
        out["autocomplete"] = True
    if kind in CHOICE_TYPES and choices:
        if out.get("autocomplete"):
            errors.add(
                (*path, "autocomplete"),
                "APPLICATION_COMMAND_OPTION_AUTOCOMPLETE_WITH_CHOICES",
                "Autocomplete cannot be set when choices are present.",
            )
        out["choices"] = parse_choices(errors, (*path, "choices"), choices, kind)
    if kind in (INTEGER, NUMBER):
        for key in ("min_value", "max_value"):
            if data.get(key) is not None:
                number = typed_value(data[key], kind)
                if number is None:
                    errors.add((*path, key), "NUMBER_TYPE_COERCE", f'Value "{data[key]}" is bad.')
                else:
                    out[key] = number
        if out.get("min_value", -INT_LIMIT) > out.get("max_value", INT_LIMIT):
            errors.add((*path, "min_value"), "NUMBER_TYPE_MAX", "min_value exceeds max_value.")
    if kind == STRING:
        for key, low in (("min_length", 0), ("max_length", 1)):
            value = data.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= 6000:
                errors.add((*path, key), "NUMBER_TYPE_MAX", f"Must be a number from {low} to 6000.")
            else:
                out[key] = value
    if kind == CHANNEL and isinstance(data.get("channel_types"), list):
        out["channel_types"] = [t for t in data["channel_types"] if isinstance(t, int)]


def parse_choices(errors: FormErrors, path: Path, value: Any, kind: int) -> list[dict[str, Any]]:
    """Choices (of an option, or of an autocomplete answer) for an option of ``kind``."""
    items = array(errors, path, value)
    if items is None:
        return []
    if len(items) > CHOICES_MAX:
        too_long_error(errors, path, CHOICES_MAX)
        return []
    result: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        choice = json_object(errors, (*path, index), item)
        if choice is None:
            continue
        name = string(
            errors, (*path, index, "name"), choice.get("name"), min_length=1, max_length=100
        )
        raw = choice.get("value")
        typed = typed_value(raw, kind)
        if typed is None or (isinstance(typed, str) and len(typed) > 100):
            errors.add(
                (*path, index, "value"),
                "APPLICATION_COMMAND_OPTION_CHOICE_VALUE_INVALID",
                f"The value {raw!r} does not fit an option of type {kind}.",
            )
            continue
        entry: dict[str, Any] = {"name": name or "", "value": typed}
        if isinstance(choice.get("name_localizations"), dict) and choice["name_localizations"]:
            entry["name_localizations"] = choice["name_localizations"]
        result.append(entry)
    return result


def typed_value(value: Any, kind: int) -> str | int | float | None:
    """``value`` as an option of ``kind`` holds it (STRING, INTEGER or NUMBER), or None."""
    if isinstance(value, bool):
        return None
    if kind == STRING:
        return value if isinstance(value, str) else None
    if kind == INTEGER:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return value if isinstance(value, int) and -INT_LIMIT <= value <= INT_LIMIT else None
    if kind == NUMBER and isinstance(value, int | float):
        return value if -(2**53) <= value <= 2**53 else None
    return None


def command_size(fields: CommandFields) -> int:
    """The characters Discord counts toward the 8000 limit."""

    def options_size(options: list[dict[str, Any]]) -> int:
        total = 0
        for option in options:
            total += len(option["name"]) + len(option["description"])
            for choice in option.get("choices", []):
                total += len(choice["name"]) + len(str(choice["value"]))
            total += options_size(option.get("options", []))
        return total

    return len(fields.name) + len(fields.description) + options_size(fields.options)
