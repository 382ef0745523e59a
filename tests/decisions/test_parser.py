"""The answer parser: what the owner typed on a phone, in four languages, becomes an answer."""

from __future__ import annotations

import re
import tomllib
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from discord_mcp.decisions.clarify import clarify_message
from discord_mcp.decisions.lexicon import fold
from discord_mcp.decisions.parser import (
    LETTERS,
    MESSAGE_LIMIT,
    NO_WORDS,
    YES_WORDS,
    ParsedAnswer,
    label_readings,
    option_key,
    parse_answer,
    yes_no_targets,
)


def words(spec: str) -> list[str]:
    return spec.split("|")


OPTIONS = ["Use PostgreSQL", "Use SQLite", "Skip the database", "Ask again tomorrow"]
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CASES_DIR = Path(__file__).parent.parent / "data" / "answers"
UNCLEAR = "unclear"


def load_cases() -> list[Any]:
    """Every case in tests/data/answers/*.toml: (options, reply, expected text or "unclear",
    reason or None), with the file and reply as its id."""
    cases = []
    for path in sorted(CASES_DIR.glob("*.toml")):
        for group in tomllib.loads(path.read_text(encoding="utf-8"))["group"]:
            options = group["options"]
            assert UNCLEAR not in options, f"{path.name}: an option may not be named unclear"
            for reply, expected, *reason in group["cases"]:
                assert expected == UNCLEAR or expected in options, (path.name, reply, expected)
                cases.append(
                    pytest.param(
                        options, reply, expected, *(reason or [None]), id=f"{path.stem}:{reply}"
                    )
                )
    return cases


CASES = load_cases()


def test_every_language_has_its_own_case_file() -> None:
    languages = {path.stem for path in CASES_DIR.glob("*.toml")}
    assert {"en", "ko", "ja", "zh"} <= languages
    assert len(CASES) > 300


@pytest.mark.parametrize(("options", "reply", "expected", "reason"), CASES)
def test_each_reply_in_the_case_files_means_what_the_file_says(
    options: list[str], reply: str, expected: str, reason: str | None
) -> None:
    parsed = parse_answer(reply, options)
    assert parsed.text == reply.strip()
    if expected == UNCLEAR:
        assert (parsed.kind, parsed.selected_index, parsed.selected_option) == (
            "unclear",
            None,
            None,
        ), parsed
    else:
        assert (parsed.kind, parsed.selected_option) == ("option", expected), parsed
        assert parsed.selected_index == options.index(expected)
    if reason is not None:
        assert parsed.reason == reason, parsed


@pytest.mark.parametrize(
    ("options", "yes", "no"),
    [
        (["Yes", "No"], 0, 1),
        (["No", "Yes"], 1, 0),
        (["네", "아니요"], 0, 1),
        (["아니요", "네"], 1, 0),
        (["Approve", "Reject"], 0, 1),
        (["Reject", "Approve"], 1, 0),
        (["OK", "Cancel"], 0, 1),
        (["Cancel", "OK"], 1, 0),
        (["はい", "いいえ"], 0, 1),
        (["不要", "好的"], 1, 0),
        (["No", "Ship it now"], 1, 0),  # one meaning: the other option takes the opposite
        (["Ship it now", "No"], 0, 1),
        # Changed (issue 21): only options that are a yes and a no take yes and no; the card's
        # order never decides ("Keep them" / "Delete them": "no" is not "Delete them").
        (["Merge now", "Wait for CI"], None, None),
        (["Keep them", "Delete them"], None, None),
        (["Go to staging", "Go to prod"], None, None),
        (["Approve", "Approve with comments", "Reject"], None, None),
        (["Yes", "Later", "Never"], 0, 2),
        (["Postgres", "SQLite", "None"], None, None),
        (["Only one"], None, None),
        (["Proceed"], None, None),
        (["Allow", "Deny"], 0, 1),
        (["진행", "중단"], 0, 1),
    ],
)
def test_yes_and_no_map_only_onto_options_that_mean_yes_and_no(
    options: list[str], yes: int | None, no: int | None
) -> None:
    assert yes_no_targets(options) == (yes, no)
    for reply, target in (("yep", yes), ("nope", no)):
        parsed = parse_answer(reply, options)
        if target is None:
            assert (parsed.kind, parsed.reason) == ("unclear", "yes_no_unmapped")
        else:
            assert (parsed.kind, parsed.selected_index) == ("option", target)


