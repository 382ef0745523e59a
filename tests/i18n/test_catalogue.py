"""The catalogues: every language says everything English says, with the same placeholders;
choosing a language; and DISCORD_MCP_LANGUAGE."""

from __future__ import annotations

import tomllib
from importlib.resources import files

import pytest

from discord_mcp import i18n
from discord_mcp.config import Settings
from discord_mcp.decisions.model import Decision
from discord_mcp.errors import ConfigError

OTHERS = [lang for lang in i18n.LANGUAGES if lang != "en"]
ENV = {
    "DISCORD_BOT_TOKEN": "abc.def.ghi",
    "DISCORD_CHANNEL_ID": "123456789012345678",
    "DISCORD_OWNER_IDS": "234567890123456789",
}


def test_english_korean_japanese_and_chinese_ship_inside_the_package() -> None:
    names = {entry.name for entry in files("discord_mcp.i18n").iterdir()}
    assert {"en.toml", "ko.toml", "ja.toml", "zh.toml"} <= names
    assert i18n.LANGUAGES[0] == "en"
    assert set(i18n.LANGUAGES) == {n.removesuffix(".toml") for n in names if n.endswith(".toml")}


@pytest.mark.parametrize("language", OTHERS)
def test_every_catalogue_has_exactly_the_keys_of_the_english_one(language: str) -> None:
    english = set(i18n.catalogue().texts["en"])
    keys = set(i18n.catalogue().texts[language])
    assert not english - keys, f"{language}.toml lacks {sorted(english - keys)}"
    assert not keys - english, f"{language}.toml has keys English lacks: {sorted(keys - english)}"


@pytest.mark.parametrize("language", OTHERS)
def test_every_text_keeps_the_placeholders_of_the_english_one(language: str) -> None:
    english = i18n.catalogue().texts["en"]
    differ = {
        key: (sorted(i18n.placeholders(template)), sorted(i18n.placeholders(english[key])))
        for key, template in i18n.catalogue().texts[language].items()
        if key in english and i18n.placeholders(template) != i18n.placeholders(english[key])
    }
    assert not differ, f"{language}.toml: (has, English has) {differ}"


@pytest.mark.parametrize("language", i18n.LANGUAGES)
def test_every_text_formats_with_its_placeholders(language: str) -> None:
    for key, template in i18n.catalogue().texts[language].items():
        values = dict.fromkeys(i18n.placeholders(template), "X")
        assert i18n.text(language, key, **values), key


def test_a_key_a_language_lacks_falls_back_to_english() -> None:
    catalogue = i18n.Catalogue(
        {"en": {"card": {"options": "**Options:**", "who": "{owners}"}}, "xx": {"card": {}}}
    )
    assert catalogue.text("xx", "card.options") == "**Options:**"
    assert catalogue.text("nope", "card.who", owners="<@1>") == "<@1>"
    with pytest.raises(KeyError):
        catalogue.text("en", "card.nothing")


@pytest.mark.parametrize(
    "document",
    [{"card": "not a table"}, {"card": {"options": 3}}],
)
def test_a_file_that_is_not_tables_of_texts_is_an_error_naming_it(
    document: dict[str, object],
) -> None:
    with pytest.raises(ValueError, match=r"i18n/xx\.toml"):
        i18n.Catalogue({"en": {}, "xx": document})


def test_the_catalogue_files_are_valid_toml_in_utf8() -> None:
    for language in i18n.LANGUAGES:
        text = files("discord_mcp.i18n").joinpath(f"{language}.toml").read_text("utf-8")
        assert tomllib.loads(text)


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Deploy to production now?", "en"),
        ("지금 production에 배포할까요?", "ko"),
        ("本番環境に今デプロイしますか？", "ja"),
        ("现在部署到生产环境吗？", "zh"),
        ("這個要現在部署嗎？", "zh"),
        ("`make deploy` を実行してもいいですか", "ja"),
        ("", "en"),
    ],
)
def test_the_language_is_told_by_its_script(text: str, language: str) -> None:
    assert i18n.detect(text) == language


def test_a_configured_language_wins_over_the_text() -> None:
    assert i18n.choose("ja", "Deploy now?") == "ja"
    assert i18n.choose("auto", "지금 배포할까요?") == "ko"
    assert i18n.choose("auto", "Deploy now?") == "en"


def test_a_message_about_several_questions_uses_the_language_most_of_them_use() -> None:
    assert i18n.most_used("auto", ["ko", "en", "ko"]) == "ko"
    assert i18n.most_used("auto", ["ja", "en"]) == "ja"  # a tie: the first seen
    assert i18n.most_used("auto", []) == "en"
    assert i18n.most_used("zh", ["ko", "ko"]) == "zh"


def test_the_language_defaults_to_auto_and_accepts_each_catalogue() -> None:
    assert Settings.from_env(ENV, read_dotenv=False).language == "auto"
    for value in (*i18n.LANGUAGES, "AUTO", " Ko "):
        setting = Settings.from_env({**ENV, "DISCORD_MCP_LANGUAGE": value}, read_dotenv=False)
        assert setting.language == value.strip().lower()


def test_an_unknown_language_is_refused_naming_the_variable_and_the_fix_not_the_value() -> None:
    secret = "MTIzNDU2Nzg5MDEy.secret"
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({**ENV, "DISCORD_MCP_LANGUAGE": secret}, read_dotenv=False)
    message = str(caught.value)
    assert "DISCORD_MCP_LANGUAGE" in message
    assert "Use en, ko, ja or zh" in message
    assert "auto" in message
    assert secret not in message
    assert "secret" not in message


def decision_document(**extra: object) -> dict[str, object]:
    return {
        "id": "20261123-120000-abcdef",
        "project": "proj",
        "session": "s",
        "question": "질문?",
        "context": None,
        "options": [],
        "channel_id": "1",
        "thread_id": "2",
        "card_message_id": "3",
        "thread_url": "",
        "asked_at": "2026-11-23T12:00:00+00:00",
        "version": 1,
        **extra,
    }


def test_a_decision_file_written_before_languages_reads_as_english() -> None:
    assert Decision.from_json(decision_document()).language == "en"
    assert Decision.from_json(decision_document(language="tlh")).language == "en"
    korean = Decision.from_json(decision_document(language="ko"))
    assert korean.language == "ko"
    assert korean.to_json()["language"] == "ko"
