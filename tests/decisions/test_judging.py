"""Cards and judgements: what the owner sees, and who may answer how."""

from __future__ import annotations

from typing import Any

import pytest

from discord_mcp.decisions.answers import (
    MAX_CLARIFICATIONS,
    judge_choice,
    judge_message,
    judge_reaction,
    owner_words,
)
from discord_mcp.decisions.cards import (
    CARD_LIMIT,
    KEYCAPS,
    NO,
    YES,
    reaction_emojis,
    render_card,
    render_final,
)
from tests.decisions.test_store import make_decision

OWNER = "111111111111111111"
STRANGER = "222222222222222222"
OWNERS = frozenset({OWNER})


def message(content: str, author: str = OWNER, **extra: Any) -> dict[str, Any]:
    return {
        "id": "900000000000000001",
        "content": content,
        "author": {"id": author, "username": "someone"},
        **extra,
    }


def test_reactions_follow_the_number_of_options() -> None:
    assert reaction_emojis([]) == ()
    assert reaction_emojis(["only"]) == ()
    assert reaction_emojis(["Yes", "No"]) == (YES, NO)
    assert reaction_emojis(["Reject", "Approve"]) == (NO, YES)
    # Changed (issue 21): ✅/❌ only where the options are a yes and a no; a ✅ on "Delete
    # them" would read as "yes, delete".
    assert reaction_emojis(["Now", "Later"]) == KEYCAPS[:2]
    assert reaction_emojis(["Keep them", "Delete them"]) == KEYCAPS[:2]
    assert reaction_emojis(["a", "b", "c"]) == KEYCAPS[:3]
    assert reaction_emojis([str(i) for i in range(10)]) == KEYCAPS
    assert reaction_emojis([str(i) for i in range(11)]) == ()


def test_the_card_says_how_to_answer_and_who_may() -> None:
    decision = make_decision(options=("Reject", "Approve"), reaction_emojis=(NO, YES))
    card = render_card(decision, OWNERS)
    assert "`yes` for B or `no` for A" in card
    assert f"react {YES} for B / {NO} for A" in card
    assert f"<@{OWNER}>" in card
    assert decision.id in card
    assert "will not proceed" in card


def test_the_card_says_how_long_it_has_waited_as_a_discord_timestamp() -> None:
    decision = make_decision().replace(asked_at="2026-03-02T12:00:00.000+00:00")
    card = render_card(decision, OWNERS)
    assert "asked <t:1772452800:R>" in card.splitlines()[0]
    assert "urgent" not in card
    assert "urgent" in render_card(decision.replace(urgent=True), OWNERS).splitlines()[0]
    assert "asked <t:1772452800:R>" in render_final(decision.replace(status="cancelled"))


def test_the_card_fits_one_message_whatever_the_agent_sends() -> None:
    decision = make_decision(
        question="q" * 1500,
        context="c" * 5000,
        options=tuple("o" * 100 + str(i) for i in range(25)),
    )
    assert len(render_card(decision, OWNERS)) <= CARD_LIMIT
    assert (
        len(render_final(decision.replace(status="cancelled", cancel_reason="r" * 900)))
        <= CARD_LIMIT
    )


def test_the_final_card_names_the_answer_and_who_gave_it() -> None:
    decision = make_decision().replace(
        status="answered",
        selected_index=1,
        selected_option="No",
        answer="no",
        answered_by=OWNER,
        via="text",
        answered_at="2026-11-22T16:02:00+00:00",
    )
    text = render_final(decision)
    assert "**B** No" in text
    assert f"<@{OWNER}>" in text
    assert "2026-11-22 16:02 UTC" in text
    assert "How to answer" not in text


def test_an_owner_reply_resolves_with_the_parsed_option() -> None:
    verdict = judge_message(make_decision(), message("2"), OWNERS, None)
    assert verdict.kind == "resolve"
    assert verdict.changes["selected_index"] == 1
    assert verdict.changes["via"] == "text"
    assert verdict.changes["answered_by"] == OWNER


