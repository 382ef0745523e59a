"""Whether a command's words only read: :func:`reads_only`.

A command only reads when its program is a reader (:mod:`.programs`; git, find, sed, jq and
awk here, which need more than a table), found by name or by its path in a system directory
(``./ls`` is not ``ls``); every option is in the program's table; and no path it reads, in an
operand or an option's value, looks like a secret (:mod:`.secrets`, which compares paths
normalised: ``//dev/sda`` is ``/dev/sda``).

sed, jq and awk take a program of their own; each is accepted only in a grammar small enough
to be read completely (:mod:`.sed`, :mod:`.jq`, :mod:`.awk`), never by searching it for bad
words. ``find`` is read word by word: only tests and ``-print``/``-ls``/``-printf`` actions.

Left out on purpose: pagers and editors (``less``, ``more``, ``vi``: they can run commands),
``env``/``printenv`` (the environment holds tokens), ``ps`` (other processes' command lines),
anything that runs another program (``xargs``, ``timeout``, ``nice``), and every option that
writes a file, runs a program or reads one we do not see (``-o``, ``--pre``,
``-x``/``--exec``, ``-e``, ``-f``, ``--compress-program``, ``--pager``, ``--files0-from``...).
The proof that the accepted forms neither write nor run anything is differential:
``tests/approvals/test_judge_differential.py`` runs thousands of generated commands the judge
calls read-only against the real programs under ``strace``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from discord_mcp.judge import awk, git, jq, sed
from discord_mcp.judge.options import Parsed, parse
from discord_mcp.judge.programs import PATTERN_COUNT, READERS, Reader
from discord_mcp.judge.secrets import looks_secret

SYSTEM_DIRECTORIES = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/opt/homebrew/bin/")
_FIND_PLAIN = frozenset(
    [
        "-print",
        "-print0",
        "-ls",
        "-prune",
        "-not",
        "-a",
        "-o",
        "-and",
        "-or",
        "-true",
        "-false",
        "-readable",
        "-writable",
        "-executable",
        "-empty",
        "-nouser",
        "-nogroup",
        "-xdev",
        "-mount",
        "-noleaf",
        "-daystart",
        "-depth",
        "-quit",
        "-follow",
        "(",
        ")",
        "!",
        ",",
    ]
)
_FIND_PATTERNS = frozenset(
    [
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-lname",
        "-ilname",
    ]
)
_FIND_VALUED = _FIND_PATTERNS | frozenset(
    [
        "-type",
        "-xtype",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-used",
        "-newer",
        "-anewer",
        "-cnewer",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-perm",
        "-links",
        "-inum",
        "-samefile",
        "-maxdepth",
        "-mindepth",
        "-regextype",
        "-fstype",
        "-printf",
    ]
)
_FIND_NEWER = re.compile(r"^-newer[aBcmt][aBcmt]$")


def program_of(word: str) -> str | None:
    """The program a command's first word runs, when we know which: a bare name, or a name
    in a system directory (``/usr/bin/git``); None for any other path (``./ls``)."""
    if "/" not in word:
        return word
    for directory in SYSTEM_DIRECTORIES:
        name = word[len(directory) :]
        if word.startswith(directory) and name and "/" not in name:
            return name
    return None


def reads_only(words: Sequence[str]) -> bool:
    """Whether ``words`` (a command's words, :func:`.words.split`) only read."""
    program = program_of(words[0]) if words else None
    if program is None:
        return False
    arguments = list(words[1:])
    special = _SPECIAL.get(program)
    if special is not None:
        return special(arguments)
    reader = READERS.get(program)
    return reader is not None and _reads_with(program, reader, arguments)


def _reads_with(program: str, reader: Reader, arguments: list[str]) -> bool:
    parsed = parse(arguments, reader.table)
    if parsed is None:
        return False
    if reader.max_operands is not None and len(parsed.operands) > reader.max_operands:
        return False
    if reader.check is not None and not reader.check(parsed):
        return False
    if reader.text:
        patterns = len(parsed.operands)
    elif program in PATTERN_COUNT:
        patterns = PATTERN_COUNT[program](parsed)
    else:
        patterns = reader.patterns
    return _no_secrets(parsed, reader.table.patterns, patterns)


def _git(arguments: list[str]) -> bool:
    read = git.reads(arguments)
    if read is None:
        return False
    parsed, patterns, table = read
    global_words, _ = git.split_global(arguments) or ([], [])
    if any(looks_secret(word) for word in global_words):
        return False
    return _no_secrets(parsed, table.patterns, patterns)


def _no_secrets(parsed: Parsed, pattern_options: frozenset[str], patterns: int) -> bool:
    """No path the command reads looks like a secret: operands after the first ``patterns``,
    and the values of options that are not patterns."""
    if any(looks_secret(operand) for operand in parsed.operands[patterns:]):
        return False
    return not any(
        value is not None and name not in pattern_options and looks_secret(value)
        for name, value in parsed.options
    )


def _find(words: list[str]) -> bool:
    index = 0
    while index < len(words) and words[index] in ("-H", "-L", "-P"):
        index += 1
    starts: list[str] = []
    while index < len(words) and not (
        words[index].startswith("-") or words[index] in ("(", ")", "!", ",")
    ):
        starts.append(words[index])
        index += 1
    if any(looks_secret(start) for start in starts):
        return False
    while index < len(words):
        word = words[index]
        index += 1
        if word in _FIND_PLAIN:
            continue
        if word in _FIND_VALUED or _FIND_NEWER.match(word):
            if index >= len(words):
                return False
            value = words[index]
            index += 1
            if word not in _FIND_PATTERNS and word != "-printf" and looks_secret(value):
                return False
            continue
        return False  # -exec -execdir -ok -okdir -delete -fprint* -fls -files0-from ...
    return True


_SPECIAL: dict[str, Callable[[list[str]], bool]] = {
    "git": _git,
    "find": _find,
    "sed": sed.reads,
    "jq": jq.reads,
    **{name: awk.reads for name in awk.PROGRAMS},
}


def known_flag(program: str, subcommand: str | None, flag: str) -> bool:
    """Whether ``flag`` is an option we know for ``program`` (and git ``subcommand``)."""
    if program == "git":
        table = git.table_for(subcommand or "")
        return table is not None and table.knows(flag)
    if program == "find":
        return flag in _FIND_PLAIN or flag in _FIND_VALUED or bool(_FIND_NEWER.match(flag))
    if program == "sed":
        return sed.TABLE.knows(flag)
    if program == "jq":
        return jq.TABLE.knows(flag)
    if program in awk.PROGRAMS:
        return awk.TABLE.knows(flag)
    reader = READERS.get(program)
    return reader is not None and reader.table.knows(flag)
