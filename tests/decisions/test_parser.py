"""The answer parser: what the owner typed on a phone, in four languages, becomes an answer."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from discord_mcp.decisions.parser import (
    LETTERS,
    MESSAGE_LIMIT,
    NO_WORDS,
    YES_WORDS,
    ParsedAnswer,
    clarify_message,
    parse_answer,
    yes_no_targets,
)


def words(spec: str) -> list[str]:
    return spec.split("|")


OPTIONS = ["Use PostgreSQL", "Use SQLite", "Skip the database", "Ask again tomorrow"]
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# (reply, expected 0-based index) against OPTIONS
FORMS = [
    # letters, with the punctuation people put around them
    ("A", 0),
    ("a", 0),
    ("a)", 0),
    ("(a)", 0),
    ("A.", 0),
    ("A!", 0),
    ("[c]", 2),
    ("**B**", 1),
    ("Ｂ", 1),
    # numbers
    ("2", 1),
    ("2.", 1),
    ("#2", 1),
    ("２", 1),
    ("2️⃣", 1),
    ("3️⃣ please", 2),
    ("①", 0),
    # English words around a choice
    ("option 2", 1),
    ("Option B", 1),
    ("choice 2", 1),
    ("opt 2", 1),
    ("option #3", 2),
    ("answer: D", 3),
    ("go with B", 1),
    ("I think C", 2),
    ("B please", 1),
    ("B is fine", 1),
    ("first", 0),
    ("the second one", 1),
    ("2nd", 1),
    ("third option", 2),
    ("the last one", 3),
    # Korean
    ("2번", 1),
    ("2번요", 1),
    ("2번으로 해줘", 1),
    ("2번이 좋겠어요", 1),
    ("B로 해줘", 1),
    ("B로", 1),
    ("B요", 1),
    ("B안으로 할게요", 1),
    ("첫번째", 0),
    ("두 번째", 1),
    ("세번째", 2),
    ("네 번째 거요", 3),
    ("마지막", 3),
    # Japanese
    ("選択肢2", 1),
    ("2番", 1),
    ("2番で", 1),
    ("2でお願いします", 1),
    ("Bで", 1),
    ("Cにします", 2),
    ("一つ目", 0),
    ("二つ目", 1),
    ("三番目", 2),
    ("最初の", 0),
    # Chinese
    ("第2个", 1),
    ("选2", 1),
    ("选B", 1),
    ("我选C", 2),
    ("2号", 1),
    ("B吧", 1),
    ("第一个", 0),
    ("第二个", 1),
    ("选第三个", 2),
    # a clear choice followed by an explanation
    ("A) because it is safer", 0),
    ("2 - do it now", 1),
    ("B로 해줘, 테스트 먼저", 1),
    ("B\nbecause the data is small", 1),
    ("C: we can add it later", 2),
    ("b, because a is risky", 1),
    ("B, A is too slow", 1),
    # a yes word or thanks before the choice
    ("ok, B", 1),
    ("thanks, C", 2),
    ("네 2번으로 해주세요", 1),
    ("はい、2番で", 1),
    ("好的，选B", 1),
    ("||B||", 1),
    # the option's own text
    ("use sqlite", 1),
    ("Use SQLite!", 1),
    ("  USE   postgresql  ", 0),
    ("skip the database.", 2),
    ("I'd use PostgreSQL here", 0),
    ("postgres", 0),
    ("tomorrow", 3),
]


@pytest.mark.parametrize(("reply", "index"), FORMS, ids=[f for f, _ in FORMS])
def test_common_written_forms_select_the_right_option(reply: str, index: int) -> None:
    parsed = parse_answer(reply, OPTIONS)
    assert (parsed.kind, parsed.selected_index) == ("option", index), parsed
    assert parsed.selected_option == OPTIONS[index]
    assert parsed.text == reply.strip()


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("2", "number"),
        ("option 2", "number"),
        ("B로", "letter"),
        ("the second one", "ordinal"),
        ("第二个", "ordinal"),
        ("use sqlite", "option_text"),
        ("sqlite", "option_text_partial"),
    ],
)
def test_reason_says_how_the_choice_was_recognised(reply: str, reason: str) -> None:
    assert parse_answer(reply, OPTIONS).reason == reason


NEGATIVES = [
    ("a bit later please", "no_match"),
    ("I need 2 more days", "no_match"),
    ("I think A is wrong, B is better", "ambiguous"),
    ("A or B", "ambiguous"),
    ("A, B", "ambiguous"),
    ("2 or 3", "ambiguous"),
    ("A, or maybe B", "ambiguous"),
    ("A) no wait, C", "ambiguous"),
    ("A, use sqlite", "ambiguous"),
    ("use sqlite or skip the database", "ambiguous"),
    ("use", "ambiguous"),
    ("5", "out_of_range"),
    ("E", "out_of_range"),
    ("0", "out_of_range"),
    ("option 9", "out_of_range"),
    ("", "empty"),
    ("   \n ", "empty"),
    ("2,000", "no_match"),
    ("2.5", "no_match"),
    ("2:30", "no_match"),
    ("2-3 days", "ambiguous"),
    ("A?", "no_match"),
    ("first, let me check the logs", "no_match"),
    ("I, for one, am not sure", "no_match"),
    ("二", "no_match"),
    ("2시간 후에", "no_match"),
    ("2日後", "no_match"),
    ("我需要2天", "no_match"),
    ("don't use SQLite", "no_match"),
    ("yes", "yes_no_unmapped"),
    ("no", "yes_no_unmapped"),
]


@pytest.mark.parametrize(("reply", "reason"), NEGATIVES, ids=[r or "<empty>" for r, _ in NEGATIVES])
def test_prose_out_of_range_empty_and_ambiguous_replies_are_unclear(
    reply: str, reason: str
) -> None:
    parsed = parse_answer(reply, OPTIONS)
    assert parsed == ParsedAnswer("unclear", None, None, reply.strip(), reason)


YES_REPLIES = [
    *words("yes|y|yeah|yep|sure|ok|okay|approve|approved|lgtm|go|👍|✅|👍🏽"),
    *words("go ahead|do it|yes please|Sure!|OK, go ahead|lgtm 👍|ok thanks"),
    *words("네|예|응|어|ㅇㅇ|그래|좋아|좋아요|진행|진행해|네~|넵"),
    "네 진행해주세요",
    *words("はい|うん|ええ|お願いします|いいよ|了解|はい、お願いします"),
    *words("是|好|好的|可以|行|对|嗯|好的谢谢"),
]
NO_REPLIES = [
    *words("no|n|nope|nah|reject|stop|don't|👎|❌|No.|NO!"),
    *words("no thanks|not now|don't do it|no, wait for CI"),
    *words("아니|아니요|아뇨|ㄴㄴ|안돼|하지마|중지|아니요, 테스트부터"),
    "안 돼",
    *words("いいえ|いや|だめ|ダメ|やめて"),
    *words("不|否|不要|不行|别"),
]


@pytest.mark.parametrize("reply", YES_REPLIES)
def test_yes_words_pick_the_first_of_two_plain_options(reply: str) -> None:
    parsed = parse_answer(reply, ["Merge now", "Wait for CI"])
    assert (parsed.kind, parsed.selected_index, parsed.reason) == ("option", 0, "yes")


@pytest.mark.parametrize("reply", NO_REPLIES)
def test_no_words_pick_the_second_of_two_plain_options(reply: str) -> None:
    parsed = parse_answer(reply, ["Merge now", "Wait for CI"])
    assert (parsed.kind, parsed.selected_index, parsed.reason) == ("option", 1, "no")


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
        (["Merge now", "Wait for CI"], 0, 1),  # no meaning: as the card says
        (["Go to staging", "Go to prod"], 0, 1),  # the same meaning twice: as the card says
        (["Approve", "Approve with comments", "Reject"], None, 2),
        (["Yes", "Later", "Never"], 0, 2),
        (["Postgres", "SQLite", "None"], None, None),
        (["Only one"], None, None),
        (["Proceed"], 0, None),
    ],
)
def test_yes_and_no_map_by_meaning_then_by_position(
    options: list[str], yes: int | None, no: int | None
) -> None:
    assert yes_no_targets(options) == (yes, no)
    for reply, target in (("yep", yes), ("nope", no)):
        parsed = parse_answer(reply, options)
        if target is None:
            assert (parsed.kind, parsed.reason) == ("unclear", "yes_no_unmapped")
        else:
            assert (parsed.kind, parsed.selected_index) == ("option", target)


@pytest.mark.parametrize(
    ("reply", "options", "expected"),
    [
        ("yes no", ["Yes", "No"], None),
        ("응 아니", ["Yes", "No"], None),
        ("yes, but not now", ["Merge", "Wait"], None),
        ("ok, but don't push yet", ["Merge", "Wait"], 0),
        ("yes, 2", ["Merge", "Wait"], None),
        ("yes, A", ["Merge", "Wait"], 0),
        ("ok, retry", ["Skip", "Retry"], None),
        ("ok, retry", ["Retry", "Skip"], 0),
        ("sure, retry", ["Skip", "Retry", "Abort"], 1),  # yes alone is unmapped, the text is not
        ("y", ["a", "b", "c"], None),  # "y" is a yes word; letter Y is out of range
    ],
)
def test_a_yes_or_no_with_a_contradicting_explanation_is_ambiguous(
    reply: str, options: list[str], expected: int | None
) -> None:
    parsed = parse_answer(reply, options)
    assert parsed.selected_index == expected
    assert (parsed.kind == "option") is (expected is not None)


def test_words_that_merely_start_like_yes_or_no_are_not_answers() -> None:
    for reply in ("not bad", "yesterday", "nothing", "okey dokey pokey", "不错", "好像不行"):
        assert parse_answer(reply, ["Merge", "Wait"]).kind == "unclear", reply
    for reply in ("어떻게 하지", "네가 해", "예를 들어", "goodbye", "stopwatch"):
        assert parse_answer(reply, ["Merge", "Wait"]).kind == "unclear", reply


def test_the_cards_labels_win_over_an_option_whose_text_is_a_label() -> None:
    assert parse_answer("A", ["B", "A"]).selected_index == 0
    assert parse_answer("1", ["3", "2", "1"]).selected_index == 0
    assert parse_answer("plan a", ["Plan B", "Plan A"]).selected_index == 1


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


def test_the_most_specific_option_text_wins() -> None:
    options = ["Use SQLite", "Use SQLite with WAL", "Skip"]
    assert parse_answer("I'd use SQLite with WAL", options).selected_index == 1
    assert parse_answer("let's use sqlite then", options).selected_index == 0


def test_emoji_only_options_match_themselves() -> None:
    assert parse_answer("🚀", ["🐢", "🚀"]).selected_index == 1


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
    forms = [str(i + 1), f"option {i + 1}", f"#{i + 1}", f"{i + 1}번", f"{i + 1}."]
    if i < len(LETTERS):
        forms += [LETTERS[i], LETTERS[i].lower(), f"{LETTERS[i]})", f"Option {LETTERS[i]}"]
    for form in forms:
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
