"""Secrets out of everything the bot posts for an agent.

Theory. An agent reads files and command output all day; a careless ``notify`` or a log file
sent with ``send_message`` could carry a key to a Discord channel other people can read. Every
text the bot posts for an agent (messages, questions, options, status cards, text files) goes
through :func:`redact` first. What it finds is replaced by ``[redacted: <kind>]`` and named in
the tool's result, so the agent knows its message changed.

The shapes are data (:data:`PATTERNS`): one row per kind, each a regular expression whose
``secret`` group (or whole match) is the part replaced. Known formats with a fixed prefix
(GitHub, Slack, AWS key ids, ...) are matched anywhere; the generic ``password=...`` rule is
careful, since code and prose are full of the word: it takes only a value assigned to a
secret-sounding name, and leaves alone values that look like code (calls, references to
variables or settings, templates) or placeholders (``***``, ``<your-password>``, ``changeme``).
Besides the shapes, values the process knows to be secret (the bot token) are replaced wherever
they appear, in the forms they hide in (:func:`_forms`): split over lines or with invisible
characters (:data:`INVISIBLE`) between their characters, as hex, and as base64 (standard or
URL-safe, padded or not). Inside a longer base64 text the token's bytes start at any offset: the
characters that encode only its bytes are one of three strings, one per alignment (the bytes
from the first, second or third byte on, in whole groups of three), and each is searched; at
most two bytes at either end of the token survive, mixed into the characters around the mark.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

_KEY_NAME = (
    r"[A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd|secret|api[_-]?key|apikey|access[_-]?key"
    r"|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|private[_-]?key"
    r"|credentials?)[A-Za-z0-9_.-]*"
)


@dataclass(frozen=True, slots=True)
class Shape:
    """One kind of secret: its name as the result reports it, and how to find it."""

    kind: str
    pattern: re.Pattern[str]


def _shape(kind: str, regex: str, flags: int = 0) -> Shape:
    return Shape(kind, re.compile(regex, flags))


PATTERNS: tuple[Shape, ...] = (
    _shape(
        "private key",
        r"(?P<secret>-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z))",
        re.DOTALL,
    ),
    _shape(
        "Discord bot token",
        r"(?<![A-Za-z0-9_-])(?P<secret>[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}"
        r"\.[A-Za-z0-9_-]{27,40})(?![A-Za-z0-9_-])",
    ),
    _shape(
        "Discord webhook URL",
        r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api(?:/v\d+)?/webhooks/\d+/"
        r"(?P<secret>[A-Za-z0-9_-]{20,})",
    ),
    _shape("GitHub token", r"\b(?P<secret>gh[pousr]_[A-Za-z0-9]{36,255})\b"),
    _shape("GitHub token", r"\b(?P<secret>github_pat_[A-Za-z0-9_]{22,255})\b"),
    _shape("Anthropic API key", r"\b(?P<secret>sk-ant-[a-z]+\d*-[A-Za-z0-9_-]{20,})"),
    _shape(
        "OpenAI API key",
        r"\b(?P<secret>sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}"
        r"|sk-[A-Za-z0-9]{20,}T3BlbkFJ[A-Za-z0-9]{20,}|sk-[A-Za-z0-9]{40,})",
    ),
    _shape("AWS access key id", r"\b(?P<secret>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b"),
    _shape(
        "AWS secret access key",
        r"(?i:aws_?secret_?(?:access_?)?key)[\"']?\s*[:=]\s*[\"']?"
        r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
    ),
    _shape("Slack token", r"\b(?P<secret>xox[abposr]-[A-Za-z0-9-]{10,})"),
    _shape(
        "Slack webhook URL",
        r"https://hooks\.slack\.com/services/(?P<secret>T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+)",
    ),
    _shape("Google API key", r"\b(?P<secret>AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])"),
    _shape("Google OAuth secret", r"\b(?P<secret>GOCSPX-[A-Za-z0-9_-]{20,})"),
    _shape("Google OAuth token", r"\b(?P<secret>ya29\.[0-9A-Za-z_-]{20,})"),
    _shape("Stripe key", r"\b(?P<secret>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,})"),
    _shape(
        "JSON web token",
        r"\b(?P<secret>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,})",
    ),
    _shape("bearer token", r"(?i:\bbearer)\s+(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)"),
    _shape(
        "password in a URL",
        r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]+:(?P<secret>[^\s/@]{3,})@[^\s/@]",
    ),
    _shape(
        "password",
        r"(?i:\b" + _KEY_NAME + r")[\"']?\s*(?::=|=>|[:=])\s*"
        r"(?P<secret>\"[^\"\n]{4,}\"|'[^'\n]{4,}'|[^\s\"'`,;]{8,})",
    ),
)
"""Every shape, most specific first (a text already replaced is not matched again)."""

_CODE_LIKE = re.compile(
    r"""[()\[\]{}<>$%]            # a call, an index, a template, an interpolation
    |^(?:os|process|env|self|this|settings|config|cfg|args|opts|options|request|req|params)\.
    |^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$   # a dotted reference
    |^[A-Z][A-Z0-9_]*$                                        # another variable's NAME
    |^(?:str|int|bytes|bool|string|none|null|nil|true|false|undefined|required|optional)$
    """,
    re.VERBOSE | re.IGNORECASE,
)
_PLACEHOLDER = re.compile(
    r"^(?:[*xX.•#-]+|\.\.\.|changeme|change[_-]?me|example|sample|placeholder|password|secret"
    r"|your[_-]?\w*|my[_-]?\w*|redacted|hidden|test|dummy|fake|foo|bar|todo|tbd|none|null"
    r"|\[redacted[^\]]*\])$",
    re.IGNORECASE,
)
_REDACTED = "[redacted: {kind}]"

_INVISIBLE_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
INVISIBLE = frozenset(chr(c) for low, high in _INVISIBLE_RANGES for c in range(low, high + 1))
"""Characters that show nothing: Unicode's format characters (category Cf: zero-width spaces
and joiners, direction marks, the soft hyphen, tags), fillers and variation selectors."""
_GAP_UNIT = (
    "[\\s"
    + "".join(
        re.escape(chr(low)) + ("-" + re.escape(chr(high)) if high > low else "")
        for low, high in _INVISIBLE_RANGES
    )
    + "]|\\\\(?=[\\r\\n])"
)
_GAP = "(?:" + _GAP_UNIT + ")*"
"""What may sit between two characters of a known secret: whitespace (a line break and the next
line's indent), invisible characters, a backslash before a line break."""


@dataclass(frozen=True, slots=True)
class Redacted:
    """A text with its secrets replaced, and the kinds found (one entry per replacement)."""

    text: str
    kinds: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


def redact(text: str, known: Iterable[str] = ()) -> Redacted:
    """``text`` with every secret replaced by ``[redacted: <kind>]``.

    Args:
        known: literal secret values (the bot token) to replace wherever they appear; values
            shorter than 8 characters are ignored (they would match ordinary words).
    """
    kinds: list[str] = []
    seen = _Squeezed(text)
    for value in sorted({v for v in known if len(v) >= 8}, key=len, reverse=True):
        for kind, form in _forms(value):
            if not seen.may_hold(form):
                continue
            text, count = form.pattern.subn(_REDACTED.format(kind=kind), text)
            if count:
                kinds.extend([kind] * count)
                seen = _Squeezed(text)
    for shape in PATTERNS:
        text = shape.pattern.sub(functools.partial(_replace, shape=shape, kinds=kinds), text)
    return Redacted(text, tuple(kinds))


def find_known(text: str, known: Iterable[str]) -> str | None:
    """The kind of the first known secret (the bot token) found in ``text`` in any of its forms,
    or None: :func:`redact`'s search without the shapes, fast enough for megabytes."""
    seen = _Squeezed(text)
    for value in sorted({v for v in known if len(v) >= 8}, key=len, reverse=True):
        for kind, form in _forms(value):
            if seen.may_hold(form) and form.pattern.search(text):
                return kind
    return None


_SQUEEZABLE = re.compile(_GAP_UNIT)
"""One character a :data:`_GAP` may hold (a backslash only before a line break)."""
_PLAIN = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-_+/=")


class _Form:
    """One form of a known secret: its characters, and the pattern (compiled when first used:
    ~10 ms each with the gaps, a tenth of a second per process for the token's nine forms)."""

    __slots__ = ("_pattern", "flags", "regex", "text")

    def __init__(self, text: str, regex: str, flags: int) -> None:
        self.text, self.regex, self.flags = text, regex, flags
        self._pattern: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._pattern is None:
            self._pattern = re.compile(self.regex, self.flags)
        return self._pattern


class _Squeezed:
    """A text without what a gap may hold, made once and only when a form asks.

    A form's pattern matches only where its characters stand in order with nothing but gap
    characters between them; a form made only of characters no gap holds (the token, hex,
    base64) then stands whole in the squeezed text. So a form missing there is missing in the
    text, and its pattern need not be compiled or run. Any other form always runs."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._squeezed: str | None = None
        self._lowered: str | None = None

    def may_hold(self, form: _Form) -> bool:
        if not _PLAIN.issuperset(form.text):
            return True
        if self._squeezed is None:
            self._squeezed = _SQUEEZABLE.sub("", self._text)
        if not form.flags & re.IGNORECASE:
            return form.text in self._squeezed
        if self._lowered is None:
            self._lowered = self._squeezed.lower()
        return form.text.lower() in self._lowered


@functools.lru_cache(maxsize=16)
def _forms(value: str) -> tuple[tuple[str, _Form], ...]:
    """How ``value`` may appear: as is, hex, base64 whole and at each alignment; each allowing
    line breaks and invisible characters between its characters."""
    data = value.encode("utf-8")
    forms: list[tuple[str, str, int]] = [("bot token", value, 0)]
    forms.append(("bot token (hex)", data.hex(), re.IGNORECASE))
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(data).decode("ascii").rstrip("=")
        forms.append(("bot token (base64)", whole, 0))
        for skip in range(3):
            usable = data[skip : skip + 3 * ((len(data) - skip) // 3)]
            if len(usable) >= 6:
                forms.append(("bot token (base64)", encode(usable).decode("ascii"), 0))
    compiled: list[tuple[str, _Form]] = []
    for kind, form, flags in dict.fromkeys(forms):
        regex = _GAP.join(re.escape(char) for char in form)
        if kind == "bot token (base64)":
            regex += "(?:" + _GAP + "=){0,2}"
        compiled.append((kind, _Form(form, regex, flags)))
    return tuple(compiled)


def _replace(match: re.Match[str], *, shape: Shape, kinds: list[str]) -> str:
    secret = match.group("secret")
    if shape.kind == "password" and not _looks_secret(secret):
        return match.group(0)
    start, end = match.span("secret")
    offset = match.start()
    kinds.append(shape.kind)
    whole = match.group(0)
    replacement = _REDACTED.format(kind=shape.kind)
    if secret[:1] in "\"'" and secret[-1:] == secret[:1]:
        replacement = secret[0] + replacement + secret[0]
    return whole[: start - offset] + replacement + whole[end - offset :]


def _looks_secret(value: str) -> bool:
    """Whether an assigned value is a secret rather than code or a placeholder."""
    quoted = value[:1] in "\"'" and value[-1:] == value[:1]
    inner = value[1:-1].strip() if quoted else value
    if _PLACEHOLDER.match(inner) or inner.startswith("[redacted"):
        return False
    if quoted:
        return len(inner) >= 4 and not re.search(r"\$\{|\{\{|%\(|^<.*>$", inner)
    return not _CODE_LIKE.search(inner)


def summary(found: Iterable[tuple[str, Redacted]]) -> list[str]:
    """``["GitHub token in content", ...]``: what was replaced where, for a tool result."""
    lines: list[str] = []
    for where, redacted in found:
        for kind in dict.fromkeys(redacted.kinds):
            count = redacted.kinds.count(kind)
            lines.append(f"{kind} in {where}" + (f" (x{count})" if count > 1 else ""))
    return lines
