"""Reading the owner's answer to an approval: buttons, the note, reactions, replies, strangers."""

from __future__ import annotations

from typing import Any

import pytest

from discord_mcp.approvals.cards import NO, YES
from discord_mcp.approvals.judging import judge_click, judge_message, judge_reaction
from discord_mcp.approvals.request import ToolRequest
from tests.approvals.test_cards import approval

OWNERS = frozenset({"42"})


def pending() -> Any:
    return approval(ToolRequest("claude", "Bash", {"command": "make"}, "s"))


def reply(text: str, author: str = "42", **extra: Any) -> dict[str, Any]:
    return {
        "id": "99",
        "type": 0,
        "content": text,
        "author": {"id": author, "username": "u"},
        **extra,
    }


@pytest.mark.parametrize("text", ["yes", "ok", "go ahead", "네", "승인", "はい", "是", "好的"])
def test_yes_in_four_languages_allows_once(text: str) -> None:
    verdict = judge_message(pending(), reply(text), OWNERS)
    assert verdict.kind == "resolve"
    assert (verdict.changes["answer"], verdict.changes["scope"]) == ("allow", "once")


@pytest.mark.parametrize("text", ["no", "아니요", "いいえ", "不要", "no, use make clean instead"])
def test_no_in_four_languages_denies_with_the_reply_as_the_reason(text: str) -> None:
    verdict = judge_message(pending(), reply(text), OWNERS)
    assert (verdict.kind, verdict.changes["answer"]) == ("resolve", "deny")
    assert verdict.changes["note"] == text


def test_an_unclear_reply_gets_a_hint_and_never_becomes_an_answer() -> None:
    decision = pending()
    for attempt in (1, 2):
        verdict = judge_message(decision, reply("hmm, what does it do?"), OWNERS)
        assert verdict.kind == "clarify"
        assert verdict.reply
        assert "yes" in verdict.reply
        decision = decision.replace(clarifications=attempt)
    assert judge_message(decision, reply("hmm"), OWNERS).kind == "ignore"


def test_a_strangers_reply_is_refused_and_recorded() -> None:
    verdict = judge_message(pending(), reply("yes", author="7"), OWNERS)
    assert verdict.kind == "refuse"
    assert verdict.changes["refused"][-1].user_id == "7"
    assert verdict.reply is not None
    assert "<@42>" in verdict.reply


def test_a_reply_to_another_message_is_not_an_answer() -> None:
    message = reply("yes", message_reference={"message_id": "12345"})
    assert judge_message(pending(), message, OWNERS).kind == "ignore"
    to_card = reply("yes", message_reference={"message_id": "3"})
    assert judge_message(pending(), to_card, OWNERS).kind == "resolve"


def test_reactions_allow_once_or_deny() -> None:
    assert judge_reaction(pending(), "42", "u", YES, OWNERS).changes["answer"] == "allow"
    assert judge_reaction(pending(), "42", "u", NO, OWNERS).changes["answer"] == "deny"
    assert judge_reaction(pending(), "7", "s", YES, OWNERS).kind == "refuse"
    assert judge_reaction(pending(), "42", "u", "🎉", OWNERS).kind == "ignore"


def test_each_button_means_what_its_label_says() -> None:
    assert judge_click(pending(), "42", "u", OWNERS, part="allow").changes["scope"] == "once"
    session = judge_click(pending(), "42", "u", OWNERS, part="session").changes
    assert (session["answer"], session["scope"]) == ("allow", "session")
    assert judge_click(pending(), "42", "u", OWNERS, part="deny").changes["answer"] == "deny"
    note = judge_click(pending(), "42", "u", OWNERS, part="modal", note=" not now ").changes
    assert (note["answer"], note["note"], note["via"]) == ("deny", "not now", "modal")
    assert judge_click(pending(), "7", "s", OWNERS, part="allow").kind == "refuse"


def test_nothing_changes_an_answered_approval() -> None:
    done = pending().replace(status="answered", answer="deny")
    assert judge_click(done, "42", "u", OWNERS, part="allow").kind == "ignore"
    assert judge_message(done, reply("yes"), OWNERS).kind == "ignore"


UNDONE = [
    "allow ❌",
    "allow 🙅",
    "allow 🙅‍♀️",
    "allow, just kidding",
    "allow nvm",
    "allow. changed my mind",
    "yes, scratch that",
    "allow 🛑",
    "네 농담이에요",
    "はい、やっぱりやめて",
    "好的，开玩笑的",
]
CONDITIONAL = [
    "allow unless it deletes",
    "allow only if the tests pass",
    "yes, but only on staging",
    "yes except on main",
    "yes if it is the staging db",
    "yes as long as it is a dry run",
    "만약 스테이징이면 허용",
    "ステージングなら許可",
    "如果是测试环境就允许",
]


@pytest.mark.parametrize("text", UNDONE + CONDITIONAL)
def test_a_reply_that_takes_back_refuses_or_conditions_its_allow_never_allows(text: str) -> None:
    verdict = judge_message(pending(), reply(text), OWNERS)
    assert verdict.kind in ("clarify", "resolve")
    if verdict.kind == "resolve":
        assert verdict.changes["answer"] == "deny"


@pytest.mark.parametrize("text", CONDITIONAL)
def test_a_conditional_reply_is_asked_again(text: str) -> None:
    assert judge_message(pending(), reply(text), OWNERS).kind == "clarify"


@pytest.mark.parametrize("text", ["A", "1", "allow for this session", "allow it maybe", "allow?"])
def test_only_an_explicit_allow_word_allows(text: str) -> None:
    assert judge_message(pending(), reply(text), OWNERS).kind == "clarify"


@pytest.mark.parametrize("text", ["don't run that, it wipes prod", "🙅", "보류", "stop"])
def test_a_plain_refusal_denies_with_its_words_as_the_reason(text: str) -> None:
    verdict = judge_message(pending(), reply(text), OWNERS)
    assert (verdict.kind, verdict.changes["answer"]) == ("resolve", "deny")
    assert verdict.changes["note"] == text


def test_quoted_lines_are_not_the_owners_words() -> None:
    verdict = judge_message(pending(), reply("> yes\nno, use staging"), OWNERS)
    assert (verdict.kind, verdict.changes["answer"]) == ("resolve", "deny")
    assert judge_message(pending(), reply("> no\nyes"), OWNERS).changes["answer"] == "allow"


@pytest.mark.parametrize(
    "text",
    [
        "~~yes~~",
        "||yes||",
        "`yes`",
        "``yes``",
        "```\nyes\n```",
        "~~ok~~",
        "||네||",
        "yes ||just kidding||",
        "~~no~~ yes",
        "`rm -rf /` yes",
    ],
)
def test_struck_through_hidden_or_quoted_words_never_allow(text: str) -> None:
    """Issue 32: a struck-through ``~~yes~~`` allowed. Strikethrough, spoilers and code are not
    the owner's plain word; an allow beside them is asked again."""
    verdict = judge_message(pending(), reply(text), OWNERS)
    assert verdict.kind == "clarify", verdict


def test_a_plain_no_beside_marked_up_words_still_denies() -> None:
    verdict = judge_message(pending(), reply("no, that `rm -rf` wipes ~~prod~~ everything"), OWNERS)
    assert (verdict.kind, verdict.changes["answer"]) == ("resolve", "deny")