def test_bots_and_system_messages_are_ignored() -> None:
    bot = message("1", author=STRANGER)
    bot["author"]["bot"] = True
    assert judge_message(make_decision(), bot, OWNERS, None).kind == "ignore"
    assert judge_message(make_decision(), message("1", type=7), OWNERS, None).kind == "ignore"
    assert (
        judge_message(make_decision(), message("   ", stickers=[]), OWNERS, None).kind == "notice"
    )


def test_a_stranger_is_refused_recorded_and_told_only_once() -> None:
    decision = make_decision()
    first = judge_message(decision, message("yes", author=STRANGER), OWNERS, None)
    assert first.kind == "refuse"
    assert first.reply is not None
    assert f"<@{OWNER}>" in first.reply
    decision = decision.replace(**first.changes)
    second = judge_message(decision, message("1", author=STRANGER), OWNERS, None)
    assert second.kind == "refuse"
    assert second.reply is None
    assert len(second.changes["refused"]) == 2


def test_short_unclear_replies_are_clarified_twice_then_taken_as_free_text() -> None:
    decision = make_decision(options=("Red", "Green", "Blue"))
    for attempt in range(1, MAX_CLARIFICATIONS + 1):
        verdict = judge_message(decision, message("no idea"), OWNERS, None)
        assert verdict.kind == "clarify"
        assert verdict.changes == {"clarifications": attempt}
        decision = decision.replace(**verdict.changes)
    final = judge_message(decision, message("no idea"), OWNERS, None)
    assert final.kind == "resolve"
    assert final.changes["selected_option"] is None
    assert final.changes["answer"] == "no idea"


@pytest.mark.parametrize(
    "reply",
    [
        "no idea honestly, you pick",  # 15+ characters
        "maybe ask the designer first?",  # a question, long
        "디자이너한테 물어봐",  # 3+ Hangul syllables
        "글쎄요",  # exactly 3
    ],
)
def test_a_long_reply_picking_no_option_is_free_text_after_one_clarification(reply: str) -> None:
    decision = make_decision(options=("Red", "Green", "Blue"))
    first = judge_message(decision, message(reply), OWNERS, None)
    assert (first.kind, first.changes) == ("clarify", {"clarifications": 1})
    final = judge_message(decision.replace(**first.changes), message(reply), OWNERS, None)
    assert final.kind == "resolve"
    assert (final.changes["answer"], final.changes["selected_option"]) == (reply, None)


@pytest.mark.parametrize(
    "reply",
    [
        "either red or green works for me",  # names two options: ambiguous
        "글쎄",  # 2 Hangul syllables, 2 characters
        "||something warm and nice||",  # words set apart are not read
    ],
)
def test_long_or_not_a_reply_that_names_options_or_is_short_is_asked_twice(reply: str) -> None:
    decision = make_decision(options=("Red", "Green", "Blue"), clarifications=1)
    assert judge_message(decision, message(reply), OWNERS, None).kind == "clarify"


def test_reactions_map_to_their_option_and_only_for_owners() -> None:
    decision = make_decision(options=("Reject", "Approve"), reaction_emojis=(NO, YES))
    assert judge_reaction(decision, OWNER, "o", YES, OWNERS).changes["selected_option"] == "Approve"
    assert judge_reaction(decision, STRANGER, "s", YES, OWNERS).kind == "refuse"
    assert judge_reaction(decision, OWNER, "o", "🎉", OWNERS).kind == "ignore"


@pytest.mark.parametrize("via", ["button", "select"])
def test_clicks_resolve_for_owners_only(via: str) -> None:
    decision = make_decision()
    verdict = judge_choice(decision, OWNER, "o", OWNERS, via=via, index=0)  # type: ignore[arg-type]
    assert verdict.changes["selected_option"] == "Yes"
    assert judge_choice(decision, STRANGER, "s", OWNERS, via="button", index=0).kind == "refuse"
    assert judge_choice(decision, OWNER, "o", OWNERS, via="button", index=7).kind == "ignore"


