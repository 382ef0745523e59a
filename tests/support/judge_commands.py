"""Hypothesis strategies for shell commands near the read-only judge's grammar, per program
family, for the differential test (``tests/approvals/test_judge_differential.py``).

Hypothesis draws the random source of each example (with a fixed seed: ``derandomize``);
each example makes a batch of commands from it, each command from a byte string of choices
that its family's builder turns into words (:class:`Choices`). Drawing every choice as a
Hypothesis value of its own costs about a hundred times more, and the test needs tens of
thousands of commands.

Most commands are built from the forms the judge accepts (its options with plausible values,
the files of :class:`~tests.support.syscall_trace.Sandbox`, sed/awk/jq programs from their
grammars), so that many are judged read-only and really run. Nearly half carry a hostile
mutation: an option, script piece, path or subcommand that writes, runs a program or reads a
secret (the sed bracket case, ``e``/``w`` flags, jq ``$ ENV``, git ``-c``, find ``-exec`` and
``-fprint``, ``sort -S``, ``//proc/self/environ``...). Those must be asked about; if the judge
ever lets one through, the trace shows what it did.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

FILES = ["README.md", "notes.txt", "data.csv", "data.json", "src/app.py", "src/util.py",
         "docs/guide.md", "link", "missing.txt", "./notes.txt", "src/../notes.txt",
         "parts/p01.txt"]  # fmt: skip
DIRECTORIES = [".", "src", "docs", "dirlink", "empty", "parts", "./src", "src/"]
HOSTILE_PATHS = [
    "~/.netrc", "~//.netrc", "~/./.netrc", "../home/.netrc", "src/../../home/.netrc",
    "//proc/self/environ", "/./proc/self/environ", "/proc/self/environ",
    "/proc/../proc/self/environ", "../../../../../../proc/self/environ", ".git/config",
    ".git//config", "./.git/./config", ".git/hooks/../config", "//dev/zero", "/./dev/urandom",
]  # fmt: skip
CHOICE_BYTES = 96
"""Bytes drawn per command: enough for every choice of the largest family's builder."""


def join(words: list[str]) -> str:
    return shlex.join(words)


class Choices:
    """The choices that make one command, read from bytes Hypothesis drew (see the module
    doc): each choice takes two bytes, and the bytes wrap around when a command needs more."""

    def __init__(self, data: bytes) -> None:
        self.data = data or b"\0"
        self.at = 0

    def number(self, low: int, high: int) -> int:
        """A number from ``low`` to ``high``."""
        first = self.data[self.at % len(self.data)]
        second = self.data[(self.at + 1) % len(self.data)]
        self.at += 2
        return low + (first << 8 | second) % (high - low + 1)

    def pick(self, pool: Sequence[str]) -> str:
        """One of ``pool``."""
        return pool[self.number(0, len(pool) - 1)]

    def some(self, pool: Sequence[str], most: int = 3) -> list[str]:
        """Up to ``most`` of ``pool``."""
        return [self.pick(pool) for _ in range(self.number(0, most))]

    def chance(self, percent: int = 45) -> bool:
        """True about ``percent`` times in a hundred: whether to mutate a command."""
        return self.number(0, 99) < percent


def family(build: Callable[[Choices], str], count: int) -> SearchStrategy[list[str]]:
    """The strategy of one family: ``count`` commands from one random source Hypothesis
    draws (and seeds: a fixed seed under ``derandomize``), each built by ``build``."""
    return st.randoms(use_true_random=True).map(
        lambda source: [build(Choices(source.randbytes(CHOICE_BYTES))) for _ in range(count)]
    )


def paths(c: Choices, pool: list[str], most: int = 2, hostile: bool = False) -> list[str]:
    paths = c.some(pool, most)
    if hostile:
        paths.insert(c.number(0, len(paths)), c.pick(HOSTILE_PATHS))
    return paths


