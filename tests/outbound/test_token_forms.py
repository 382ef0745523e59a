"""The bot token is redacted in the forms it hides in: split over lines, with invisible
characters inside, base64 (standard and URL-safe, padded or not, at any byte offset inside a
longer base64 text) and hex. Only this token's forms: other shapes are matched as before."""

from __future__ import annotations

import base64
import binascii
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discord_mcp.outbound.redaction import _forms, find_known, redact

TOKEN = "MTA5" + "OTk5OTk5OTk5OTk5OTk5OQ.Gh1jKl.abcdefghijklmnopqrstuvwxyz0_2-45"
B64_ENCODERS = {
    "standard": base64.b64encode,
    "urlsafe": base64.urlsafe_b64encode,
}


def gone(text: str) -> str:
    clean = redact(text, [TOKEN])
    assert clean.kinds, f"nothing redacted in {text!r}"
    assert all(kind.startswith("bot token") for kind in clean.kinds)
    return clean.text


def test_a_token_split_over_two_lines_is_redacted() -> None:
    for split in (5, 30, len(TOKEN) - 2):
        for newline in ("\n", "\r\n", "\n    ", "\\\n"):
            text = f"token: {TOKEN[:split]}{newline}{TOKEN[split:]} end"
            clean = gone(text)
            assert TOKEN[:split] + newline not in clean or split < 8
            assert "abcdefghijklmnop" not in clean


@pytest.mark.parametrize("mark", ["\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e"])
def test_a_token_with_invisible_characters_inside_is_redacted(mark: str) -> None:
    hidden = mark.join(TOKEN)
    clean = gone(f"here {hidden} there")
    assert "abcdef" not in clean.replace(mark, "")
    assert clean.startswith("here ")
    assert clean.endswith(" there")


def test_every_invisible_format_character_is_covered() -> None:
    from discord_mcp.outbound.redaction import INVISIBLE

    missing = [
        f"U+{code:04X}"
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) == "Cf" and chr(code) not in INVISIBLE
    ]
    assert missing == []


@pytest.mark.parametrize("encoder", sorted(B64_ENCODERS))
@pytest.mark.parametrize("padded", [True, False])
def test_a_base64_token_alone_is_redacted(encoder: str, padded: bool) -> None:
    encoded = B64_ENCODERS[encoder](TOKEN.encode()).decode()
    if not padded:
        encoded = encoded.rstrip("=")
    clean = gone(f"Authorization: {encoded}")
    assert encoded.rstrip("=")[:-4] not in clean


@pytest.mark.parametrize("encoder", sorted(B64_ENCODERS))
@pytest.mark.parametrize("offset", [0, 1, 2, 3, 4, 5])
def test_a_token_inside_a_longer_base64_text_is_redacted_at_every_alignment(
    encoder: str, offset: int
) -> None:
    blob = bytes(range(7, 7 + offset)) + TOKEN.encode() + b"\x00trailing bytes"
    encoded = B64_ENCODERS[encoder](blob).decode()
    clean = gone(f"config: {encoded}")
    # No run of the token's own bytes survives: decode what is left around the mark.
    for piece in clean.removeprefix("config: ").split("[redacted: bot token (base64)]"):
        for cut in range(4):
            try:
                decoded = base64.b64decode(piece[cut:] + "===", altchars=b"-_", validate=False)
            except (binascii.Error, ValueError):
                continue
            assert b"Gh1jKl" not in decoded
            assert b"abcdefghij" not in decoded


def test_a_base64_token_wrapped_over_lines_is_redacted() -> None:
    encoded = base64.b64encode(b"prefix!" + TOKEN.encode()).decode()
    wrapped = "\n".join(encoded[i : i + 20] for i in range(0, len(encoded), 20))
    clean = gone(wrapped)
    assert "Z2hpams" not in clean.replace("\n", "")


@pytest.mark.parametrize("case", [str.lower, str.upper])
def test_a_hex_token_is_redacted(case: object) -> None:
    encoded = case(TOKEN.encode().hex())  # type: ignore[operator]
    clean = gone(f"dump {encoded} done")
    assert encoded[8:-8] not in clean
    spaced = " ".join(TOKEN.encode().hex()[i : i + 2] for i in range(0, 2 * len(TOKEN), 2))
    assert "6162636465" not in gone(spaced).replace(" ", "")


def test_other_base64_text_is_left_alone() -> None:
    text = base64.b64encode(b"an ordinary configuration blob, nothing secret " * 3).decode()
    assert redact(text, [TOKEN]).text == text
    assert redact("the word token and ordinary text\nover lines", [TOKEN]).kinds == ()


# ---- the skip before the patterns: never a form missed ----------------------------------------

GAPS = [" ", "\n", "\r\n", "\t", "\\\n", "\\\r\n", "\u200b", "\u00ad", "\ufeff", "\U000e0041"]
NOISE = ["x", "\\", "=", "é", "İ", "K", "\\x", " \\ ", "-", "A"]


def _every_pattern(text: str, known: list[str]) -> tuple[str, tuple[str, ...]]:
    """What the known-secret pass did before the skip: every form's pattern, run on the text."""
    kinds: list[str] = []
    for value in known:
        for kind, form in _forms(value):
            text, count = form.pattern.subn(f"[redacted: {kind}]", text)
            kinds.extend([kind] * count)
    return text, tuple(kinds)


@st.composite
def _hidden(draw: st.DrawFn) -> str:
    """A token form cut into pieces with gap characters and noise between and around them."""
    data = TOKEN.encode()
    form = draw(
        st.sampled_from(
            [
                TOKEN,
                data.hex(),
                data.hex().upper(),
                base64.b64encode(data).decode(),
                base64.urlsafe_b64encode(b"ab" + data).decode(),
                base64.b64encode(b"x" + data + b"yz").decode(),
            ]
        )
    )
    cuts = sorted(draw(st.lists(st.integers(0, len(form)), max_size=6)))
    pieces = [form[a:b] for a, b in zip([0, *cuts], [*cuts, len(form)], strict=True)]
    between = st.lists(st.sampled_from(GAPS + NOISE), max_size=3).map("".join)
    return draw(between) + "".join(p + draw(between) for p in pieces)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(_hidden())
def test_the_skip_never_misses_what_every_pattern_finds(text: str) -> None:
    clean = redact(text, [TOKEN])
    text_after, kinds = _every_pattern(text, [TOKEN])
    shapes = redact(text_after, [])  # the shapes' pass after the known secrets', as redact does
    assert (clean.text, clean.kinds) == (shapes.text, kinds + shapes.kinds)
    assert find_known(text, [TOKEN]) == (kinds[0] if kinds else None)
