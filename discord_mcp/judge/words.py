"""A shell command as the words one program gets, or None when the shell would do more.

Theory. A judgement about a command is only as good as our reading of it. The agent's shell
(``bash -c``) expands, redirects, substitutes and chains; a reader that misses one of those
judges a command that never runs. So :func:`split` reads a deliberately small shell: plain
words separated by spaces, single quotes, double quotes without ``$``, backticks or
``!``, and backslash escapes. Anything else is refused, whether or not it would be harmless:

- operators and syntax: ``| & ; < > ( )`` (pipes, lists, background, redirections,
  subshells, process substitution) and a ``#`` (a comment hides words from the eye);
- expansions whose result we cannot see: ``$`` (variables, ``$(...)``, ``$'...'``),
  backticks, unquoted globs ``* ? [ ]``, braces ``{ }``, history ``!``, ``~user``;
- ``NAME=value`` as the first word (an environment assignment, e.g. ``LD_PRELOAD``);
- characters a person could misread: every control character (tabs and line breaks too),
  every non-ASCII character that is not a letter, mark or digit (invisible spaces, bidi
  controls, full-width punctuation).

``~`` at the start of a word (alone or before ``/``) is kept as it is: the shell makes it the
home directory, and the secret checks read ``~/.ssh`` for what it is.
"""

from __future__ import annotations

import unicodedata

_WORD_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+@%^~"
)
"""Characters a word may hold unquoted (``~`` at a word's start only as ``~`` or ``~/``)."""
_QUOTABLE = frozenset(chr(c) for c in range(0x20, 0x7F))
"""ASCII characters a quoted word may hold (printable only)."""
_DOUBLE_QUOTE_SPECIAL = frozenset("$`!")
_DOUBLE_QUOTE_ESCAPES = frozenset('"\\$`')
_SEPARATORS = frozenset(" ")


def _plain_letter(ch: str) -> bool:
    """A non-ASCII character that reads as what it is: a letter, a mark or a digit."""
    return ord(ch) > 0x7F and unicodedata.category(ch)[0] in "LMN"


def readable(command: str) -> bool:
    """Every character is printable ASCII, or a non-ASCII letter or digit, or a mark that
    follows one (a combining mark on an ASCII letter makes a look-alike)."""
    previous = " "
    for ch in command:
        if ord(ch) > 0x7F:
            kind = unicodedata.category(ch)[0]
            if kind not in "LMN" or (kind == "M" and ord(previous) <= 0x7F):
                return False
        elif ch not in _QUOTABLE:
            return False
        previous = ch
    return True


def split(command: str) -> list[str] | None:
    """The words of ``command`` as one program gets them, or None (see the module doc)."""
    if not readable(command):
        return None
    words: list[str] = []
    current: list[str] = []
    in_word = False
    word_start = True
    i = 0
    length = len(command)
    while i < length:
        ch = command[i]
        if ch in _SEPARATORS:
            if in_word:
                words.append("".join(current))
                current, in_word = [], False
            word_start = True
            i += 1
            continue
        if ch == "'":
            end = command.find("'", i + 1)
            if end < 0:
                return None
            current.append(command[i + 1 : end])
            i = end + 1
        elif ch == '"':
            i += 1
            while True:
                if i >= length:
                    return None
                c = command[i]
                if c == '"':
                    i += 1
                    break
                if c in _DOUBLE_QUOTE_SPECIAL:
                    return None
                if c == "\\" and i + 1 < length and command[i + 1] in _DOUBLE_QUOTE_ESCAPES:
                    if command[i + 1] in "$`":
                        return None  # legal, but not worth the risk of misreading
                    current.append(command[i + 1])
                    i += 2
                    continue
                current.append(c)
                i += 1
        elif ch == "\\":
            if i + 1 >= length:
                return None
            current.append(command[i + 1])
            i += 2
        elif ch == "~" and word_start:
            if command[i + 1 : i + 2] not in ("", "/", " "):
                return None  # ~user, ~+, ~-: someone else's directory, or the stack's
            current.append(ch)  # ~ and ~/...: the home directory, read for what it is
            i += 1
        elif ch in _WORD_CHARS or _plain_letter(ch):
            current.append(ch)
            i += 1
        else:
            return None
        in_word, word_start = True, False
    if in_word:
        words.append("".join(current))
    if not words or "=" in words[0]:
        return None
    return words