def mixed(c: Choices, options: list[str], operands: list[str]) -> list[str]:
    """Options and operands in an order getopt reads the same way (options first, mostly)."""
    if c.number(0, 1) == 1 or not options:
        return [*options, *operands]
    at = c.number(0, len(operands))
    return [*operands[:at], *options, *operands[at:]]


# -- sed -------------------------------------------------------------------------------------

SED_OPTIONS = ["-n", "-E", "-r", "-s", "-u", "-z", "--posix", "--sandbox", "--quiet", "-nE"]
SED_HOSTILE_OPTIONS = ["-i", "-i.bak", "--in-place", "-e", "--debug", "-l 5", "-c",
                       "--follow-symlinks", "-f notes.txt", "--expression=p"]  # fmt: skip
SED_REGEX = ["a", "e", "l", "alpha", "line", "x1", ".", " ", "*", ".*", "^", "$", "\\.",
             "\\*", "\\(a\\)", "\\(l\\)", "+", "?", "|", "-", "_", "=", "&", "{", "}",
             "\\n", "\\t", "\\$", "\\^", "#", ";", "!"]  # fmt: skip
SED_HOSTILE_REGEX = ["[/]", "[[:alpha:]/]", "[a-z]", "[^a]", "\\w", "\\x2f", "\\cA", "\\o57",
                     "\\d047", "\\/", "\\|", "\\"]  # fmt: skip
SED_REPLACEMENT = ["b", "X", "&", "\\1", "\\n", "\\t", "-", "_", " ", "\\&", "\\\\", "e", ";"]
SED_HOSTILE_REPLACEMENT = ["\\U&", "\\L", "[b]", "\\/", "\\x41", "\\"]
SED_FLAGS = ["", "g", "p", "I", "i", "2", "gp", "gI", "3g", "pi"]
SED_HOSTILE_FLAGS = ["e", "w out", "gw out", "m", "M", " e", "2e", "e;", "w /dev/stdout", "W"]
SED_ADDRESSES = ["", "", "1", "3", "$", "2,4", "1,$", "/alpha/", "/^#/", "/a/I", "3,/e/",
                 "0,/a/", "$!", "2!", "/x/,$"]  # fmt: skip
SED_HOSTILE_ADDRESSES = ["1~2", "1,+2", "1,~4", "\\,x,", "/x/M", "/[/]/", "0~3"]
SED_ACTIONS = ["p", "d", "=", "q", "q1", "q5"]
SED_HOSTILE_ACTIONS = ["e", "e touch X", "w out", "W out", "r notes.txt", "R notes.txt",
                       "a text", "i text", "c text", "y/ab/xy/", "v", "F", "z", "l", "n",
                       "N", "x", "G", "h", "b", ":a", "Q", "L", "T", "t", "D", "P", "#n",
                       "e id"]  # fmt: skip
REVIEW_SED = "s/.*[[:alpha:]/]/ a;touch X;id/e"


def _sed_command(c: Choices, hostile: bool) -> str:
    kind = c.pick(["action", "action", "s", "s", "s", "block"])
    if kind == "s":
        delimiter = c.pick("/|,:@%")
        regex = "".join(c.some(SED_REGEX, 4)) or "a"
        replacement = "".join(c.some(SED_REPLACEMENT, 3))
        flags = c.pick(SED_FLAGS)
        if hostile:
            part = c.pick(["regex", "replacement", "flags", "delimiter"])
            if part == "regex":
                regex += c.pick(SED_HOSTILE_REGEX)
            elif part == "replacement":
                replacement += c.pick(SED_HOSTILE_REPLACEMENT)
            elif part == "flags":
                flags += c.pick(SED_HOSTILE_FLAGS)
            else:
                delimiter = c.pick(["x", ";", "}", " ", "\\", "e", "[", "s"])
        regex = regex.replace(delimiter, "") if not hostile else regex
        body = f"s{delimiter}{regex}{delimiter}{replacement}{delimiter}{flags}"
    elif kind == "block":
        inner = c.some(SED_ACTIONS, 3) or ["p"]
        body = "{" + ";".join(inner) + "}"
    else:
        body = c.pick(SED_HOSTILE_ACTIONS if hostile else SED_ACTIONS)
    pool = SED_HOSTILE_ADDRESSES if hostile and c.number(0, 1) == 1 else SED_ADDRESSES
    address = c.pick(pool)
    return address + c.pick(["", " "]) + body