def test_letters_go_up_to_y_and_numbers_up_to_the_option_count() -> None:
    options = [f"choice number {i}" for i in range(25)]
    assert parse_answer("Y", options).selected_index == 24
    assert parse_answer("y", options).reason == "letter"  # 25 options: y is a label, not yes
    assert parse_answer("25", options).selected_index == 24
    assert parse_answer("26", options).reason == "out_of_range"
    assert parse_answer("Z", options).reason == "out_of_range"
    thirty = [f"item {i}" for i in range(30)]
    assert parse_answer("30", thirty).selected_index == 29
    assert parse_answer("option 27", thirty).selected_index == 26


def test_duplicate_option_texts_are_ambiguous_but_their_labels_are_not() -> None:
    options = ["Retry", "Retry", "Abort"]
    assert parse_answer("retry", options).reason == "ambiguous"
    assert parse_answer("B", options).selected_index == 1


def test_without_options_any_reply_is_the_answer() -> None:
    for reply in ("A", "yes", "2번", "  Deploy on Friday, after the freeze  "):
        parsed = parse_answer(reply, [])
        assert parsed == ParsedAnswer("free_text", None, None, reply.strip(), "no_options")
    assert parse_answer(" \t", []).reason == "empty"


def test_clarify_lists_the_options_with_letters_numbers_and_the_attempt() -> None:
    message = clarify_message("I think A is wrong, B is better", OPTIONS, 1, 2)
    assert "attempt 1 of 2" in message
    assert "more than one option" in message
    for i, option in enumerate(OPTIONS):
        assert f"{LETTERS[i]} ({i + 1}) {option}" in message
    assert "letter or number" in message


def test_clarify_explains_the_reason_and_the_yes_no_mapping() -> None:
    assert "not one of the options" in clarify_message("7", OPTIONS, 2, 3)
    assert "yes or no" in clarify_message("ok", OPTIONS, 1, 2)
    message = clarify_message("hmm", ["Reject", "Approve"], 1, 2)
    assert "yes for B and no for A" in message
    assert "answer as text" in clarify_message("", [], 1, 1)


@pytest.mark.parametrize(
    ("options", "letters", "numbers"),
    [
        (OPTIONS, True, True),
        (["A", "B"], True, True),  # each option's text is its own label
        (["B", "A"], False, True),
        (["10", "5", "1"], True, False),
        (["A", "1"], True, False),
        (["2", "A"], False, False),
    ],
)
def test_labels_are_offered_only_where_no_options_text_reads_as_another_label(
    options: list[str], letters: bool, numbers: bool
) -> None:
    assert label_readings(options) == (letters, numbers)


def test_clarify_asks_for_a_label_that_cannot_be_read_as_another_options_text() -> None:
    by_number = clarify_message("hmm", ["B", "A"], 1, 2)
    assert "reply with just one number" in by_number
    assert "1. B" in by_number
    assert "letter or number" not in by_number
    by_letter = clarify_message("option 1", ["10", "5", "1"], 1, 2)
    assert "reply with just one letter" in by_letter
    assert "C: 1" in by_letter
    assert "(1)" not in by_letter
    by_text = clarify_message("x", ["2", "A"], 1, 2)
    assert "exact text of one option" in by_text
    assert "- 2" in by_text
    assert "yes for" not in by_text


@pytest.mark.parametrize(
    ("reply", "options", "why"),
    [
        ("delete the old branches? no!", ["Delete the old branches", "Keep them"], "question"),
        ("wait", ["Merge", "Skip"], "asks to wait"),
        ("maybe A", ["Merge", "Skip"], "unsure"),
        ("don't merge", ["Merge", "Skip"], "says no to an option"),
    ],
)
def test_clarify_says_why_a_refusal_question_or_deferral_was_not_taken(
    reply: str, options: list[str], why: str
) -> None:
    assert why in clarify_message(reply, options, 1, 2)


def test_clarify_never_echoes_or_pings() -> None:
    message = clarify_message("@everyone <@123456789> <@&42> @here look", ["@here", "<@1>"], 1, 2)
    assert "look" not in message
    assert "@everyone" not in message
    assert "@here" not in message
    assert not re.search(r"<@[!&]?\d+>", message)


