"""Every command the product tells someone to run exists.

The product's strings (messages, replies, help, the i18n catalogues, the emulator's page; not
docstrings, which nobody is told) name commands in code spans (`` `discord-mcp doctor` ``) or
as fix lines (``discord-mcp install claude   (or codex, gemini)``). Each named subcommand must
be one of its program's parsers (and a second word one of that subcommand's, a hook event one
of the hooks).
A reply once told the owner to run ``discord-watch start``, which does not exist.
"""

from __future__ import annotations

import argparse
import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

from discord_mcp.cli import _parser as mcp_parser
from discord_mcp.hooks.options import EVENTS as HOOK_EVENTS
from discord_mcp.watch.cli import _parser as watch_parser

PACKAGE = Path(__file__).resolve().parents[1] / "discord_mcp"
PROGRAMS = ("discord-watch", "discord-mcp")
SPAN = re.compile(r"`(discord-watch|discord-mcp)((?: [a-z][a-z-]*){0,2})")
LINE = re.compile(
    r"(?:^\s*|:\s+)(discord-watch|discord-mcp)((?: [a-z][a-z-]*){1,2})"
    r"(?=\s+(?:[-<({\[]|[A-Z]{2,}\b))",
    re.MULTILINE,
)
"""A fix line (or one after a colon): the command, then its options or placeholders
(``discord-mcp install claude   (or codex, gemini)``); prose that starts with a program's
name (``discord-watch took the request...``) and names (the ``discord-mcp approvals`` hook)
are no commands."""


def _code_strings(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                yield node.value
        elif isinstance(node, ast.JoinedStr):  # an f-string: its values stand as ARG
            yield "".join(
                part.value if isinstance(part, ast.Constant) else "ARG" for part in node.values
            )


def _toml_strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _toml_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _toml_strings(item)


def product_strings() -> Iterator[tuple[str, str]]:
    """``(where, text)`` for every string the product may show someone."""
    for path in sorted(PACKAGE.rglob("*.py")):
        for text in _code_strings(path):
            yield str(path.relative_to(PACKAGE)), text
    for path in sorted(PACKAGE.rglob("*.toml")):
        document = tomllib.loads(path.read_text(encoding="utf-8"))
        for text in _toml_strings(document):
            yield str(path.relative_to(PACKAGE)), text
    for suffix in ("*.js", "*.html"):
        for path in sorted(PACKAGE.rglob(suffix)):
            yield str(path.relative_to(PACKAGE)), path.read_text(encoding="utf-8")


def told() -> list[tuple[str, tuple[str, ...], str]]:
    """``(program, words, where)`` of every command the product tells someone to run."""
    found = []
    for where, text in product_strings():
        matches = [*SPAN.finditer(text), *LINE.finditer(text)]
        for match in matches:
            words = tuple(match.group(2).split())
            if words:
                found.append((match.group(1), words, where))
    return found


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def problem(program: str, words: tuple[str, ...]) -> str | None:
    """What is wrong with ``program words...`` as a command line (None: it exists)."""
    commands = _choices(watch_parser() if program == "discord-watch" else mcp_parser())
    first = words[0]
    if first not in commands:
        return f"{program} has no command {first!r} (it has {', '.join(sorted(commands))})"
    if len(words) < 2:
        return None
    if program == "discord-mcp" and first == "hook":
        return None if words[1] in HOOK_EVENTS else f"there is no hook event {words[1]!r}"
    inner = _choices(commands[first])
    if inner and words[1] not in inner:
        return f"`{program} {first}` has no command {words[1]!r} (it has {', '.join(inner)})"
    return None


def test_every_command_the_product_tells_someone_to_run_exists() -> None:
    commands = told()
    named = {(program, words[0]) for program, words, _ in commands}
    # The scan finds what it must (else the test would prove nothing):
    assert {("discord-mcp", "doctor"), ("discord-mcp", "setup"), ("discord-watch", "status")} <= (
        named
    )
    wrong = sorted(
        f"{where}: `{program} {' '.join(words)}`: {why}"
        for program, words, where in commands
        if (why := problem(program, words)) is not None
    )
    assert wrong == []


def test_the_check_itself_catches_a_command_that_does_not_exist() -> None:
    assert problem("discord-watch", ("start",)) is not None
    assert problem("discord-watch", ("project", "rename")) is not None
    assert problem("discord-mcp", ("hook", "after-tool")) is not None
    assert problem("discord-watch", ("project", "add")) is None
    assert problem("discord-mcp", ("hook", "before-tool")) is None