def test_a_final_decision_ignores_everything() -> None:
    done = make_decision().replace(status="cancelled")
    assert judge_message(done, message("1"), OWNERS, None).kind == "ignore"
    assert judge_reaction(done, OWNER, "o", YES, OWNERS).kind == "ignore"
    assert (
        judge_choice(done, OWNER, "o", OWNERS, via="modal", index=None, text="x").kind == "ignore"
    )


def test_hidden_reply_text_gets_a_one_time_hint_to_use_reactions() -> None:
    decision = make_decision()
    first = judge_message(decision, message(""), OWNERS, None)
    assert first.kind == "notice"
    assert first.reply is not None
    assert "Message Content" in first.reply
    decision = decision.replace(**first.changes)
    assert judge_message(decision, message(""), OWNERS, None).kind == "ignore"
    stickers = message("", sticker_items=[{"id": "1", "name": "wave"}])
    assert judge_message(make_decision(), stickers, OWNERS, None).kind == "ignore"


SHOT = {"id": "700000000000000001", "filename": "shot.png", "content_type": "image/png"}


def test_a_file_alone_answers_in_the_owners_own_words_and_is_recorded() -> None:
    decision = make_decision(options=("Ship", "Hold"))
    verdict = judge_message(decision, message("", attachments=[SHOT]), OWNERS, None)
    assert verdict.kind == "resolve"
    assert verdict.changes["answer"] == "[file: shot.png]"
    assert verdict.changes["selected_option"] is None
    assert verdict.changes["answer_message_id"] == "900000000000000001"
    [kept] = verdict.changes["attachments"]
    assert (kept["attachment_id"], kept["filename"], kept["path"]) == (SHOT["id"], "shot.png", None)


def test_a_voice_message_answers_as_one() -> None:
    voice = message("", attachments=[{**SHOT, "filename": "voice-message.ogg"}], flags=1 << 13)
    verdict = judge_message(make_decision(), voice, OWNERS, None)
    assert verdict.changes["answer"] == "[voice message: voice-message.ogg]"
    assert verdict.changes["attachments"][0]["voice_message"] is True


def test_a_reply_with_text_and_a_file_is_parsed_and_keeps_the_file() -> None:
    decision = make_decision(options=("Ship", "Hold"))
    verdict = judge_message(decision, message("hold", attachments=[SHOT]), OWNERS, None)
    assert verdict.changes["selected_option"] == "Hold"
    assert verdict.changes["attachments"][0]["filename"] == "shot.png"


def test_a_strangers_file_answers_nothing() -> None:
    verdict = judge_message(
        make_decision(), message("", author=STRANGER, attachments=[SHOT]), OWNERS, None
    )
    assert verdict.kind == "refuse"


BRANCHES = ("Delete the old branches", "Keep them")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("> Delete the old branches\nkeep them", "keep them"),
        ("> **A** (1) Delete the old branches\n> **B** (2) Keep them\nB", "B"),
        ("B\n>>> A\nDelete the old branches", "B"),
        ("<@123456789> B", "B"),
        ("<@!123456789> <@&42> <#7> B @everyone @here", "B"),
        (">not a quote without a space", ">not a quote without a space"),
        ("> only a quote", ""),
        ("<@1>", ""),
    ],
)
def test_only_the_owners_own_words_are_judged(content: str, words: str) -> None:
    assert owner_words(content) == words


def test_a_quoted_option_is_not_the_owners_answer() -> None:
    decision = make_decision(options=BRANCHES)
    quoted = message("> Delete the old branches\nkeep them!")
    verdict = judge_message(decision, quoted, OWNERS, None)
    assert verdict.kind == "resolve"
    assert verdict.changes["selected_option"] == "Keep them"
    # Changed (issue 21): "no" picks nothing where the options are not a yes and a no.
    assert judge_message(
        decision, message("> Delete the old branches\nno!"), OWNERS, None
    ).kind == ("clarify")
    mentioned = judge_message(decision, message(f"<@{OWNER}> 1"), OWNERS, None)
    assert mentioned.changes["selected_option"] == "Delete the old branches"


