"""Whatever crashes between the steps of asking, the question ends up answerable, never lost.

A crash leaves the state a step left behind (files are replaced whole), so each test builds
exactly that state and checks what the next ask, wait or recovery does with it. The chaos
benchmark (bench/chaos.py) kills real processes at random points on top of this.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Settings
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.questions import Question
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import DecisionError
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.waiting import until


@pytest.fixture
def settings(discord: RunningEmulator, tmp_path: Path) -> Settings:
    return settings_for(discord, tmp_path / "home")


async def _no_pause(_seconds: float) -> None:
    return None


@contextlib.asynccontextmanager
async def running_service(
    settings: Settings, *, live: Callable[[], bool] = lambda: False
) -> AsyncIterator[DecisionService]:
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        Background() as background,
    ):
        yield DecisionService(
            settings=settings,
            rest=rest,
            store=DecisionStore(settings.home),
            background=background,
            live=live,
            sleep=_no_pause,
        )


@pytest.fixture
async def service(settings: Settings) -> AsyncIterator[DecisionService]:
    async with running_service(settings) as svc:
        yield svc


def cards_of(people: People, thread_id: str, decision_id: str) -> list[dict[str, Any]]:
    return [m for m in people.messages(thread_id) if f"decision `{decision_id}`" in m["content"]]


async def left_behind(service: DecisionService, decision: Decision, **fields: Any) -> Decision:
    """The decision as a process that died at some step would have left it."""
    stored, _ = await service.store.aupdate(decision.id, lambda d: d.replace(**fields))
    return stored


async def test_a_reask_after_the_askers_death_before_its_card_posts_the_card(
    service: DecisionService, people: People, settings: Settings
) -> None:
    """kill -9 after the decision file and its thread, before the card: the same question
    asked again is the same decision, and now it has a card that can be answered."""
    first, created = await service.ask(Question("Migrate now?", options=("Yes", "No")))
    assert created
    async with RestClient(settings.token, api_base=settings.api_base) as rest:
        await rest.delete_message(first.thread_id, first.card_message_id)  # never posted
    await left_behind(service, first, card_message_id="", seen_message_id=None, card_buttons=False)

    again, created = await service.ask(Question("Migrate now?", options=("Yes", "No")))
    assert not created
    assert again.id == first.id
    assert again.card_message_id
    [card] = cards_of(people, first.thread_id, first.id)
    assert card["id"] == again.card_message_id
    people.say(first.thread_id, "no")
    answered = await service.wait(first.id, max_wait=10)
    assert (answered.status, answered.selected_option) == ("answered", "No")


async def test_a_decision_left_without_a_thread_gets_its_thread_and_card_on_recovery(
    service: DecisionService, people: People, settings: Settings
) -> None:
    """kill -9 right after the draft was written: nothing reached Discord yet."""
    draft = Decision(
        id="20261123-120000-abcdef",
        project=settings.project_name,
        session="s",
        question="Rotate the keys?",
        context=None,
        options=("Rotate", "Wait"),
        channel_id=settings.channel_id,
        thread_id="",
        card_message_id="",
        thread_url="",
        asked_at="2026-11-23T12:00:00.000+00:00",
        owner_ids=tuple(sorted(settings.owner_ids)),
        reaction_emojis=("\u2705", "\u274c"),
    )
    await service.store.acreate(draft)
    before = len(people.threads())
    [recovered] = await service.recover()
    assert recovered.status == "pending"
    assert recovered.thread_id
    assert recovered.card_message_id
    assert len(people.threads()) == before + 1
    assert recovered.thread_url.endswith(recovered.thread_id)
    assert len(cards_of(people, recovered.thread_id, draft.id)) == 1
    [again] = await service.recover()  # a second look posts nothing more
    assert again.card_message_id == recovered.card_message_id
    assert len(cards_of(people, recovered.thread_id, draft.id)) == 1


async def test_a_card_that_is_being_posted_by_a_live_process_is_left_to_it(
    service: DecisionService, people: People
) -> None:
    """A decision without a card whose posting claim is held is not posted twice."""
    decision, _ = await service.ask(Question("Hold on?"))
    await left_behind(service, decision, card_message_id="", seen_message_id=None)
    claim = service.store.try_posting(decision.id)
    assert claim is not None
    try:
        [looked_at] = await service.recover()
        assert looked_at.card_message_id == ""
        assert len(cards_of(people, decision.thread_id, decision.id)) == 1  # only the original
    finally:
        claim.release()
    [adopted] = await service.recover()  # the poster "died": the original card is adopted
    assert adopted.card_message_id == decision.card_message_id
    assert len(cards_of(people, decision.thread_id, decision.id)) == 1


async def test_a_card_posted_before_the_gateway_came_up_gets_its_buttons(
    settings: Settings, people: People
) -> None:
    live = False
    async with running_service(settings, live=lambda: live) as service:
        decision, _ = await service.ask(Question("Ship it?", options=("Ship", "Hold")))
        [card] = cards_of(people, decision.thread_id, decision.id)
        assert not card.get("components")
        live = True
        waiting = asyncio.create_task(service.wait(decision.id, max_wait=15))
        card = await until(
            lambda: [
                m for m in cards_of(people, decision.thread_id, decision.id) if m.get("components")
            ]
        )
        assert "click a button" in card[0]["content"]
        await until(lambda: service.store.load(decision.id).card_buttons)
        waiting.cancel()
        live = False  # (no real gateway here: answer by a reply, which polling finds)
        people.say(decision.thread_id, "hold")
        result = await service.wait(decision.id, max_wait=15)
    assert result.selected_option == "Hold"


async def test_a_failed_final_edit_of_the_card_is_retried(
    service: DecisionService, people: People
) -> None:
    decision, _ = await service.ask(Question("Tag the release?", options=("Tag", "Skip")))
    # A refusal the REST client does not retry by itself: the service retries the edit.
    people.fault(route="PATCH /channels/{channel_id}/messages/{message_id}", status=403, count=2)
    people.say(decision.thread_id, "tag")
    result = await service.wait(decision.id, max_wait=10)
    assert result.selected_option == "Tag"
    await until(lambda: service.store.load(decision.id).final_shown, seconds=30)
    [card] = cards_of(people, decision.thread_id, decision.id)
    assert "**Answered:**" in card["content"]


async def test_a_final_edit_that_never_happened_is_shown_on_recovery(
    service: DecisionService, people: People
) -> None:
    decision, _ = await service.ask(Question("Bump the version?", options=("Bump", "Keep")))
    people.fault(route="PATCH /channels/{channel_id}/messages/{message_id}", status=403, count=50)
    people.say(decision.thread_id, "keep")
    await service.wait(decision.id, max_wait=10)
    await service._background.drain()  # every retry of this process failed
    assert not service.store.load(decision.id).final_shown
    people.fault(clear=True)
    await service.recover()
    await until(lambda: service.store.load(decision.id).final_shown, seconds=30)
    [card] = cards_of(people, decision.thread_id, decision.id)
    assert "**Answered:**" in card["content"]


async def test_the_main_channel_is_refused_as_a_thread(
    service: DecisionService, settings: Settings, people: People
) -> None:
    before = len(people.messages(settings.channel_id))
    with pytest.raises(DecisionError, match="not a thread"):
        await service.ask(Question("Here?", thread_id=settings.channel_id))
    assert len(people.messages(settings.channel_id)) == before
    assert service.store.open_decisions() == []


async def test_a_reask_after_the_askers_death_before_the_cards_reactions_adds_them(
    service: DecisionService, people: People, settings: Settings
) -> None:
    """kill -9 after the card, before its reactions (bench/chaos found it: the owner waited for
    reactions that never came): the same question asked again puts them on the card."""
    first, _ = await service.ask(Question("Roll back?", options=("Yes", "No")))
    async with RestClient(settings.token, api_base=settings.api_base) as rest:
        bare = await rest.create_message(first.thread_id, f"decision `{first.id}`: Roll back?")
    await left_behind(
        service,
        first,
        card_message_id=bare["id"],
        seen_message_id=bare["id"],
        asker_lease="4242-deadbeef",  # a process that is gone
    )

    def reactions() -> set[str]:
        [card] = [m for m in people.messages(first.thread_id) if m["id"] == bare["id"]]
        return {r["emoji"]["name"] for r in card.get("reactions") or []}

    assert reactions() == set()
    again, created = await service.ask(Question("Roll back?", options=("Yes", "No")))
    assert (again.id, again.card_message_id, created) == (first.id, bare["id"], False)
    await until(lambda: reactions() == set(first.reaction_emojis), 10, "the card's reactions")
