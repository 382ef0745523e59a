"""Which card of a thread a message answers, when a question and approvals share the thread."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import discord_mcp.approvals  # registers the approval kind, as every process that asks does
from discord_mcp.approvals.request import ToolRequest
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.routing import DISCORD_EPOCH_MS, SKEW_S, route
from tests.approvals.test_cards import approval

assert discord_mcp.approvals
OWNER = "42"
T0 = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def snowflake(at: datetime, n: int = 0) -> str:
    return str(((int(at.timestamp() * 1000) - DISCORD_EPOCH_MS) << 22) + n)


def question(options: tuple[str, ...], card_at: datetime, n: int, **changes: Any) -> Decision:
    decision = Decision(
        id=f"20261125-120000-00000{n}",
        project="p",
        session="s",
        question="Bump the version?",
        context=None,
        options=options,
        channel_id="1",
        thread_id="2",
        card_message_id=snowflake(card_at, n),
        thread_url="",
        asked_at=card_at.isoformat(),
        owner_ids=(OWNER,),
    )
    return decision.replace(**changes)


def approval_card(card_at: datetime, n: int, command: str = "rm -rf ./data") -> Decision:
    request = ToolRequest("claude", "Bash", {"command": command}, "sess")
    return approval(
        request,
        id=f"20261125-120000-0000a{n}",
        card_message_id=snowflake(card_at, n),
        owner_ids=(OWNER,),
    )


def message(text: str, at: datetime, author: str = OWNER, reply_to: str | None = None) -> dict:
    body: dict[str, Any] = {
        "id": snowflake(at, 99),
        "type": 19 if reply_to else 0,
        "content": text,
        "author": {"id": author, "username": "owner"},
        "channel_id": "2",
    }
    if reply_to:
        body["message_reference"] = {"message_id": reply_to}
    return body


def owners(decision: Decision) -> frozenset[str]:
    return frozenset(decision.owner_ids)


def taken(verdicts: dict[str, Any]) -> dict[str, str]:
    return {k: v.kind for k, v in verdicts.items() if v.kind != "ignore"}


def test_one_yes_never_answers_a_question_and_an_approval_together() -> None:
    q = question(("Yes", "No"), T0, 1)
    a = approval_card(T0 + timedelta(seconds=1), 2)
    verdicts = route(message("yes", T0 + timedelta(minutes=1)), [q, a], owners)
    assert taken(verdicts) == {a.id: "notice"}  # the newest card asks which, once
    assert "2 cards are open" in (verdicts[a.id].reply or "")


def test_a_reply_to_a_card_is_for_that_card_only() -> None:
    q = question(("Yes", "No"), T0, 1)
    a = approval_card(T0 + timedelta(seconds=1), 2)
    later = T0 + timedelta(minutes=1)
    to_approval = route(message("yes", later, reply_to=a.card_message_id), [q, a], owners)
    assert taken(to_approval) == {a.id: "resolve"}
    assert to_approval[a.id].changes["answer"] == "allow"
    to_question = route(message("yes", later, reply_to=q.card_message_id), [q, a], owners)
    assert taken(to_question) == {q.id: "resolve"}


def test_a_reply_only_one_question_can_take_goes_to_that_question() -> None:
    q = question(("PostgreSQL", "SQLite"), T0, 1)
    a = approval_card(T0 + timedelta(seconds=1), 2)
    verdicts = route(message("SQLite", T0 + timedelta(minutes=1)), [q, a], owners)
    assert taken(verdicts) == {q.id: "resolve"}
    assert verdicts[q.id].changes["selected_option"] == "SQLite"


def test_an_approval_sharing_its_thread_is_never_answered_by_a_plain_reply() -> None:
    q = question(("PostgreSQL", "SQLite"), T0, 1)
    a = approval_card(T0 + timedelta(seconds=1), 2)
    verdicts = route(message("yes", T0 + timedelta(minutes=1)), [q, a], owners)
    assert taken(verdicts) == {a.id: "notice"}
    assert verdicts[a.id].changes == {}


def test_two_approvals_ask_which_and_allow_nothing() -> None:
    a1 = approval_card(T0, 1, "make deploy")
    a2 = approval_card(T0 + timedelta(seconds=1), 2, "rm -rf ./data")
    verdicts = route(message("yes", T0 + timedelta(minutes=1)), [a1, a2], owners)
    assert taken(verdicts) == {a2.id: "notice"}


def test_a_card_alone_in_its_thread_judges_alone() -> None:
    a = approval_card(T0, 1)
    verdicts = route(message("yes", T0 + timedelta(minutes=1)), [a], owners)
    assert verdicts[a.id].changes["answer"] == "allow"


def test_cards_answered_before_the_message_or_posted_after_it_do_not_share_it() -> None:
    earlier = T0 - timedelta(minutes=10)
    done = question(("Yes", "No"), earlier, 1, status="answered", answered_at=T0.isoformat())
    a = approval_card(earlier + timedelta(seconds=1), 2)
    after = question(("Yes", "No"), T0 + timedelta(minutes=5), 3)
    at = T0 + timedelta(seconds=SKEW_S + 1)
    verdicts = route(message("yes", at), [done, a, after], owners)
    assert taken(verdicts) == {a.id: "resolve"}


def test_a_card_answered_a_moment_before_still_shares_the_message() -> None:
    just = T0 + timedelta(seconds=59)
    q = question(("Yes", "No"), T0, 1, status="answered", answered_at=just.isoformat())
    a = approval_card(T0 + timedelta(seconds=1), 2)
    verdicts = route(message("yes", T0 + timedelta(minutes=1)), [q, a], owners)
    assert a.id not in {k for k, v in verdicts.items() if v.kind == "resolve"}


def test_a_strangers_reply_is_recorded_on_every_card_and_answered_once() -> None:
    q = question(("Yes", "No"), T0, 1)
    a = approval_card(T0 + timedelta(seconds=1), 2)
    verdicts = route(message("yes", T0 + timedelta(minutes=1), author="7"), [q, a], owners)
    assert taken(verdicts) == {q.id: "refuse", a.id: "refuse"}
    assert [bool(v.reply) for v in (verdicts[q.id], verdicts[a.id])] == [False, True]


def test_two_questions_that_would_both_take_a_reply_ask_which() -> None:
    q1 = question(("Yes", "No"), T0, 1)
    q2 = question(("Yes", "No"), T0 + timedelta(seconds=1), 2)
    verdicts = route(message("no", T0 + timedelta(minutes=1)), [q1, q2], owners)
    assert taken(verdicts) == {q2.id: "notice"}
