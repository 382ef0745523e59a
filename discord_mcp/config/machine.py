"""Which machine this is: ``DISCORD_MCP_MACHINE``, or a name made from the host name.

A machine's name is written into every component ``custom_id`` the bot creates, into its
presence record and onto its cards ("on ``laptop``"), so it is short and safe everywhere: 1 to
32 characters, lower-case letters, digits, ``-`` and ``_``, starting and ending with a letter or
a digit. Every process of one machine must use the same name (they share its state directory
and its gateway): set ``DISCORD_MCP_MACHINE`` in the ``.env`` they all read, or leave it to the
host name.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping

from discord_mcp.config.values import describe_value, value_of
from discord_mcp.errors import ConfigError

NAME_MAX = 32
NAME = re.compile(r"^[a-z0-9](?:[a-z0-9_-]{0,30}[a-z0-9])?$")
FALLBACK = "machine"
"""The name of a machine whose host name has nothing usable in it."""


def is_machine_name(value: str) -> bool:
    """Whether ``value`` is a valid machine name (already lower-case)."""
    return bool(NAME.match(value))


def machine_from_host(hostname: str | None = None) -> str:
    """The default name: the host name's first label, lower-cased, anything outside the
    allowed characters turned into ``-``, cut to :data:`NAME_MAX` (``Johns-MacBook.local``
    becomes ``johns-macbook``)."""
    host = socket.gethostname() if hostname is None else hostname
    label = host.split(".", 1)[0].lower()
    cleaned = re.sub(r"[^a-z0-9_-]+", "-", label)[:NAME_MAX].strip("-_")
    return cleaned if is_machine_name(cleaned) else FALLBACK


def parse_machine(raw: str) -> str:
    """A configured name, lower-cased.

    Raises:
        ValueError: it is not a valid name (the message says what is wrong, never the value).
    """
    value = raw.strip().lower()
    if len(value) > NAME_MAX:
        raise ValueError(f"is {len(value)} characters long (at most {NAME_MAX})")
    if not is_machine_name(value):
        raise ValueError(
            "may hold only letters, digits, '-' and '_', and must start and end with a letter "
            "or a digit"
        )
    return value


def read_machine(env: Mapping[str, str]) -> str:
    raw = value_of(env, "DISCORD_MCP_MACHINE")
    if not raw:
        return machine_from_host()
    try:
        return parse_machine(raw)
    except ValueError as exc:
        raise ConfigError(
            "DISCORD_MCP_MACHINE",
            f"{exc} ({describe_value(raw)})",
            "Use a short name such as laptop or build-server (a-z, 0-9, - and _, at most 32), "
            "the same in every program of this machine",
        ) from None
