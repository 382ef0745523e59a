"""Approvals against the emulator: the card, answers, session rules, no answer, a late Allow."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.approvals.cards import YES
from discord_mcp.approvals.request import ToolRequest
from discord_mcp.approvals.service import ApprovalService, Outcome
from discord_mcp.config import Settings
from discord_mcp.decisions.live import answer_click
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.waiting import until as eventually


@pytest.fixture
def settings(discord: RunningEmulator, tmp_path: Path) -> Settings:
    return settings_for(discord, tmp_path / "home")


@contextlib.asynccontextmanager
async def running(settings: Settings) -> AsyncIterator[ApprovalService]:
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        Background() as background,
    ):
        decisions = DecisionService(
            settings=settings, rest=rest, store=DecisionStore(settings.home), background=background
        )
        yield ApprovalService(settings=settings, decisions=decisions, rest=rest)


@pytest.fixture
async def approvals(settings: Settings) -> AsyncIterator[ApprovalService]:
    async with running(settings) as service:
        yield service


def bash(command: str, session: str = "sess-1") -> ToolRequest:
    return ToolRequest("claude", "Bash", {"command": command}, session, cwd="/w")


def cards_in(people: People) -> list[dict[str, Any]]:
    return [
        message
        for thread in people.threads()
        for message in people.messages(thread["id"])
        if "Approval needed" in message["content"]
    ]


async def decide(
    approvals: ApprovalService, request: ToolRequest, wait: float = 20.0
) -> asyncio.Task[Outcome]:
    return asyncio.create_task(approvals.decide(request, max_wait=wait, label="sess-1"))


async def test_the_owners_reaction_allows_and_the_card_shows_it(
    approvals: ApprovalService, people: People
) -> None:
    task = await decide(approvals, bash("make build"))
    [card] = await eventually(lambda: cards_in(people))
    people.react(card["channel_id"], card["id"], YES)
    outcome = await asyncio.wait_for(task, 20)
    assert (outcome.behavior, outcome.how) == ("allow", "owner")
    await eventually(lambda: "Allowed once" in people.messages(card["channel_id"])[0]["content"])


async def test_the_card_pings_the_owners_and_nobody_the_agent_names(
    approvals: ApprovalService, people: People, discord: RunningEmulator
) -> None:
    stranger = people.new_user("stranger")
    task = await decide(approvals, bash(f"echo <@{stranger}> && make release"))
    [card] = await eventually(lambda: cards_in(people))
    assert f"<@{stranger}>" in card["content"]
    assert [user["id"] for user in card["mentions"]] == [discord.owner_user_id]
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def test_a_strangers_reply_is_refused_and_the_owners_no_is_the_reason(
    approvals: ApprovalService, people: People
) -> None:
    stranger = people.new_user("stranger")
    task = await decide(approvals, bash("make deploy"))
    [card] = await eventually(lambda: cards_in(people))
    people.say(card["channel_id"], "yes", author=stranger)
    await eventually(
        lambda: any("only" in m["content"] for m in people.messages(card["channel_id"]))
    )
    assert not task.done()
    people.say(card["channel_id"], "아니요, 스테이징 먼저")
    outcome = await asyncio.wait_for(task, 20)
    assert outcome.behavior == "deny"
    assert "아니요, 스테이징 먼저" in outcome.message
    stored = approvals.decisions.store.load(outcome.decision.id)  # type: ignore[union-attr]
    assert [a.user_id for a in stored.refused] == [stranger]


async def test_allow_for_this_session_answers_later_requests_of_that_session_only(
    approvals: ApprovalService, people: People, settings: Settings
) -> None:
    task = await decide(approvals, bash("npm test -- --watch=false"))
    [card] = await eventually(lambda: cards_in(people))
    data = {
        "type": 3,
        "id": "1",
        "token": "t",
        "member": {"user": {"id": settings_owner(settings), "username": "owner"}},
        "data": {"custom_id": f"dmcp:{card_id(card)}:session"},
    }
    body = await answer_click(approvals.decisions, data)
    assert body is not None
    assert body["type"] == 7
    assert (await asyncio.wait_for(task, 20)).behavior == "allow"

    again = await asyncio.wait_for(
        approvals.decide(bash("npm test"), max_wait=5, label="sess-1"), 10
    )
    assert (again.behavior, again.how) == ("allow", "rule")
    assert len(cards_in(people)) == 1  # nobody was asked again
    chained = await decide(approvals, bash("npm test && rm -rf /tmp/x"), wait=0.5)
    assert (await asyncio.wait_for(chained, 20)).how == "timeout"
    other = await decide(approvals, bash("npm test", session="sess-2"), wait=0.5)
    assert (await asyncio.wait_for(other, 20)).how == "timeout"
    assert len(cards_in(people)) == 3


async def test_no_answer_in_time_is_not_a_refusal_and_a_late_allow_answers_one_retry(
    approvals: ApprovalService, people: People
) -> None:
    outcome = await asyncio.wait_for(
        approvals.decide(bash("make release"), max_wait=0.5, label="sess-1"), 20
    )
    assert (outcome.behavior, outcome.how) == ("deny", "timeout")
    assert "No one answered" in outcome.message
    assert "not a refusal" in outcome.message
    [card] = cards_in(people)
    await eventually(
        lambda: "No one answered within" in people.messages(card["channel_id"])[0]["content"]
    )
    people.react(card["channel_id"], card["id"], YES)
    decision_id = card_id(card)
    store = approvals.decisions.store
    await approvals.decisions.poll(store.load(decision_id))
    assert store.load(decision_id).answer == "allow"

    retry = await asyncio.wait_for(
        approvals.decide(bash("make release"), max_wait=0.5, label="sess-1"), 20
    )
    assert (retry.behavior, retry.how) == ("allow", "late")
    third = await asyncio.wait_for(
        approvals.decide(bash("make release"), max_wait=0.5, label="sess-1"), 20
    )
    assert third.how == "timeout"  # a late Allow answers one retry, not every one


async def test_two_identical_calls_waiting_at_once_get_a_card_each(
    approvals: ApprovalService, people: People
) -> None:
    """One card's Allow once never answers two calls: an identical call that arrives while the
    first still waits on its card is asked on a card of its own."""
    store = approvals.decisions.store
    first = await decide(approvals, bash("make deploy"))
    second: asyncio.Task[Outcome] | None = None
    try:
        [card] = await eventually(lambda: cards_in(people))
        await eventually(lambda: store.waited_on(card_id(card)), what="the first call waiting")
        second = await decide(approvals, bash("make deploy"))
        await eventually(lambda: len(cards_in(people)) == 2, seconds=15, what="a second card")
        people.react(card["channel_id"], card["id"], YES)
        assert (await asyncio.wait_for(first, 20)).behavior == "allow"
        assert not second.done()
    finally:
        for task in (first, second):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


async def test_two_identical_calls_made_at_the_same_moment_get_a_card_each(
    approvals: ApprovalService, people: People
) -> None:
    """The same, with no gap between them: the second call may find the first's card before
    the first call has begun to wait on it (it is still being posted). It is the first's all
    the same: one Allow once answers one call."""
    first = await decide(approvals, bash("make deploy"))
    second = await decide(approvals, bash("make deploy"))
    try:
        cards = await eventually(lambda: len(cards_in(people)) == 2 and cards_in(people))
        people.react(cards[0]["channel_id"], cards[0]["id"], YES)
        done, waiting = await asyncio.wait(
            {first, second}, timeout=20, return_when="FIRST_COMPLETED"
        )
        assert [task.result().behavior for task in done] == ["allow"]
        assert len(waiting) == 1
        assert not waiting.pop().done()
        other = approvals.decisions.store.load(card_id(cards[1]))
        assert other.status == "pending"  # the other call still waits, on a card of its own
    finally:
        for task in (first, second):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def test_a_call_whose_card_could_not_be_posted_leaves_it_to_the_next_identical_call(
    approvals: ApprovalService, people: People
) -> None:
    """Posting failed (Discord down): the call is blocked, and the approval it made is the
    next identical call's to ask on, not a second pending approval of the same call."""
    store = approvals.decisions.store
    people.fault(route="POST /channels/{channel_id}/threads", status=403, code=50001, count=5)
    people.fault(route="POST /channels/{channel_id}/messages", status=403, code=50001, count=5)
    with pytest.raises(Exception):  # noqa: B017, PT011 - which error Discord gave is not the point
        await approvals.decide(bash("make deploy"), max_wait=5, label="sess-1")
    people.fault(clear=True)

    task = await decide(approvals, bash("make deploy"))
    try:
        [card] = await eventually(lambda: cards_in(people))
        pending = [d for d in store.open_decisions() if d.kind == "approval"]
        assert [d.id for d in pending] == [card_id(card)]
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_one_sessions_approvals_share_a_thread(
    approvals: ApprovalService, people: People
) -> None:
    for command in ("make a", "make b"):
        await asyncio.wait_for(approvals.decide(bash(command), max_wait=0.2, label="s"), 20)
    await asyncio.wait_for(
        approvals.decide(bash("make c", session="sess-2"), max_wait=0.2, label="s"), 20
    )
    threads = {c["channel_id"] for c in cards_in(people)}
    assert len(threads) == 2


def card_id(card: dict[str, Any]) -> str:
    return str(card["content"].rsplit("decision `", 1)[1].split("`", 1)[0])


def settings_owner(settings: Settings) -> str:
    return next(iter(settings.owner_ids))