def sed(c: Choices) -> str:
    hostile = c.chance()
    where = c.number(0, 3) if hostile else -1
    commands = [_sed_command(c, False) for _ in range(c.number(1, 3))]
    if where in (0, 1):
        commands.insert(c.number(0, len(commands)), _sed_command(c, True))
    script = c.pick([";", "; ", " ;"]).join(commands)
    if where == 1 and c.number(0, 9) == 0:
        script = REVIEW_SED
    options = c.some(SED_OPTIONS, 2)
    if where == 2:
        options.append(c.pick(SED_HOSTILE_OPTIONS))
    files = paths(c, FILES, 2, hostile=where == 3)
    words = [w for o in options for w in o.split(" ")]
    return join(["sed", *mixed(c, words, [script, *files])])


# -- awk -------------------------------------------------------------------------------------

AWK_VALUES = ["$1", "$2", "$3", "$NF", "$0", "NR", "NF", "FNR", '"-"', '" "', '"x\\t"', "7"]
AWK_CONDITIONS = ["/alpha/", "!/beta/", "NR==2", "NR>1", "NF>2", '$1=="alpha"', "$2 ~ /a/",
                  "$3 !~ /x/", "NR", "NF", "NR<=3", "$2 != 3"]  # fmt: skip
AWK_HOSTILE = ['system("touch X")', 'print > "out"', 'print | "cat"', 'print >> "out"',
               '"id" | getline x', 'getline x < "notes.txt"', 'print ENVIRON["JUDGE_MARKER"]',
               'print PROCINFO["pid"]', 'printf "%s\\n", $1', "print $(1)", 'close("x")',
               "fflush()", 'print > "/dev/stderr"', "print toupper($1)", "x=1",
               'while (("id" | getline l) > 0) print l', "print ENVIRON", "print $1000",
               'print "\\x41"', "print /[/]/"]  # fmt: skip
AWK_HOSTILE_OPTIONS = ["-v x=1", "-f notes.txt", "--exec notes.txt", "-W exec", "-l filefuncs",
                       "-i inplace", "-E notes.txt", "-e 1", "--sandbox", "-F"]  # fmt: skip


def _awk_rule(c: Choices, hostile: bool) -> str:
    statements = []
    for _ in range(c.number(1, 2)):
        values = c.some(AWK_VALUES, 3)
        separator = c.pick([", ", " ", ","])
        statements.append(("print " + separator.join(values)).strip())
    if hostile:
        statements.append(c.pick(AWK_HOSTILE))
    action = "{" + "; ".join(statements) + "}"
    shape = c.pick(["action", "condition action", "condition", "begin", "end"])
    condition = c.pick(AWK_CONDITIONS)
    if shape == "condition" and not hostile:
        return condition
    if shape == "begin":
        return "BEGIN " + action
    if shape == "end":
        return "END" + action
    return (condition + " " if shape == "condition action" else "") + action


def awk(c: Choices) -> str:
    hostile = c.chance()
    where = c.number(0, 2) if hostile else -1
    rules = [_awk_rule(c, False) for _ in range(c.number(1, 2))]
    if where == 0:
        rules.append(_awk_rule(c, True))
    program = c.pick(["; ", " "]).join(rules)
    program = program.replace("} {", "}{") if c.number(0, 1) == 1 else program
    options = [f"-F{s}" for s in c.some([",", ":", " ", "\\t", "x"], 1)]
    if where == 1:
        options += c.pick(AWK_HOSTILE_OPTIONS).split(" ")
    files = paths(c, FILES, 2, hostile=where == 2 and c.number(0, 1) == 1)
    if where == 2 and not any(f in HOSTILE_PATHS for f in files):
        files.append(c.pick(["x=1", "FS=:", "-", "--"]))
    program_name = c.pick(["awk", "gawk", "mawk"])
    return join([program_name, *options, program, *files])


