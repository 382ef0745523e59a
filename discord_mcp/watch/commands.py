"""The owner's ``!`` text commands: how a message is read as one (the fallback that works
without the gateway). What each command does is in :mod:`discord_mcp.watch.control`, behind
the same dispatcher as the slash commands; their options are parsed by its ``spec``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORD = re.compile(r"(\S+)\s*(.*)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Command:
    """A parsed ``!name args...``."""

    name: str
    args: tuple[str, ...]
    rest: str
    """Everything after the first argument, as typed (the first prompt of ``!start``)."""
    text: str = ""
    """Everything after the name, as typed."""


def parse_command(text: str) -> Command | None:
    """The command in ``text``, or None when it is not one (then it is a normal message)."""
    stripped = text.strip()
    if not stripped.startswith("!") or len(stripped) < 2 or stripped[1].isspace():
        return None
    head, tail = split_word(stripped[1:])
    name = head.lower()
    if not name.isalpha():
        return None
    args = tuple(tail.split())
    rest = ""
    if args:
        rest = tail.strip()[len(args[0]) :].strip()
    return Command(name=name, args=args, rest=rest, text=tail.strip())


def split_word(text: str) -> tuple[str, str]:
    """The first word of ``text`` and the rest (newlines kept), split at any whitespace."""
    match = _WORD.match(text.strip())
    return (match.group(1), match.group(2)) if match else ("", "")
