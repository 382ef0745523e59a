"""What the bot says, in the owner's language: one catalogue file per language, and choosing one.

Theory. Everything the bot writes itself (cards, clarifying questions, refusals, reminders, run
status lines) is a *key* in ``i18n/<lang>.toml``: a TOML table per place (``[card]``,
``[clarify]``...) of ``str.format`` templates with named placeholders (``{owners}``). English
(``en.toml``) is complete; another language may leave a key out and gets the English text for
it. A contributor adds or fixes a language by editing a data file only; ``tests/i18n`` says
which keys or placeholders a file is missing. Text an agent wrote is never translated.

Which language: ``DISCORD_MCP_LANGUAGE`` (``en``, ``ko``, ``ja``, ``zh``, or any other
file's name), or ``auto`` (the default): the language of the words being answered, usually the
agent's question (:func:`detect`, which knows the four by their scripts). The choice is
recorded on a decision when it is asked, so its card, its clarifications, its refusals and its
final edit stay in one language.
"""

from __future__ import annotations

import string
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cache
from importlib.resources import files
from typing import Any, Literal, TypeGuard

Detected = Literal["en", "ko", "ja", "zh"]
"""The languages :func:`detect` tells apart."""
FALLBACK = "en"


def is_language(value: object) -> TypeGuard[str]:
    """Whether ``value`` names a language with a catalogue file."""
    return isinstance(value, str) and value in catalogue().texts


def _script(ch: str) -> str | None:
    code = ord(ch)
    if 0xAC00 <= code <= 0xD7A3 or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
        return "hangul"
    if 0x3040 <= code <= 0x30FF or 0x31F0 <= code <= 0x31FF or 0xFF66 <= code <= 0xFF9D:
        return "kana"
    if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xF900 <= code <= 0xFAFF:
        return "han"
    return None


def detect(text: str) -> Detected:
    """The language a text is written in, by its script: any Hangul is Korean, any kana is
    Japanese, Han characters without kana are Chinese, anything else is English.

    Good enough for choosing the bot's words (a Korean or Japanese sentence with English terms
    in it is still Korean or Japanese); it is not a general language detector.
    """
    seen = {script for ch in text if (script := _script(ch))}
    if "hangul" in seen:
        return "ko"
    if "kana" in seen:
        return "ja"
    if "han" in seen:
        return "zh"
    return "en"


def choose(configured: str, text: str) -> str:
    """``configured`` (a ``DISCORD_MCP_LANGUAGE`` value) unless it is ``auto``: then the
    language of ``text``."""
    return configured if is_language(configured) else detect(text)


def most_used(configured: str, languages: Iterable[str]) -> str:
    """One language for a message about several things (a reminder digest): ``configured``
    unless ``auto``, else the language most of them use (ties: the one seen first)."""
    if is_language(configured):
        return configured
    counts = Counter(lang for lang in languages if is_language(lang))
    if not counts:
        return FALLBACK
    best = max(counts.values())
    return next(lang for lang in counts if counts[lang] == best)


def _flatten(document: Mapping[str, Any], where: str) -> dict[str, str]:
    flat: dict[str, str] = {}
    for section, table in document.items():
        if not isinstance(table, Mapping):
            raise ValueError(f"{where}: {section} must be a table of texts")
        for key, value in table.items():
            if not isinstance(value, str):
                raise ValueError(f"{where}: {section}.{key} must be a text")
            flat[f"{section}.{key}"] = value
    return flat


def placeholders(template: str) -> frozenset[str]:
    """The named placeholders of a template (``{owners}`` -> ``owners``)."""
    return frozenset(name for _, name, _, _ in string.Formatter().parse(template) if name)


class Catalogue:
    """Every language's texts, by key (``section.name``), with English as the fallback.

    Args:
        documents: parsed catalogue files by language (``{"en": {...}, "ko": {...}}``).

    Raises:
        ValueError: a file is not tables of texts, or ``en`` is missing.
    """

    def __init__(self, documents: Mapping[str, Mapping[str, Any]]) -> None:
        self.texts = {
            lang: _flatten(document, f"i18n/{lang}.toml") for lang, document in documents.items()
        }
        if FALLBACK not in self.texts:
            raise ValueError(f"i18n/{FALLBACK}.toml is missing: it is the fallback language")

    def text(self, language: str, key: str, /, **values: object) -> str:
        """The text for ``key`` in ``language`` (English when that language lacks it), with
        ``values`` filled in.

        Raises:
            KeyError: no language has ``key`` (a typo in the code).
        """
        template = self.texts.get(language, {}).get(key)
        if template is None:
            template = self.texts[FALLBACK][key]
        return template.format(**values)


@cache
def catalogue() -> Catalogue:
    """The catalogue from the package's ``i18n/*.toml`` files (read once)."""
    folder = files("discord_mcp.i18n")
    return Catalogue(
        {
            entry.name.removesuffix(".toml"): tomllib.loads(entry.read_text(encoding="utf-8"))
            for entry in folder.iterdir()
            if entry.name.endswith(".toml")
        }
    )


def text(language: str, key: str, /, **values: object) -> str:
    """:meth:`Catalogue.text` of the package's catalogue."""
    return catalogue().text(language, key, **values)


LANGUAGES: tuple[str, ...] = (FALLBACK, *sorted(set(catalogue().texts) - {FALLBACK}))
"""Every language with a catalogue file, English first."""
CHOICES: tuple[str, ...] = (*LANGUAGES, "auto")
"""What ``DISCORD_MCP_LANGUAGE`` accepts."""
