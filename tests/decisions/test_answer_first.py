"""The agent's answer first, then the card: the card of a decision this process resolved while
one of its calls waited shows the outcome once that call handed the answer over (with twenty
sessions answered at once, the edits would otherwise compete with the answers, bench/scale.py),
and after a bound even if it never does."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from discord_mcp.config import Settings
from discord_mcp.decisions.questions import Question
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.settings import settings_for


@contextlib.asynccontextmanager
async def service_for(settings: Settings, answer_first: float) -> AsyncIterator[DecisionService]:
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        Background() as background,
    ):
        yield DecisionService(
            settings=settings,
            rest=rest,
            store=DecisionStore(settings.home),
            background=background,
            answer_first=answer_first,
        )


def card_text(people: People, thread_id: str, card_id: str) -> str:
    [card] = [m for m in people.messages(thread_id) if m["id"] == card_id]
    return str(card["content"])


async def test_the_card_shows_the_outcome_once_the_answer_was_handed_over(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home")
    async with service_for(settings, answer_first=3600) as service:
        decision, _ = await service.ask(Question("Ship it?", options=("Ship", "Hold")))
        people.say(decision.thread_id, "ship")
        result = await service.wait(decision.id, max_wait=30)
        assert result.selected_option == "Ship"
        await asyncio.sleep(0.5)  # time enough for an edit that did not wait
        assert "**Answered:**" not in card_text(people, decision.thread_id, result.card_message_id)
        assert not service.store.load(decision.id).final_shown
        await service.mark_delivered(result)  # what the server does once the answer left
        async with asyncio.timeout(30):
            while not service.store.load(decision.id).final_shown:
                await asyncio.sleep(0.02)
    assert "**Answered:**" in card_text(people, decision.thread_id, result.card_message_id)


async def test_the_card_shows_the_outcome_even_if_the_answer_never_leaves(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    """A call cancelled as it woke (its client went away) never hands the answer over."""
    settings = settings_for(discord, tmp_path / "home")
    async with service_for(settings, answer_first=0.3) as service:
        decision, _ = await service.ask(Question("Tag it?", options=("Tag", "Skip")))
        people.say(decision.thread_id, "skip")
        result = await service.wait(decision.id, max_wait=30)
        assert result.selected_option == "Skip"
        async with asyncio.timeout(30):
            while not service.store.load(decision.id).final_shown:
                await asyncio.sleep(0.02)
    assert "**Answered:**" in card_text(people, decision.thread_id, result.card_message_id)