def test_a_reply_of_only_quotes_or_mentions_is_clarified_then_ignored() -> None:
    decision = make_decision(options=BRANCHES)
    for attempt in range(1, MAX_CLARIFICATIONS + 1):
        verdict = judge_message(decision, message("> Delete the old branches"), OWNERS, None)
        assert (verdict.kind, verdict.changes) == ("clarify", {"clarifications": attempt})
        assert verdict.reply is not None
        assert "no words of your own" in verdict.reply
        decision = decision.replace(**verdict.changes)
    assert judge_message(decision, message("> Delete the old branches"), OWNERS, None).kind == (
        "ignore"
    )


def test_a_refused_option_is_clarified_never_recorded() -> None:
    decision = make_decision(options=BRANCHES)
    for reply in ("delete the old branches? no!", "don't delete the old branches", "A, no"):
        verdict = judge_message(decision, message(reply), OWNERS, None)
        assert verdict.kind == "clarify", reply
        assert "selected_option" not in verdict.changes


def test_after_two_clarifications_a_refusal_is_free_text_not_the_refused_option() -> None:
    decision = make_decision(options=BRANCHES, clarifications=MAX_CLARIFICATIONS)
    verdict = judge_message(decision, message("delete the old branches? no!"), OWNERS, None)
    assert verdict.kind == "resolve"
    assert verdict.changes["selected_option"] is None
    assert verdict.changes["answer"] == "delete the old branches? no!"


@pytest.mark.parametrize(
    ("options", "how"),
    [
        (("Red", "Green"), "with a letter or number (e.g. `A` or `1`)"),
        (("B", "A"), "with a number (e.g. `1`)"),
        (("10", "5", "1"), "with a letter (e.g. `A`)"),
        (("2", "A"), "with an option's exact text"),
    ],
)
def test_the_card_never_offers_a_label_that_an_options_text_would_win(
    options: tuple[str, ...], how: str
) -> None:
    assert f"reply in this thread {how}" in render_card(make_decision(options=options), OWNERS)


def test_yes_and_no_are_offered_and_coloured_only_for_a_yes_and_a_no() -> None:
    from discord_mcp.decisions.interactive import DANGER, PRIMARY, SUCCESS, card_components

    plain = make_decision(options=("Keep them", "Delete them"))
    plain = plain.replace(reaction_emojis=reaction_emojis(plain.options))
    card = render_card(plain, OWNERS, buttons=True)
    assert "`yes`" not in card
    assert "`no`" not in card
    assert YES not in card
    styles = [b["style"] for b in card_components(plain.id, plain.options)[0]["components"][:2]]
    assert styles == [PRIMARY, PRIMARY]
    paired = make_decision(options=("Proceed", "Cancel"))
    paired = paired.replace(reaction_emojis=reaction_emojis(paired.options))
    assert "`yes` for A or `no` for B" in render_card(paired, OWNERS, buttons=True)
    styles = [b["style"] for b in card_components(paired.id, paired.options)[0]["components"][:2]]
    assert styles == [SUCCESS, DANGER]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("~~A~~ B", "B"),
        ("||A|| B", "B"),
        ("use `rm -rf` B", "use B"),
        ("```\nA\n```\nB", "B"),
        ("~~yes~~", ""),
        ("~~unclosed yes", "~~unclosed yes"),
        ("> ~~quoted~~\nB", "B"),
    ],
)
def test_struck_through_hidden_and_code_words_are_not_the_owners_plain_words(
    content: str, words: str
) -> None:
    assert " ".join(owner_words(content).split()) == words


@pytest.mark.parametrize("reply", ["~~Keep them~~", "||B||", "`A`", "A ||just kidding||"])
def test_a_struck_through_or_hidden_option_is_clarified_never_recorded(reply: str) -> None:
    """Issue 32: strikethrough, spoilers and code are not the owner's plain word."""
    verdict = judge_message(make_decision(options=BRANCHES), message(reply), OWNERS, None)
    assert verdict.kind == "clarify", verdict
