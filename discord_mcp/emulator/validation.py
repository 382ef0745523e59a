"""Checks request bodies and query strings the way Discord does.

Field checks record into one :class:`~discord_mcp.emulator.errors.FormErrors` tree, so a request
with several problems gets one 50035 "Invalid Form Body" listing them all. The error codes for
length, type and choice problems are Discord's (``BASE_TYPE_MAX_LENGTH``...). Message bodies are
in ``message_body.py``, components in ``components.py``; this module holds the field checks they
share, thread bodies and query parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from discord_mcp.emulator.errors import DiscordError, FormErrors
from discord_mcp.emulator.models import AUTO_ARCHIVE_DURATIONS

Path = tuple[str | int, ...]


def too_long_error(errors: FormErrors, path: Path, limit: int) -> None:
    errors.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")


def bad_length_error(errors: FormErrors, path: Path, low: int, high: int) -> None:
    errors.add(path, "BASE_TYPE_BAD_LENGTH", f"Must be between {low} and {high} in length.")


def required_error(errors: FormErrors, path: Path) -> None:
    errors.add(path, "BASE_TYPE_REQUIRED", "This field is required")


def string(
    errors: FormErrors,
    path: Path,
    value: Any,
    *,
    max_length: int,
    min_length: int = 0,
) -> str | None:
    """A string field within its length bounds, or None after recording why not."""
    if not isinstance(value, str):
        errors.add(path, "BASE_TYPE_STRING", f'Could not interpret "{value}" as string.')
        return None
    if min_length and not min_length <= len(value) <= max_length:
        bad_length_error(errors, path, min_length, max_length)
        return None
    if len(value) > max_length:
        too_long_error(errors, path, max_length)
        return None
    return value


def boolean(errors: FormErrors, path: Path, value: Any) -> bool | None:
    if not isinstance(value, bool):
        errors.add(path, "BASE_TYPE_BOOLEAN", "Must be either true or false.")
        return None
    return value


def integer(
    errors: FormErrors, path: Path, value: Any, *, low: int | None = None, high: int | None = None
) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        errors.add(path, "NUMBER_TYPE_COERCE", f'Value "{value}" is not int.')
        return None
    if low is not None and value < low:
        errors.add(path, "NUMBER_TYPE_MIN", f"int value should be greater than or equal to {low}.")
        return None
    if high is not None and value > high:
        errors.add(path, "NUMBER_TYPE_MAX", f"int value should be less than or equal to {high}.")
        return None
    return value


def json_object(errors: FormErrors, path: Path, value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        errors.add(path, "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
        return None
    return value


def array(errors: FormErrors, path: Path, value: Any) -> list[Any] | None:
    if not isinstance(value, list):
        errors.add(path, "BASE_TYPE_ARRAY", "Must be an array.")
        return None
    return value


def is_snowflake(value: Any) -> bool:
    """Whether ``value`` is a snowflake id (a string, or an int, of decimal digits)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0 <= value < 1 << 64
    return isinstance(value, str) and value.isdigit() and len(value) <= 20


def snowflake_field(errors: FormErrors, path: Path, value: Any) -> str | None:
    if not is_snowflake(value):
        errors.add(path, "NUMBER_TYPE_COERCE", f'Value "{value}" is not snowflake.')
        return None
    return str(value)


def body_object(body: Any) -> dict[str, Any]:
    """The request body as a JSON object; anything else is a 50035 at the top level."""
    if body is None:
        return {}
    if not isinstance(body, dict):
        errors = FormErrors()
        errors.add((), "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
        raise errors.error()
    return body


@dataclass
class ThreadFields:
    """A validated thread create or channel edit body; None means "not given"."""

    name: str | None = None
    type: int | None = None
    auto_archive_duration: int | None = None
    rate_limit_per_user: int | None = None
    invitable: bool | None = None
    archived: bool | None = None
    locked: bool | None = None
    topic: str | None = None
    topic_given: bool = False


def parse_thread(body: Any, *, create: bool, thread: bool = True) -> ThreadFields:
    """Validate a thread creation body (``create=True``) or a channel/thread edit body."""
    data = body_object(body)
    errors = FormErrors()
    out = ThreadFields()
    if data.get("name") is not None:
        out.name = string(errors, ("name",), data["name"], min_length=1, max_length=100)
    elif create:
        required_error(errors, ("name",))
    if data.get("auto_archive_duration") is not None:
        duration = data["auto_archive_duration"]
        if isinstance(duration, bool) or duration not in AUTO_ARCHIVE_DURATIONS:
            errors.add(
                ("auto_archive_duration",),
                "BASE_TYPE_CHOICES",
                "Value must be one of {60, 1440, 4320, 10080}.",
            )
        else:
            out.auto_archive_duration = int(duration)
    if data.get("rate_limit_per_user") is not None:
        out.rate_limit_per_user = integer(
            errors, ("rate_limit_per_user",), data["rate_limit_per_user"], low=0, high=21600
        )
    for key in ("invitable", "archived", "locked"):
        if data.get(key) is not None:
            setattr(out, key, boolean(errors, (key,), data[key]))
    if data.get("type") is not None:
        kind = data["type"]
        if isinstance(kind, bool) or kind not in (10, 11, 12):
            errors.add(("type",), "BASE_TYPE_CHOICES", "Value must be one of (10, 11, 12).")
        else:
            out.type = int(kind)
    if not thread and "topic" in data:
        out.topic_given = True
        if data["topic"] is not None:
            out.topic = string(errors, ("topic",), data["topic"], max_length=1024)
    errors.raise_if_any()
    return out


def parse_limit(value: str | None, *, default: int, high: int = 100) -> int:
    """A ``limit`` query parameter (1..high); raises 50035 when out of range."""
    if value is None:
        return default
    errors = FormErrors()
    try:
        number = int(value)
    except ValueError:
        errors.add(("limit",), "NUMBER_TYPE_COERCE", f'Value "{value}" is not int.')
        raise errors.error() from None
    checked = integer(errors, ("limit",), number, low=1, high=high)
    errors.raise_if_any()
    assert checked is not None
    return checked


def parse_snowflake_query(name: str, value: str | None) -> int | None:
    """A snowflake query parameter as an int, None when absent; 50035 when malformed."""
    if value is None:
        return None
    if not is_snowflake(value):
        errors = FormErrors()
        errors.add((name,), "NUMBER_TYPE_COERCE", f'Value "{value}" is not snowflake.')
        raise errors.error()
    return int(value)


def check_only_one(query: dict[str, str], names: tuple[str, ...]) -> DiscordError | None:
    """The 50035 for mutually exclusive query parameters given together, if they were."""
    present = [name for name in names if name in query]
    if len(present) <= 1:
        return None
    errors = FormErrors()
    for name in present:
        errors.add(
            (name,),
            "QUERY_PARAMETERS_MUTUALLY_EXCLUSIVE",
            f"Only one of {', '.join(names)} may be passed at a time.",
        )
    return errors.error()
