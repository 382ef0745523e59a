"""A question and an approval open in one thread, against the emulator: one "yes" answers one
card at most, a reply to a card answers that card, and the owner is asked which when unclear."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from discord_mcp.approvals.request import ToolRequest
from discord_mcp.approvals.service import ApprovalService
from discord_mcp.config import Settings
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.questions import Question
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
    return dataclasses.replace(settings_for(discord, tmp_path / "home"), poll_interval=0.2)


@pytest.fixture
async def service(settings: Settings) -> AsyncIterator[DecisionService]:
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        Background() as background,
    ):
        yield DecisionService(
            settings=settings, rest=rest, store=DecisionStore(settings.home), background=background
        )


async def both_open(
    service: DecisionService, settings: Settings, people: People, options: tuple[str, ...]
) -> tuple[Decision, Decision, asyncio.Task[Decision], asyncio.Task[object]]:
    """A run's question and, in its thread, an approval for ``rm -rf ./data``; both waited on."""
    question, _ = await service.ask(Question("Bump the version?", options=options))
    asking = asyncio.create_task(service.wait(question.id, max_wait=60))
    in_thread = dataclasses.replace(settings, thread_id=question.thread_id)
    approvals = ApprovalService(settings=in_thread, decisions=service, rest=service._rest)
    request = ToolRequest("claude", "Bash", {"command": "rm -rf ./data"}, "sess-1", cwd="/w")
    approving = asyncio.create_task(approvals.decide(request, max_wait=60, label="sess-1"))

    def approval_card() -> Decision | None:
        found = [
            d for d in service.store.open_decisions() if d.kind == "approval" and d.card_message_id
        ]
        return found[0] if found else None

    approval = await eventually(approval_card)
    assert approval.thread_id == question.thread_id
    return question, approval, asking, approving


def bot_lines(people: People, thread_id: str, words: str) -> list[str]:
    return [m["content"] for m in people.messages(thread_id) if words in m["content"]]


async def test_a_plain_yes_answers_neither_card_and_asks_which_once(
    service: DecisionService, settings: Settings, people: People
) -> None:
    question, approval, asking, approving = await both_open(
        service, settings, people, ("Yes", "No")
    )
    said = people.say(question.thread_id, "yes")
    await eventually(lambda: bot_lines(people, question.thread_id, "cards are open"))
    await eventually(  # both cards have judged it
        lambda: all(service.store.load(d.id).handled(said["id"]) for d in (question, approval))
    )
    assert service.store.load(question.id).status == "pending"
    assert service.store.load(approval.id).status == "pending"
    assert len(bot_lines(people, question.thread_id, "cards are open")) == 1

    people.say(question.thread_id, "yes", reply_to=approval.card_message_id)
    outcome = await asyncio.wait_for(approving, 30)
    assert outcome.behavior == "allow"  # type: ignore[attr-defined]
    assert service.store.load(question.id).status == "pending"

    people.say(question.thread_id, "no", reply_to=question.card_message_id)
    answered = await asyncio.wait_for(asking, 30)
    assert answered.selected_option == "No"


async def test_a_reply_only_the_question_can_take_answers_it_and_leaves_the_approval(
    service: DecisionService, settings: Settings, people: People
) -> None:
    question, approval, asking, approving = await both_open(
        service, settings, people, ("PostgreSQL", "SQLite")
    )
    people.say(question.thread_id, "SQLite")
    answered = await asyncio.wait_for(asking, 30)
    assert answered.selected_option == "SQLite"
    assert service.store.load(approval.id).status == "pending"
    assert not bot_lines(people, question.thread_id, "could not tell whether")
    approving.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await approving
