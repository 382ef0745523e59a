"""A program's options as a table, and a command's words read against it.

A :class:`Table` lists every option we know to be harmless for one program (or one git
subcommand): those that stand alone, those that take a value (``-n 5``, ``-n5``,
``--lines=5``, ``--lines 5``) and long options whose value may only follow ``=``
(``--color[=WHEN]``). :func:`parse` reads words the way getopt does (clustered short options,
``--`` ending the options, options anywhere among the operands) and fails on any option the
table does not name, so an unknown option, a misspelling or an abbreviation (``--comp`` for
``--compress-program``, which getopt would accept) always asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True, slots=True)
class Table:
    """The options of one program that we know to be harmless.

    Attributes:
        plain: options that take no value (``-l --all``).
        valued: options that take a value, attached or as the next word (``-n --lines``).
        optional: long options whose value may only follow ``=`` (``--color``).
        numeric: ``-NUM`` is an option (``head -5``, ``git log -3``).
        patterns: valued options whose value is a pattern, not a path to read (``--glob``).
    """

    plain: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    numeric: bool = False
    patterns: frozenset[str] = field(default=frozenset())

    @classmethod
    def of(
        cls,
        plain: str = "",
        valued: str = "",
        optional: str = "",
        *,
        numeric: bool = False,
        patterns: str = "",
    ) -> Table:
        """A table from space-separated option lists."""
        return cls(_set(plain), _set(valued), _set(optional), numeric, _set(patterns))

    def knows(self, option: str) -> bool:
        """Whether ``option`` (a bare name like ``-n`` or ``--lines``) is in the table."""
        name = option.split("=", 1)[0]
        return name in self.plain or name in self.valued or name in self.optional


@dataclass(frozen=True, slots=True)
class Parsed:
    """Words read against a table: options as ``(name, value)`` and operands, in order."""

    options: tuple[tuple[str, str | None], ...]
    operands: tuple[str, ...]

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def values(self, *names: str) -> list[str]:
        return [value for name, value in self.options if name in names and value is not None]


def parse(words: Sequence[str], table: Table) -> Parsed | None:
    """Read ``words`` (without the program) against ``table``; None on any unknown option,
    a missing value, or a value given to an option that takes none."""
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            operands.extend(words[index:])
            break
        if word == "-" or not word.startswith("-"):
            operands.append(word)
            continue
        if word.startswith("--"):
            name, equals, value = word.partition("=")
            if name in table.plain and not equals:
                options.append((name, None))
            elif name in table.optional:
                options.append((name, value if equals else None))
            elif name in table.valued:
                if not equals:
                    if index >= len(words):
                        return None
                    value = words[index]
                    index += 1
                options.append((name, value))
            else:
                return None
            continue
        if table.numeric and word[1:].isdigit():
            options.append(("-NUM", word[1:]))
            continue
        read = _short_cluster(word, words, index, table)
        if read is None:
            return None
        found, index = read
        options.extend(found)
    return Parsed(tuple(options), tuple(operands))


def _short_cluster(
    word: str, words: Sequence[str], index: int, table: Table
) -> tuple[list[tuple[str, str | None]], int] | None:
    """``-abc`` / ``-n5`` / ``-n 5``: each letter an option; a valued one takes the rest."""
    found: list[tuple[str, str | None]] = []
    position = 1
    while position < len(word):
        name = "-" + word[position]
        position += 1
        if name in table.plain:
            found.append((name, None))
        elif name in table.valued:
            value = word[position:]
            if not value:
                if index >= len(words):
                    return None
                value = words[index]
                index += 1
            found.append((name, value))
            return found, index
        else:
            return None
    return found, index
