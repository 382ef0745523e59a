"""The answer parser's words, loaded from the data files in ``decisions/words/``.

Every ``*.toml`` file there is one language (or, for ``marks.toml``, the emoji and marks every
language shares); they are merged into one :class:`Lexicon`. The files ship inside the package
(read with :mod:`importlib.resources`), so an installed wheel reads the same words as a checkout.
``decisions/words/README.md`` says what each key means.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from importlib.resources import files
from typing import Any

_DROP = dict.fromkeys(map(ord, "\ufe0e\ufe0f\u20e3\u200b\u200c\u200d\u2060\ufeff*`_"))
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_SKIN_TONES = re.compile("[\U0001f3fb-\U0001f3ff]")


def fold(text: str) -> str:
    """NFKC (full width -> ASCII), casefold, no keycap/markdown marks, single spaces, kept lines.

    Replies, option texts and words are all compared in this form.
    """
    text = unicodedata.normalize("NFKC", text).replace("\U0001f51f", "10")
    text = text.replace("~~", "").replace("||", "")  # strikethrough, spoiler
    text = _SKIN_TONES.sub("", text.translate(_DROP).translate(_QUOTES)).casefold()
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


_ASCII_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789'")


def phrase_pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    """One pattern for folded phrases, longest first; ASCII ends match on word boundaries only
    ("no" is not in "know"), other scripts anywhere. None for no words."""
    parts = []
    for phrase in sorted({fold(w) for w in words} - {""}, key=len, reverse=True):
        head = "(?<![a-z0-9'])" if phrase[0] in _ASCII_WORD else ""
        tail = "(?![a-z0-9'])" if phrase[-1] in _ASCII_WORD else ""
        parts.append(head + re.escape(phrase) + tail)
    return re.compile("|".join(parts)) if parts else None


def split_words(folded: str) -> list[str]:
    """The words of a folded text: runs of letters and digits (apostrophes kept inside)."""
    words = "".join(ch if ch.isalnum() or ch == "'" else " " for ch in folded).split()
    return [w for w in (w.strip("'") for w in words) if w]


@dataclass(frozen=True, slots=True)
class Lexicon:
    """Word lists by role, merged over every language file. See ``words/en.toml`` for each."""

    yes: frozenset[str] = frozenset()
    no: frozenset[str] = frozenset()
    filler: frozenset[str] = frozenset()
    choice_tails: frozenset[str] = frozenset()
    choice_prefixes: frozenset[str] = frozenset()
    numeral_prefixes: frozenset[str] = frozenset()
    ordinal_prefixes: frozenset[str] = frozenset()
    units: frozenset[str] = frozenset()
    ordinal_units: frozenset[str] = frozenset()
    post_nouns: frozenset[str] = frozenset()
    particles: frozenset[str] = frozenset()
    separators: frozenset[str] = frozenset()
    connectives: frozenset[str] = frozenset()
    negations_before: frozenset[str] = frozenset()
    negations_after: frozenset[str] = frozenset()
    not_negations: frozenset[str] = frozenset()
    deferrals: frozenset[str] = frozenset()
    holds: frozenset[str] = frozenset()
    """"Put it on hold": no on a card whose options are a yes and a no, a deferral elsewhere."""
    retractions: frozenset[str] = frozenset()
    """"Just kidding", "never mind": whatever the reply said before is taken back."""
    conditions: frozenset[str] = frozenset()
    """"Only if", "unless": an approval cannot carry a condition, so the reply is unclear."""
    hedges: frozenset[str] = frozenset()
    questions: frozenset[str] = frozenset()
    ordinals: Mapping[str, int] = field(default_factory=dict)
    counted_ordinals: tuple[tuple[str, Mapping[str, int]], ...] = ()
    """(counter, {count word: position}): Korean "두 번째" is ("번째", {"두": 2, ...})."""
    languages: tuple[str, ...] = ()


_LISTS = frozenset(
    f.name for f in fields(Lexicon) if f.name not in ("ordinals", "counted_ordinals", "languages")
)


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{where} must be a list of non-empty strings")
    return value


def _positions(value: Any, where: str) -> dict[str, int]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and k and isinstance(v, int) and not isinstance(v, bool)
        for k, v in value.items()
    ):
        raise ValueError(f"{where} must map words to positions (1 is the first, -1 the last)")
    return value


def merge(documents: Mapping[str, Mapping[str, Any]]) -> Lexicon:
    """One lexicon from parsed language files (``{"en": {...}, ...}``).

    Raises:
        ValueError: a file has an unknown key or a value of the wrong shape.
    """
    lists: dict[str, set[str]] = {name: set() for name in _LISTS}
    ordinals: dict[str, int] = {}
    counted: list[tuple[str, Mapping[str, int]]] = []
    for language, document in sorted(documents.items()):
        for key, value in document.items():
            where = f"words/{language}.toml: {key}"
            if key in _LISTS:
                lists[key].update(_strings(value, where))
            elif key == "ordinals":
                ordinals.update(_positions(value, where))
            elif key == "counted_ordinals":
                counter = value.get("counter") if isinstance(value, dict) else None
                if (
                    not isinstance(counter, str)
                    or not counter
                    or set(value) != {"counter", "counts"}
                ):
                    raise ValueError(f"{where} needs a counter and its counts")
                counted.append((counter, _positions(value["counts"], f"{where}.counts")))
            else:
                raise ValueError(f"{where}: unknown key")
    return Lexicon(
        **{name: frozenset(words) for name, words in lists.items()},
        ordinals=ordinals,
        counted_ordinals=tuple(counted),
        languages=tuple(sorted(documents)),
    )


def load() -> Lexicon:
    """The lexicon from the package's ``words/*.toml`` files."""
    folder = files("discord_mcp.decisions").joinpath("words")
    documents = {
        entry.name.removesuffix(".toml"): tomllib.loads(entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if entry.name.endswith(".toml")
    }
    return merge(documents)


WORDS = load()
"""The words every parser function reads; loaded once, at import."""