def test_clarify_fits_in_one_discord_message() -> None:
    options = [f"{i} " + "very long option text " * 30 for i in range(25)]
    message = clarify_message("?", options, 1, 2)
    assert len(message) <= MESSAGE_LIMIT
    assert "Y (25)" in message


def test_clarify_rejects_an_attempt_outside_its_range() -> None:
    with pytest.raises(ValueError, match="attempt"):
        clarify_message("x", OPTIONS, 0, 2)
    with pytest.raises(ValueError, match="attempt"):
        clarify_message("x", OPTIONS, 3, 2)


# --- properties -------------------------------------------------------------------------------

FRAGMENTS = [
    *sorted(YES_WORDS)[:40],
    *sorted(NO_WORDS)[:40],
    *words("A|B|c|Y|Z|1|2|3|0|25|99|２|Ｂ|2️⃣|🔟|#|(|)|.|,|-|:|?|!|、|。|\n"),
    *words("option|opt|the|second|first|last|번|번째|로|요|で|番|第|个|选|つ目|二|十"),
    *words("because|but|or"),
    " ",
    "  ",
    "use sqlite",
    "@everyone",
    "<@123>",
]
replies = st.one_of(
    st.text(max_size=60), st.lists(st.sampled_from(FRAGMENTS), max_size=8).map("".join)
)
any_options = st.lists(st.one_of(st.text(max_size=30), st.sampled_from(FRAGMENTS)), max_size=30)


@FAST
@given(replies, any_options)
def test_parse_never_raises_is_deterministic_and_stays_in_range(
    reply: str, options: list[str]
) -> None:
    parsed = parse_answer(reply, options)
    assert parsed == parse_answer(reply, options)
    assert parsed.text == reply.strip()
    if parsed.kind == "option":
        assert parsed.selected_index is not None
        assert 0 <= parsed.selected_index < len(options)
        assert parsed.selected_option == options[parsed.selected_index]
    else:
        assert parsed.selected_index is None
        assert parsed.selected_option is None


@FAST
@given(st.data(), st.lists(st.text(max_size=20), min_size=1, max_size=25))
def test_every_canonical_form_selects_its_option(data: st.DataObject, options: list[str]) -> None:
    i = data.draw(st.integers(0, len(options) - 1), label="index")
    # An option whose own text is this label wins over it (see the case files): skip those.
    texts = {option_key(option) for option in options}
    forms = [] if str(i + 1) in texts else [str(i + 1), f"option {i + 1}", f"#{i + 1}"]
    forms += [] if str(i + 1) in texts else [f"{i + 1}번", f"{i + 1}."]
    if i < len(LETTERS) and LETTERS[i].lower() not in texts:
        forms += [LETTERS[i], LETTERS[i].lower(), f"{LETTERS[i]})", f"Option {LETTERS[i]}"]
    for form in forms:
        if any(fold(o) and fold(o) in fold(form) for j, o in enumerate(options) if j != i):
            continue  # the form names an option by its text ("option 1" and an option "Option")
        parsed = parse_answer(form, options)
        assert (parsed.kind, parsed.selected_index) == ("option", i), form


WORD_CHARS = "abcdefghijklmnopqrstuvwxyz가나다라마바사あいうえおかきく中文字数据库 "
option_texts = st.text(alphabet=WORD_CHARS, min_size=1, max_size=14).map(
    lambda s: " ".join(s.split())
)
distinct_options = st.lists(
    option_texts.filter(bool), min_size=1, max_size=25, unique_by=lambda s: s.replace(" ", "")
)


@FAST
@given(st.data(), distinct_options)
def test_an_options_own_text_selects_it(data: st.DataObject, options: list[str]) -> None:
    i = data.draw(st.integers(0, len(options) - 1), label="index")
    text = options[i]
    # Not itself a label, number or yes/no word: against blank options it means nothing.
    assume(parse_answer(text, [""] * len(options)).reason == "no_match")
    parsed = parse_answer(text, options)
    assert (parsed.kind, parsed.selected_index, parsed.reason) == ("option", i, "option_text")


@FAST
@given(st.text(max_size=80))
def test_without_options_every_non_blank_reply_is_free_text(reply: str) -> None:
    assume(reply.strip())
    assert parse_answer(reply, []) == ParsedAnswer(
        "free_text", None, None, reply.strip(), "no_options"
    )


