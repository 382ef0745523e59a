"""Whether a sed script only edits the text it prints: parsed, command by command.

sed can run commands (``e``, the ``s///e`` flag), write files (``w``, ``W``, the ``s///w``
flag) and read them (``r``, ``R``), anywhere in a script and after any address (``sed -n '1e
touch X'``). Searching the script for letters is not enough (an ``e`` is also a letter in a
pattern), so :func:`only_prints` reads the script as GNU sed does: addresses (numbers, ``$``,
``/regex/``, ``\\cregexc``, ``first~step``, ranges, ``!``), then one command each, separated by
``;`` or braces. Only commands that print or edit the pattern and hold spaces pass; anything
else, and anything we cannot read for certain, fails.

One ambiguity between GNU and BSD sed (macOS): BSD ends a regex at its delimiter only outside
a bracket expression. A bracket expression that holds the delimiter reads differently in the
two, so it fails.
"""

from __future__ import annotations

_SIMPLE = frozenset("=dDgGhHnNpPxzF")
"""Commands without arguments that only print or edit the buffers."""
_NUMBERED = frozenset("lLqQ")
"""Commands with an optional number (line length, exit code)."""
_JUMPS = frozenset("btT")
_TEXT = frozenset("aic")
_S_FLAGS = frozenset("gpiImM0123456789")
_LABEL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


class _Unsafe(Exception):
    """The script does (or may do) more than print."""


def only_prints(script: str) -> bool:
    """Whether ``script`` only prints and edits text (see the module doc)."""
    try:
        _Reader(script).read()
    except _Unsafe:
        return False
    return True


class _Reader:
    def __init__(self, script: str) -> None:
        self.text = script
        self.at = 0

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def take(self) -> str:
        if self.at >= len(self.text):
            raise _Unsafe("unexpected end")
        ch = self.text[self.at]
        self.at += 1
        return ch

    def spaces(self) -> None:
        while self.peek() in (" ", "\t") and self.peek():
            self.at += 1

    def read(self) -> None:
        depth = 0
        while True:
            while self.peek() and self.peek() in " \t;":
                self.at += 1
            if not self.peek():
                break
            if self.peek() == "#":
                break  # a comment to the end of the (only) line
            if self.peek() == "}":
                self.at += 1
                depth -= 1
                if depth < 0:
                    raise _Unsafe("unbalanced }")
                continue
            self.address()
            command = self.take()
            if command == "{":
                depth += 1
            elif command in _SIMPLE:
                pass
            elif command in _NUMBERED:
                self.spaces()
                while self.peek().isdigit():
                    self.at += 1
            elif command in _JUMPS or command == ":":
                self.label(required=command == ":")
            elif command in _TEXT:
                self.at = len(self.text)  # the rest of the line is text to print
            elif command == "y":
                delimiter = self.delimiter()
                self.part(delimiter, regex=False)
                self.part(delimiter, regex=False)
            elif command == "s":
                delimiter = self.delimiter()
                self.part(delimiter, regex=True)
                self.part(delimiter, regex=False)
                self.s_flags()
            else:
                raise _Unsafe(f"command {command!r}")  # e w W r R v and the unknown
        if depth:
            raise _Unsafe("unbalanced {")

    def address(self) -> None:
        if not self.one_address():
            return
        self.spaces()
        if self.peek() == ",":
            self.at += 1
            self.spaces()
            if self.peek() in ("+", "~"):
                self.at += 1
                if not self.peek().isdigit():
                    raise _Unsafe("bad address step")
                while self.peek().isdigit():
                    self.at += 1
            elif not self.one_address():
                raise _Unsafe("missing second address")
        self.spaces()
        while self.peek() == "!":
            self.at += 1
            self.spaces()

    def one_address(self) -> bool:
        ch = self.peek()
        if ch.isdigit():
            while self.peek().isdigit():
                self.at += 1
            if self.peek() == "~":
                self.at += 1
                while self.peek().isdigit():
                    self.at += 1
            return True
        if ch == "$":
            self.at += 1
            return True
        if ch in ("/", "\\"):
            self.at += 1
            delimiter = "/" if ch == "/" else self.delimiter()
            self.part(delimiter, regex=True)
            while self.peek() in ("I", "M") and self.peek():
                self.at += 1
            return True
        return False

    def delimiter(self) -> str:
        delimiter = self.take()
        if delimiter in ("\\", "\n", "") or delimiter.isspace():
            raise _Unsafe("bad delimiter")
        return delimiter

    def part(self, delimiter: str, *, regex: bool) -> None:
        """Skip to just after the next unescaped ``delimiter``."""
        while True:
            ch = self.take()
            if ch == "\\":
                self.take()
            elif ch == delimiter:
                return
            elif ch == "[" and regex:
                self.bracket(delimiter)

    def bracket(self, delimiter: str) -> None:
        """A bracket expression holding the delimiter reads differently in GNU and BSD sed."""
        end = self.at
        if self.text[end : end + 1] == "^":
            end += 1
        if self.text[end : end + 1] == "]":
            end += 1
        close = self.text.find("]", end)
        if close < 0 or delimiter in self.text[self.at : close]:
            raise _Unsafe("bracket expression with the delimiter")

    def s_flags(self) -> None:
        while self.peek() and self.peek() not in " \t;}#":
            if self.peek() not in _S_FLAGS:
                raise _Unsafe(f"s flag {self.peek()!r}")  # e (execute), w (write)
            self.at += 1

    def label(self, *, required: bool) -> None:
        self.spaces()
        start = self.at
        while self.peek() and self.peek() not in " \t;}":
            if self.peek() not in _LABEL:
                raise _Unsafe("odd label")
            self.at += 1
        if required and self.at == start:
            raise _Unsafe("empty label")
