"""Questions' threads do not pile up against Discord's cap of active threads: a question's own
thread lasts a day without activity, and is archived once its question is final and the card
shows the outcome, unless it is still in use (another open question in it, or a thread the
question did not open, such as a run's). Discord's 160006 says what to do."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Settings
from discord_mcp.decisions.live import DecisionEvents
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.questions import Question
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import BadRequest
from discord_mcp.relay.link import LiveLink
from discord_mcp.tasks import Background, cancel_and_wait
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.waiting import until


@pytest.fixture
def settings(discord: RunningEmulator, tmp_path: Path) -> Settings:
    return settings_for(discord, tmp_path / "home")


@contextlib.asynccontextmanager
async def running_service(
    settings: Settings, *, live: Callable[[], bool] = lambda: False
) -> AsyncIterator[tuple[DecisionService, RestClient]]:
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        Background() as background,
    ):
        service = DecisionService(
            settings=settings,
            rest=rest,
            store=DecisionStore(settings.home),
            background=background,
            live=live,
        )
        yield service, rest


def thread(people: People, thread_id: str) -> dict[str, Any]:
    return next(c for c in people.state()["channels"] if c["id"] == thread_id)


def archived(people: People, thread_id: str) -> bool:
    return bool(thread(people, thread_id)["thread_metadata"]["archived"])


async def answered(service: DecisionService, people: People, decision: Decision) -> Decision:
    """The owner answers (a reply to its card); returns once the card shows the outcome."""
    await asyncio.to_thread(
        people.say, decision.thread_id, decision.options[0], reply_to=decision.card_message_id
    )
    final = await service.wait(decision.id, max_wait=15)
    assert final.status == "answered"
    return await until(lambda: (d := service.store.load(decision.id)).final_shown and d)


async def test_a_question_opens_its_thread_for_a_day_and_archives_it_once_answered(
    settings: Settings, people: People
) -> None:
    async with running_service(settings) as (service, _rest):
        decision, _ = await service.ask(Question("Merge now?", options=("Yes", "No")))
        opened = thread(people, decision.thread_id)
        assert opened["thread_metadata"]["auto_archive_duration"] == 1440
        assert not opened["thread_metadata"]["archived"]
        await answered(service, people, decision)
        await until(lambda: archived(people, decision.thread_id))
        # It reopens by itself when the owner writes in it again.
        await asyncio.to_thread(people.say, decision.thread_id, "and tag the release")
    assert not archived(people, decision.thread_id)


async def test_only_the_first_showing_of_an_outcome_archives_the_thread(
    settings: Settings, people: People
) -> None:
    async with running_service(settings) as (service, _rest):
        decision, _ = await service.ask(Question("Merge now?", options=("Yes", "No")))
        await answered(service, people, decision)
        await until(lambda: archived(people, decision.thread_id))
        await asyncio.to_thread(people.say, decision.thread_id, "one more thing")
        assert not archived(people, decision.thread_id)
        # Another process showed the same outcome (recovery, a second server): no request.
        async with running_service(settings) as (other, _):
            await other.record_final_shown(decision.id)
    assert not archived(people, decision.thread_id)


async def test_a_thread_with_another_open_question_stays_open_until_that_one_is_done(
    settings: Settings, people: People
) -> None:
    async with running_service(settings) as (service, _rest):
        first, _ = await service.ask(Question("Merge now?", options=("Yes", "No")))
        second, _ = await service.ask(
            Question("Tag it too?", options=("Yes", "No"), thread_id=first.thread_id)
        )
        await answered(service, people, first)
        # Shown and recorded; the second card is still open, so the thread is too.
        assert not archived(people, first.thread_id)
        await answered(service, people, second)
        await until(lambda: archived(people, first.thread_id))


async def test_a_thread_the_question_did_not_open_is_never_archived(
    settings: Settings, people: People
) -> None:
    async with running_service(settings) as (service, rest):
        # A run's thread, say: questions asked in it are answered, the run goes on.
        run_thread = await rest.create_thread(settings.channel_id, "app · fix the tests")
        decision, _ = await service.ask(
            Question("Push the fix?", options=("Yes", "No"), thread_id=run_thread["id"])
        )
        await answered(service, people, decision)
        cancelled, _ = await service.ask(
            Question("Also bump the version?", options=("Yes", "No"), thread_id=run_thread["id"])
        )
        await service.cancel(cancelled.id, "not needed")
    assert not archived(people, run_thread["id"])


async def test_a_click_that_answers_archives_the_thread_too(
    settings: Settings, people: People
) -> None:
    async with running_service(settings, live=lambda: True) as (service, rest):
        link = LiveLink(
            settings=settings,
            rest=rest,
            handler=DecisionEvents(service, rest),
            program="discord-mcp",
        )
        task = asyncio.create_task(link.run())
        try:
            await until(link.is_live)
            decision, _ = await service.ask(Question("Deploy?", options=("Deploy", "Hold")))
            card = (await asyncio.to_thread(people.messages, decision.thread_id))[0]
            custom_id = card["components"][0]["components"][0]["custom_id"]
            clicked = await asyncio.to_thread(people.click, card["id"], custom_id)
            assert clicked["response_type"] == 7
            await until(lambda: archived(people, decision.thread_id))
        finally:
            await cancel_and_wait(task, within=10)
    assert service.store.load(decision.id).final_shown


async def test_questions_keep_coming_past_the_guilds_thread_cap_once_answered(
    settings: Settings, people: People
) -> None:
    await asyncio.to_thread(people.fault, active_thread_limit=2)
    async with running_service(settings) as (service, _rest):
        for n in range(5):
            decision, _ = await service.ask(Question(f"Step {n}?", options=("Yes", "No")))
            await answered(service, people, decision)
            await until(lambda d=decision: archived(people, d.thread_id))


async def test_the_thread_cap_says_what_to_do(settings: Settings, people: People) -> None:
    await asyncio.to_thread(people.fault, active_thread_limit=1)
    async with running_service(settings) as (service, rest):
        await rest.create_thread(settings.channel_id, "someone else's thread")
        with pytest.raises(BadRequest) as refused:
            await service.ask(Question("Merge now?", options=("Yes", "No")))
    assert refused.value.code == 160006
    text = str(refused.value)
    assert "1000 active threads" in text
    assert "Close Thread" in text


async def test_in_an_announcement_channel_questions_open_announcement_threads(
    discord: RunningEmulator, tmp_path: Path, people: People
) -> None:
    news = await asyncio.to_thread(people.new_channel, 5, "news")
    settings = settings_for(discord, tmp_path / "home", DISCORD_CHANNEL_ID=news)
    async with running_service(settings) as (service, _rest):
        decision, _ = await service.ask(Question("Publish the notes?", options=("Yes", "No")))
        assert thread(people, decision.thread_id)["type"] == 10
        assert thread(people, decision.thread_id)["parent_id"] == news
        await answered(service, people, decision)
        await until(lambda: archived(people, decision.thread_id))
