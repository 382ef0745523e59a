"""The parser's words: data files per language, shipped inside the package."""

from __future__ import annotations

import tomllib
from importlib.resources import files

import pytest

from discord_mcp.decisions.lexicon import WORDS, fold, load, merge

LANGUAGES = ("en", "ko", "ja", "zh")


def test_the_word_files_load_from_the_installed_package() -> None:
    folder = files("discord_mcp.decisions").joinpath("words")
    names = {entry.name for entry in folder.iterdir()}
    assert {f"{language}.toml" for language in LANGUAGES} <= names
    assert set(WORDS.languages) == {name.removesuffix(".toml") for name in names if ".toml" in name}
    assert load() == WORDS


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_language_says_yes_no_refuses_defers_and_hedges(language: str) -> None:
    text = files("discord_mcp.decisions").joinpath("words", f"{language}.toml").read_text("utf-8")
    document = tomllib.loads(text)
    for role in ("yes", "no", "deferrals", "hedges"):
        assert document.get(role), (language, role)
    assert document.get("negations_before") or document.get("negations_after"), language


def test_no_word_means_both_yes_and_no_and_every_word_survives_folding() -> None:
    assert not {fold(w) for w in WORDS.yes} & {fold(w) for w in WORDS.no}
    for role in ("yes", "no", "negations_before", "deferrals", "questions"):
        assert all(fold(word) for word in getattr(WORDS, role)), role


@pytest.mark.parametrize(
    "document",
    [
        {"yess": ["yes"]},
        {"yes": "yes"},
        {"yes": [""]},
        {"ordinals": {"first": "1"}},
        {"counted_ordinals": {"counts": {"두": 2}}},
    ],
)
def test_a_misspelled_key_or_a_wrong_shape_is_an_error_naming_the_file(
    document: dict[str, object],
) -> None:
    with pytest.raises(ValueError, match=r"words/xx\.toml"):
        merge({"xx": document})


def test_files_merge_into_one_lexicon() -> None:
    lexicon = merge({"a": {"yes": ["oui"], "ordinals": {"premier": 1}}, "b": {"yes": ["sì"]}})
    assert lexicon.yes == {"oui", "sì"}
    assert lexicon.ordinals == {"premier": 1}
    assert lexicon.languages == ("a", "b")