@FAST
@given(replies, any_options, st.integers(1, 5), st.integers(0, 4))
def test_clarify_never_contains_a_mention_and_fits(
    reply: str, options: list[str], attempt: int, extra: int
) -> None:
    message = clarify_message(reply, options, attempt, attempt + extra)
    assert "@everyone" not in message
    assert "@here" not in message
    assert not re.search(r"<@[!&]?\d+>", message)
    assert len(message) <= MESSAGE_LIMIT
    assert f"attempt {attempt} of {attempt + extra}" in message


def fold_key(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


NEGATIONS = {
    "en": [
        "don't {x}", "do not {x}", "not {x}", "no {x}", "never {x}", "{x}? no", "{x}? no!",
        "{x}, no", "{x} no", "{x}? absolutely not", "definitely not {x}", "{x}?", "{x}? really?",
        "{x}, never", "{x} - don't", "no, not {x}", "{x}. never mind",
    ],
    "ko": [
        "{x} 하지 마", "{x}는 안 돼", "{x} 안 돼", "{x} 말고", "{x}? 정말?", "{x} 하지 마세요",
        "{x} 아니", "절대 {x} 안 돼", "{x}로 하지 마",
    ],
    "ja": [
        "{x}はだめ", "{x}しないで", "{x}じゃない", "{x}? 本当に？", "{x}はやめて", "{x}ではない",
        "{x}ですか", "{x}はダメです",
    ],
    "zh": ["不要{x}", "别{x}", "别选{x}", "{x}不行", "{x}吗", "不是{x}", "{x}？", "不要选{x}"],
}  # fmt: skip


tricky_options = st.one_of(
    option_texts,
    st.sampled_from(words("1|2|10|A|B|b|no|not|wait|later|yes|ok|don't merge|Wait for CI|B?")),
)
tricky_lists = st.lists(tricky_options.filter(bool), min_size=1, max_size=12, unique_by=option_key)


@FAST
@given(st.data(), st.one_of(distinct_options, tricky_lists), st.sampled_from(sorted(NEGATIONS)))
def test_a_reply_that_negates_or_questions_an_option_never_selects_it(
    data: st.DataObject, options: list[str], language: str
) -> None:
    i = data.draw(st.integers(0, len(options) - 1), label="index")
    # Not itself a yes/no, deferral or negation word: "no, no" picks the option "no".
    assume(parse_answer(options[i], [""] * len(options)).reason == "no_match")
    letters, numbers = label_readings(options)
    names = [options[i]]
    names += [LETTERS[i]] if letters and i < len(LETTERS) else []
    names += [str(i + 1)] if numbers else []
    name = data.draw(st.sampled_from(names), label="name")
    template = data.draw(st.sampled_from(NEGATIONS[language]), label="template")
    parsed = parse_answer(template.format(x=name), options)
    assert parsed.selected_index != i, parsed


@FAST
@given(st.data(), tricky_lists)
def test_shuffling_the_options_never_changes_the_text_an_exact_reply_chooses(
    data: st.DataObject, options: list[str]
) -> None:
    text = data.draw(st.sampled_from(options), label="reply")
    shuffled = data.draw(st.permutations(options), label="shuffled")
    first, second = parse_answer(text, options), parse_answer(text, shuffled)
    assert first.selected_option == second.selected_option == text


TWO_OPTIONS = words("{x} and {y}|{x} or {y}|{x}, {y}|either {x} or {y}|{x} 아니면 {y}|{x} 또는 {y}")
TWO_OPTIONS += words("{x}还是{y}|{x}か{y}")


@FAST
@given(st.data(), st.one_of(distinct_options, tricky_lists), st.sampled_from(TWO_OPTIONS))
def test_a_reply_naming_two_options_selects_neither(
    data: st.DataObject, options: list[str], template: str
) -> None:
    assume(len(options) >= 2)
    i, j = data.draw(st.permutations(range(len(options))), label="pair")[:2]
    for k in (i, j):
        assume(parse_answer(options[k], [""] * len(options)).reason == "no_match")
    parsed = parse_answer(template.format(x=options[i], y=options[j]), options)
    assert parsed.kind == "unclear", parsed
