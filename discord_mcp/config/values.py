"""One setting's value: read from the environment, checked, and refused in words that never
repeat it (a token pasted into the wrong variable would land in stderr, which MCP clients keep
in their logs; :func:`describe_value` tells its shape instead).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from discord_mcp.errors import ConfigError

_SNOWFLAKE = re.compile(r"[0-9]{17,20}")
"""A Discord id (snowflake): 17 to 20 ASCII digits."""


class Secret:
    """A string that never shows itself in ``repr``, ``str``, f-strings or tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The real value, for the one place that must send it (the Authorization header)."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


def value_of(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip()


def parse_token(raw: str) -> Secret:
    """Accept a bot token with or without its ``Bot `` prefix (a common setup slip).

    Raises:
        ConfigError: the token is missing or malformed (the message never contains it).
    """
    value = raw.strip()
    if value.lower() == "bot" or value[:4].lower() == "bot ":
        value = value[3:].strip()
    if not value:
        raise ConfigError(
            "DISCORD_BOT_TOKEN",
            "is not set",
            "Copy the bot token from the Discord developer portal (your application > Bot > "
            "Reset Token) into .env as DISCORD_BOT_TOKEN=... (with or without 'Bot ')",
        )
    if any(ch.isspace() for ch in value) or not value.isascii():
        raise ConfigError(
            "DISCORD_BOT_TOKEN",
            "contains spaces or non-ASCII characters",
            "Paste the token exactly as the developer portal shows it, on one line",
        )
    return Secret(value)


def read_snowflake(env: Mapping[str, str], name: str, what: str) -> str:
    value = value_of(env, name)
    if not value:
        raise ConfigError(
            name,
            "is not set",
            f"Set it to the id of {what}: enable Developer Mode in Discord (Settings > Advanced), "
            "then right-click it > Copy ID",
        )
    problem = id_problem(value)
    if problem is not None:
        raise ConfigError(
            name,
            problem,
            "A Discord id is 17 to 20 digits; right-click > Copy ID with Developer Mode on",
        )
    return value


def is_snowflake(value: str) -> bool:
    """Whether ``value`` is a Discord id: 17 to 20 ASCII digits, nothing else."""
    return _SNOWFLAKE.fullmatch(value) is not None


def id_problem(value: str) -> str | None:
    """What is wrong with ``value`` as a Discord id, in words (None: nothing)."""
    if is_snowflake(value):
        return None
    if value.isascii() and value.isdigit():
        if len(value) < 17:
            return (
                f"is {len(value)} digits: too short for a Discord id, which is 17 to 20 digits "
                "(part of it may be missing)"
            )
        return f"is {len(value)} digits: too long for a Discord id, which is 17 to 20 digits"
    return f"must be a Discord id (digits); {describe_value(value)}"


def read_seconds(env: Mapping[str, str], name: str, default: float, *, low: float) -> float:
    raw = value_of(env, name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(
            name, f"must be a number of seconds; {describe_value(raw)}", "Use seconds, e.g. 5"
        ) from None
    if not (low <= value <= 86_400) or value != value:
        raise ConfigError(name, f"is {value}", f"Use a number of seconds between {low} and 86400")
    return value


_TRUE = frozenset({"1", "true", "yes", "on"})


_FALSE = frozenset({"", "0", "false", "no", "off"})


def read_flag(env: Mapping[str, str], name: str) -> bool:
    return parse_flag(name, value_of(env, name))


def parse_flag(name: str, raw: str) -> bool:
    """A yes-or-no setting: 1/0, true/false, yes/no, on/off in any case (empty is no).

    Raises:
        ConfigError: anything else, naming the variable.
    """
    word = raw.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ConfigError(
        name,
        f"is not a yes or no ({describe_value(raw)})",
        "Use 1, true, yes or on to turn it on; 0, false, no or off to turn it off",
    )


def read_url(env: Mapping[str, str], name: str, default: str, schemes: tuple[str, ...]) -> str:
    value = value_of(env, name)
    if not value:
        return default
    if not value.startswith(schemes):
        raise ConfigError(
            name,
            f"must be a URL starting with {' or '.join(schemes)}; {describe_value(value)}",
            f"Use a URL starting with {' or '.join(schemes)}",
        )
    return value.rstrip("/")


def describe_value(value: str) -> str:
    """What a refused value looks like, without any of it: its length and the kinds of
    characters in it (a token pasted into the wrong variable must not reach a log)."""
    kinds = []
    if any(ch.isascii() and ch.isalpha() for ch in value):
        kinds.append("letters")
    if any(ch.isdigit() for ch in value):
        kinds.append("digits")
    if any(ch.isspace() for ch in value):
        kinds.append("spaces")
    if any(not ch.isascii() for ch in value):
        kinds.append("non-ASCII characters")
    if any(ch.isascii() and not ch.isalnum() and not ch.isspace() for ch in value):
        kinds.append("punctuation")
    what = ", ".join(kinds[:-1]) + (" and " if len(kinds) > 1 else "") + kinds[-1] if kinds else ""
    return f"the value given has {len(value)} characters" + (f": {what}" if what else "")
