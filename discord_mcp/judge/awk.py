"""awk: the few programs that print fields skip the card; any other program asks.

Theory. awk is a programming language: ``system()``, ``|`` pipes in and out of commands,
``getline < file``, ``print > file``, ``ENVIRON``, gawk's ``@include``/``@load`` and ``-l``,
``PROCINFO``... A reader of the whole language would have to be right about all of it. So
:func:`reads` accepts only this grammar, which has none of those and reads the same in gawk,
mawk and BSD awk::

    program := [ws] rule { between rule } [ws] [";"] [ws]
    between := [ws] ";" [ws] | [ws] (after a rule that ends with "}")
    rule    := ("BEGIN" | "END") [ws] action | condition [ws] action | condition | action
    condition := regex | "!" regex | value [ws] compare [ws] value
               | value [ws] ("~" | "!~") [ws] regex | "NR" | "NF"
    action  := "{" [ws] [statement { [ws] ";" [ws] statement }] [ws] [";"] [ws] "}"
    statement := "print" [ws value { ([ws] "," [ws] | ws) value }] | "next"
    value   := "$" (1 to 3 digits | "NF") | "NR" | "NF" | "FNR" | digits | string
    compare := "==" | "!=" | "<" | "<=" | ">" | ">="

A string is printable ASCII without ``"`` and with a backslash only in ``\\t``, ``\\n``,
``\\\\`` and ``\\"``; a regex is as in :mod:`.sed` (no brackets, no ``/`` inside, few
escapes). ``>`` is a comparison only in a condition, before the action: inside an action there
is nothing but ``print`` and values, so no redirection, pipe or call can be written. The only
option is ``-F`` (a field separator), before the program (awk reads every word after the
program as an operand); an operand with ``=`` (an assignment awk would make), one that starts
with ``-``, or one that looks like a secret asks.
"""

from __future__ import annotations

import re

from discord_mcp.judge.options import Table, parse
from discord_mcp.judge.secrets import looks_secret

PROGRAMS = frozenset({"awk", "gawk", "mawk", "nawk"})
TABLE = Table.of("", "-F")
_SEPARATOR = re.compile(r"(?:\\t|[A-Za-z0-9 ,:;|_./+-])+")
_WS = r" *"
_REGEX_CHARACTER = r"[\x20-\x2e\x30-\x5a\x5e-\x7e]"
"""Printable ASCII but ``/``, ``[``, ``\\`` and ``]``. Written as the ranges it keeps, not as
everything but what it leaves out: a class that excludes up to U+10FFFF costs ``re`` about
0.1 s of CPU to compile, in every hook and server that loads the judge."""
_STRING_CHARACTER = r"[\x20\x21\x23-\x5b\x5d-\x7e]"
"""Printable ASCII but ``"`` and ``\\``."""
_REGEX = rf"/(?:{_REGEX_CHARACTER}|\\[.*^$\\+?(){{}}|])*/"
_STRING = rf'"(?:{_STRING_CHARACTER}|\\[tn\\"])*"'
_VALUE = rf"(?:\$(?:[0-9]{{1,3}}|NF)|NR|NF|FNR|[0-9]+|{_STRING})"
_CONDITION = (
    rf"(?:!?{_REGEX}|{_VALUE}{_WS}(?:==|!=|<=|>=|<|>){_WS}{_VALUE}"
    rf"|{_VALUE}{_WS}!?~{_WS}{_REGEX}|NR|NF)"
)
_PRINT = rf"(?:print(?: +{_VALUE}(?:(?:{_WS},{_WS}| +){_VALUE})*)?|next)"
_ACTION = rf"\{{{_WS}(?:{_PRINT}(?:{_WS};{_WS}{_PRINT})*)?{_WS};?{_WS}\}}"
_RULE = rf"(?:(?:BEGIN|END){_WS}{_ACTION}|{_CONDITION}{_WS}{_ACTION}|{_CONDITION}|{_ACTION})"
_BETWEEN = rf"(?:{_WS};{_WS}|(?<=\}}){_WS})"
"""Rules are separated by ``;``, or follow an action directly (``NF NR`` would be one rule)."""
_PROGRAM = re.compile(rf"{_WS}{_RULE}(?:{_BETWEEN}{_RULE})*{_WS};?{_WS}")


def reads(arguments: list[str]) -> bool:
    """Whether ``awk`` with ``arguments`` only prints fields (see the module doc)."""
    parsed = parse(arguments, TABLE)
    if parsed is None or not parsed.operands:
        return False
    if not all(_SEPARATOR.fullmatch(value) for value in parsed.values("-F")):
        return False
    program, *files = parsed.operands
    if any((f.startswith("-") and f != "-") or "=" in f or looks_secret(f) for f in files):
        return False
    if any(word.startswith("-") and word != "-" for word in _after_program(arguments)):
        return False
    return _PROGRAM.fullmatch(program) is not None


def _after_program(arguments: list[str]) -> list[str]:
    """The words after the program text (the first word that is no option or its value)."""
    index = 0
    while index < len(arguments):
        word = arguments[index]
        if word == "--":
            return arguments[index + 2 :]
        if word == "-F":
            index += 2
        elif word.startswith("-F"):
            index += 1
        else:
            return arguments[index + 1 :]
    return []