# -- jq --------------------------------------------------------------------------------------

JQ_PATHS = [".", ".name", ".items", ".items[0]", ".items[]", ".a.b", ".a.b[1:]", '.["name"]',
            ".scripts", "..", ".a?", ".items[].id", ".items[1:3]", '."a"', ".a.c"]  # fmt: skip
JQ_FILTERS = ["length", "keys", "map(.id)", "select(.x > 2)", "sort_by(.id)", "group_by(.x)",
              "to_entries", "tostring", "add", "first", "last", "unique", "type",
              'has("a")', "{id: .id}", "[.[]]", '"lit"', "1 + 2", "if . then 1 else 2 end",
              '.name // "none"', "@base64", 'test("a")', "tojson", "[paths]",
              "limit(2; .[])", "walk(.)", "del(.a)", "with_entries(.)", "{name, a}",
              "not", ".[] | numbers", "values", "ascii_downcase", "flatten", "min", "max",
              "{(.name): 1}", "try error(\"x\") catch .", "length > 1 and true",
              "split(\"a\")", "join(\",\")", "tostream", "@csv", "@sh", "empty"]  # fmt: skip
JQ_HOSTILE = ["env", "$ENV", "$ ENV", "$ENV.JUDGE_MARKER", "env.JUDGE_MARKER", "[env]",
              "{a: env}", "$__loc__", "input_filename", "input", "[inputs]", '"\\(env)"',
              '@sh "\\(env)"', "def f: env; f", 'import "a" as a; .', 'include "a"; .',
              "get_search_list", "builtins", "debug", "stderr", "$__prog_args",
              'getpath(["a"]) | env', ". as $x | $x", "reduce . as $x (0; 1)",
              "label $f | 1", ".. | env", "input_line_number", "{(env|tostring): 1}",
              "{$ENV}", "$ENV | tostring", "env | keys", "halt_error", "get_prog_origin",
              "splits(env)", "ENV", "# c\n."]  # fmt: skip
JQ_OPTIONS = ["-r", "-c", "-S", "-n", "-s", "-M", "--tab", "--indent 1", "-e", "-j", "-a",
              "--seq", "--stream", "-C", "-R"]  # fmt: skip
JQ_HOSTILE_OPTIONS = ["--arg x y", "--argjson x 1", "--rawfile x notes.txt",
                      "--slurpfile x data.json", "-f notes.txt", "-L .", "--args",
                      "--jsonargs", "--run-tests"]  # fmt: skip


def jq(c: Choices) -> str:
    hostile = c.chance()
    where = c.number(0, 2) if hostile else -1
    pieces = [c.pick(JQ_PATHS), *c.some(JQ_FILTERS, 2)]
    if where == 0:  # last, often: what follows it may hide what it printed
        at = len(pieces) if c.chance(60) else c.number(0, len(pieces))
        pieces.insert(at, c.pick(JQ_HOSTILE))
    program = c.pick([" | ", "|"]).join(pieces)
    options = [w for o in c.some(JQ_OPTIONS, 2) for w in o.split(" ")]
    if where == 1:
        options += c.pick(JQ_HOSTILE_OPTIONS).split(" ")
    files = [] if "-n" in options else paths(c, ["data.json", "data.json", "missing.txt"], 1)
    if not files and "-n" not in options:
        files = ["data.json"]  # jq reads no input from /dev/null: nothing would run
    if where == 2:
        files.append(c.pick(HOSTILE_PATHS))
    return join(["jq", *mixed(c, options, [program, *files])])
