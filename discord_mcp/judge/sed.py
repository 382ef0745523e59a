"""sed: a narrow grammar the judge reads completely; any other script asks.

Theory. sed can run commands (``e``, the ``s///e`` flag), write files (``w``, ``W``, the
``s///w`` flag) and read them (``r``, ``R``), after any address and in places a reader of
sed's full grammar can misjudge: GNU sed reads ``/`` inside ``[[:alpha:]/]`` as part of the
bracket, so a parser that ends the bracket early never sees the ``e`` flag after it. A parser
that understands every corner of sed will always have one more corner. So :func:`reads`
accepts only a grammar small enough that every script it accepts has one reading (in GNU
sed; BSD sed reads it the same or refuses it: ``{p;q}`` wants ``;}`` there), and asks about
everything else::

    script   := [ws] [command] { [ws] ";" [ws] [command] } [ws]
    command  := [address ["," address]] [ws] ["!" [ws]] action
              | [address ["," address]] [ws] ["!" [ws]] "{" script "}"
    address  := digits | "$" | "/" regex "/" ["I"]
    action   := "p" | "d" | "=" | "q" [digits]
              | "s" D regex D replacement D { "g" | "p" | "I" | "i" | digit }

where ``ws`` is spaces, ``D`` one delimiter from ``/ | , : @ %``; a regex or replacement is
printable ASCII without ``[`` ``]`` (no bracket expressions, no classes), without the
delimiter (not even escaped) and with a backslash only before one of a few characters (in a
regex ``. * ^ $ \\ + ? ( ) { } |``, ``n``, ``t`` and a digit; in a replacement ``&``,
``\\``, ``n``, ``t`` and a digit). So a part ends at the first delimiter, whoever reads it;
the flags are letters from a closed set; and no ``e``, ``w``, ``r``, ``W``, ``R``, ``v``,
``F``, ``a``/``i``/``c`` text, label, comment or line break is ever accepted. The options
are ``-n``, ``-E``/``-r``, ``-s``, ``-u``, ``-z``, ``--posix``, ``--sandbox``: never ``-i``,
``-e``, ``-f``, ``-l``.
"""

from __future__ import annotations

from discord_mcp.judge.options import Table, parse
from discord_mcp.judge.secrets import looks_secret

TABLE = Table.of(
    "-n -E -r -s -u -z --quiet --silent --regexp-extended --separate --unbuffered "
    "--null-data --posix --sandbox"
)
_DELIMITERS = frozenset("/|,:@%")
_PRINTABLE = frozenset(chr(c) for c in range(0x20, 0x7F))
_NEVER_IN_PARTS = frozenset("[]")
_REGEX_ESCAPES = frozenset(".*^$\\+?(){}|nt123456789")
_REPLACEMENT_ESCAPES = frozenset("&\\nt123456789")
_FLAGS = frozenset("gpIi0123456789")
_ACTIONS = frozenset("pd=")


def reads(arguments: list[str]) -> bool:
    """Whether ``sed`` with ``arguments`` only prints (see the module doc)."""
    parsed = parse(arguments, TABLE)
    if parsed is None or not parsed.operands:
        return False
    script, *files = parsed.operands
    return only_prints(script) and not any(looks_secret(f) for f in files)


class _Outside(Exception):
    """The script is outside the grammar."""


def only_prints(script: str) -> bool:
    """Whether ``script`` is in the grammar (see the module doc)."""
    if not script.strip() or not set(script) <= _PRINTABLE:
        return False
    try:
        reader = _Reader(script)
        reader.script(depth=0)
        if reader.at != len(script):
            return False
    except _Outside:
        return False
    return True


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def take(self) -> str:
        ch = self.peek()
        if not ch:
            raise _Outside("unexpected end")
        self.at += 1
        return ch

    def spaces(self) -> None:
        while self.peek() == " ":
            self.at += 1

    def script(self, depth: int) -> None:
        """Commands separated by ``;``, up to the end (or the ``}`` of a block)."""
        while True:
            self.spaces()
            ch = self.peek()
            if not ch or ch == "}":
                if (ch == "}") != (depth > 0):
                    raise _Outside("unbalanced braces")
                return
            if ch != ";":
                self.command(depth)
                self.spaces()
                if self.peek() not in ("", ";", "}"):
                    raise _Outside("no ; after a command")
            if self.peek() == ";":
                self.at += 1

    def command(self, depth: int) -> None:
        if self.address():
            if self.peek() == ",":
                self.at += 1
                if not self.address():
                    raise _Outside("missing second address")
            self.spaces()
            if self.peek() == "!":
                self.at += 1
                self.spaces()
        action = self.take()
        if action in _ACTIONS:
            return
        if action == "q":
            self.digits()
        elif action == "s":
            self.substitution()
        elif action == "{":
            self.script(depth + 1)
            self.take()  # the "}" script() stopped at
        else:
            raise _Outside(f"command {action!r}")

    def digits(self) -> bool:
        start = self.at
        while self.peek().isdigit():
            self.at += 1
        return self.at > start

    def address(self) -> bool:
        if self.digits():
            return True
        if self.peek() == "$":
            self.at += 1
            return True
        if self.peek() == "/":
            self.at += 1
            self.part("/", _REGEX_ESCAPES)
            if self.peek() == "I":
                self.at += 1
            return True
        return False

    def substitution(self) -> None:
        delimiter = self.take()
        if delimiter not in _DELIMITERS:
            raise _Outside("delimiter")
        self.part(delimiter, _REGEX_ESCAPES)
        self.part(delimiter, _REPLACEMENT_ESCAPES)
        while self.peek() in _FLAGS and self.peek():
            self.at += 1

    def part(self, delimiter: str, escapes: frozenset[str]) -> None:
        """Up to and past ``delimiter``: no brackets, no other delimiter, few escapes."""
        while True:
            ch = self.take()
            if ch == delimiter:
                return
            if ch in _NEVER_IN_PARTS:
                raise _Outside("bracket")
            if ch == "\\":
                escaped = self.take()
                if escaped not in escapes or escaped == delimiter:
                    raise _Outside("escape")
