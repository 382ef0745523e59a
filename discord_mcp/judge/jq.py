"""jq: a filter skips the card only when every token of it is on an allow-list.

Theory. jq cannot run programs or write files, but it can read what the owner does not see:
the environment (``env``, ``$ENV``, where tokens live), other files (``import``, ``include``,
``input_filename``, the search path), and its own location (``$__loc__``, ``get_*``). A
search for bad words misses spellings jq accepts (``$ ENV``: a space after ``$`` is still the
variable). So :func:`only_harmless` reads the filter as jq's lexer does and accepts it only
when every token is one of:

- paths: ``.``, ``..``, ``.name`` (any name: a field is data, not a call), ``[``, ``]``;
- literals: numbers, ``true``/``false``/``null``, strings whose escapes are JSON's own
  (``\\"`` ``\\\\`` ``\\/`` ``\\b`` ``\\f`` ``\\n`` ``\\r`` ``\\t`` ``\\uXXXX``), never ``\\(``
  (interpolation runs a filter inside the string);
- operators and punctuation: ``| , ; : ? ( ) { }``, arithmetic, comparison, ``//`` and the
  update-assignments (they build a changed copy of the input);
- ``if then elif else end and or try catch``;
- a builtin from :data:`BUILTINS` (each reads only its input and its arguments, and ends:
  no ``range``, ``repeat``, ``while``, ``until``, ``recurse(f)``, ``combinations``);
- an object key written as a name (``{name: ...}``, ``{name}`` which is ``{name: .name}``);
- a format from :data:`FORMATS` (``@base64``).

Never ``$`` (no variables at all, so no ``$ENV``, ``$__loc__``, ``as``, ``reduce``,
``foreach``, ``label``), ``def``, ``import``, ``include``, ``env``, ``input``/``inputs``,
``input_filename``, ``get_*``, ``builtins``, ``debug``, ``stderr``, ``halt*``, ``#``
comments or ``::``. The options are those that choose how input and output look; never
``-f``, ``-L``, ``--arg*``, ``--rawfile``, ``--slurpfile`` or ``--args``.

Left open: jq 1.6 reads ``~/.jq`` at start when it exists (a file outside the project, which a
sandboxed agent cannot write).
"""

from __future__ import annotations

import re

from discord_mcp.judge.options import Table, parse
from discord_mcp.judge.secrets import looks_secret


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


TABLE = Table.of(
    "-r -j -a -c -s -n -S -C -M -R -e --raw-output --join-output --ascii-output "
    "--compact-output --slurp --null-input --sort-keys --color-output --monochrome-output "
    "--raw-input --exit-status --tab --seq --stream",
    "--indent",
)
BUILTINS = _set(
    """
    length utf8bytelength not keys keys_unsorted values has in inside map map_values path
    paths leaf_paths getpath del to_entries from_entries with_entries select empty error add
    any all flatten floor ceil round sqrt fabs pow log exp log2 log10 tostring tonumber type
    infinite nan isinfinite isnan isnormal sort sort_by group_by min max min_by max_by unique
    unique_by reverse contains startswith endswith ltrimstr rtrimstr explode implode split
    join ascii_downcase ascii_upcase tojson fromjson test match capture scan splits sub gsub
    first last nth limit isempty arrays objects iterables booleans numbers strings nulls
    scalars todate fromdate todateiso8601 fromdateiso8601 dateadd datesub date now mktime
    gmtime localtime strftime strptime tostream fromstream truncate_stream ascii indices
    index rindex transpose walk abs toarray pick trim ltrim rtrim IN INDEX
    true false null
    """
)
"""Builtins (and literals) that read only their input and arguments, and end."""
KEYWORDS = _set("if then elif else end and or try catch")
FORMATS = _set("@text @json @html @uri @csv @tsv @sh @base64 @base64d @base32 @base32d")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_OPERATORS = sorted(
    _set("|= += -= *= /= %= //= == != <= >= // | , ; : ? ( ) [ ] { } + - * / % < > ="),
    key=len,
    reverse=True,
)
_STRING_ESCAPES = frozenset('"\\/bfnrt')
_HEX = frozenset("0123456789abcdefABCDEF")
_PRINTABLE = frozenset(chr(c) for c in range(0x20, 0x7F))


def reads(arguments: list[str]) -> bool:
    """Whether ``jq`` with ``arguments`` only reads what it is shown (see the module doc)."""
    parsed = parse(arguments, TABLE)
    if parsed is None or not parsed.operands:
        return False
    program, *files = parsed.operands
    return only_harmless(program) and not any(looks_secret(f) for f in files)


def only_harmless(program: str) -> bool:
    """Whether every token of the jq filter ``program`` is allowed (see the module doc)."""
    if not program.strip() or not set(program) <= _PRINTABLE or "::" in program:
        return False
    stack: list[str] = []
    key_position = False
    at = 0
    while at < len(program):
        ch = program[at]
        if ch == " ":
            at += 1
            continue
        was_key_position, key_position = key_position, False
        if ch == '"':
            end = _string_end(program, at)
            if end < 0:
                return False
            at = end
            continue
        if ch == "@":
            name = _NAME.match(program, at + 1)
            if name is None or "@" + name.group() not in FORMATS:
                return False
            at = name.end()
            continue
        number = _NUMBER.match(program, at)
        if number is not None:
            at = number.end()
            continue
        if program.startswith("..", at):
            at += 2
            if at < len(program) and (program[at] in '."' or _NAME.match(program, at)):
                return False
            continue
        if ch == ".":
            field = _NAME.match(program, at + 1)
            at = field.end() if field is not None else at + 1
            continue
        name = _NAME.match(program, at)
        if name is not None:
            word = name.group()
            at = name.end()
            following = program[at:].lstrip(" ")[:1]
            if was_key_position and following in (":", ",", "}"):
                continue  # an object key: {name: ...} or {name} (which is {name: .name})
            if word not in BUILTINS and word not in KEYWORDS:
                return False
            continue
        operator = next((op for op in _OPERATORS if program.startswith(op, at)), None)
        if operator is None:
            return False  # $ # ` ! and anything else
        at += len(operator)
        if operator in ("(", "[", "{"):
            stack.append(operator)
        elif operator in (")", "]", "}") and (
            not stack or "([{"[")]}".index(operator)] != stack.pop()
        ):
            return False
        key_position = operator == "{" or (operator == "," and stack[-1:] == ["{"])
    return not stack


def _string_end(program: str, at: int) -> int:
    """Just past the string starting at ``at`` (a ``"``), or -1 when it is not allowed."""
    at += 1
    while at < len(program):
        ch = program[at]
        if ch == '"':
            return at + 1
        if ch == "\\":
            escaped = program[at + 1 : at + 2]
            if escaped == "u":
                digits = program[at + 2 : at + 6]
                if len(digits) != 4 or not set(digits) <= _HEX:
                    return -1
                at += 6
                continue
            if escaped not in _STRING_ESCAPES or not escaped:
                return -1  # \( interpolation, and anything jq would reject
            at += 2
            continue
        at += 1
    return -1
