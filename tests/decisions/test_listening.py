"""Which live events a server asks for: a question's thread from just before its card is posted
until the wait that follows ends, so the gateway holder can route to it without it ever missing
its answer (discord_mcp/relay/interest.py)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from discord_mcp.config import Settings
from discord_mcp.decisions.questions import Question
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import Exchange, RunningEmulator
from discord_mcp.relay.interest import Interests
from discord_mcp.state.leases import ProcessLease
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.waiting import until


@contextlib.asynccontextmanager
async def service_for(
    settings: Settings, interests: Interests | None, *, live: bool = True
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
            live=lambda: live,
            **({"interests": interests} if interests is not None else {}),
        )


async def test_a_questions_thread_is_asked_for_before_its_card_is_posted(
    make_emulator: Callable[..., RunningEmulator], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    lease = ProcessLease(home)
    interests = Interests(home, lease.name)
    cards: list[tuple[str, bool]] = []

    def seen(exchange: Exchange) -> None:
        # The card's POST, as Discord receives it: was the thread asked for by then?
        posted = re.fullmatch(r"/channels/(\d+)/messages", exchange.path)
        if exchange.method == "POST" and posted and "decision `" in str(exchange.request_json):
            thread_id = posted.group(1)
            entry = home / "gateway" / "interest" / thread_id / lease.name
            cards.append((thread_id, entry.exists()))

    discord = make_emulator(rate_limit_scale=0.01, exchange_hook=seen)
    people = People(discord)
    try:
        async with service_for(settings_for(discord, home), interests, live=False) as service:
            decision, _ = await service.ask(Question("Ship it?", options=("Ship", "Hold")))
            assert cards == [(decision.thread_id, True)]
            assert interests.threads() == {decision.thread_id}  # kept until its wait
            waiting = asyncio.create_task(service.wait(decision.id, max_wait=30))
            await asyncio.to_thread(people.say, decision.thread_id, "ship")
            result = await waiting
            assert result.selected_option == "Ship"
            assert interests.threads() == set()  # the wait ended: let go
    finally:
        people.close()
        interests.close()
        lease.close()


async def test_an_answer_that_comes_before_the_wait_begins_is_judged_live(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    """Between the card and the call that waits on it, the thread's events are this process's:
    an answer routed to it then is not dropped for want of a waiting call."""
    settings = settings_for(discord, tmp_path / "home")
    async with service_for(settings, None) as service:
        decision, _ = await service.ask(Question("Tag it?", options=("Tag", "Skip")))
        message = await asyncio.to_thread(people.say, decision.thread_id, "tag")
        await service.on_event("MESSAGE_CREATE", message)  # as the gateway would hand it over
        assert service.store.load(decision.id).selected_option == "Tag"
        result = await service.wait(decision.id, max_wait=30)
        assert result.selected_option == "Tag"


async def test_a_later_wait_asks_for_the_thread_again_for_as_long_as_it_waits(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    lease = ProcessLease(home)
    interests = Interests(home, lease.name)
    try:
        async with service_for(settings_for(discord, home), interests, live=False) as service:
            decision, _ = await service.ask(Question("Merge?", options=("Merge", "Wait")))
            pending = await service.wait(decision.id, max_wait=0)
            assert pending.status == "pending"
            assert interests.threads() == set()
            waiting = asyncio.create_task(service.wait(decision.id, max_wait=30))
            await until(lambda: interests.threads() == {decision.thread_id}, 30, "the ask")
            await asyncio.to_thread(people.say, decision.thread_id, "merge")
            assert (await waiting).selected_option == "Merge"
            assert interests.threads() == set()
    finally:
        interests.close()
        lease.close()


async def test_a_thread_whose_events_cannot_be_asked_for_is_polled_at_the_normal_pace(
    make_emulator: Callable[..., RunningEmulator], tmp_path: Path
) -> None:
    """With a live gateway, polling is a slow safety net only where events are routed here."""
    home = tmp_path / "home"
    polls: list[str] = []

    def seen(exchange: Exchange) -> None:
        if exchange.method == "GET" and exchange.path.endswith("/messages"):
            polls.append(exchange.path)

    discord = make_emulator(rate_limit_scale=0.01, exchange_hook=seen)
    people = People(discord)
    settings = settings_for(discord, home, POLL_INTERVAL_SECONDS="0.1")
    lease = ProcessLease(home)
    interests = Interests(home, lease.name)
    try:
        async with (
            RestClient(settings.token, api_base=settings.api_base) as rest,
            service_for(settings, interests) as service,
        ):
            thread = await rest.create_thread(settings.channel_id, "asked here")
            # Something that is not a folder where the thread's interests would go.
            (home / "gateway" / "interest" / thread["id"]).write_text(
                "in the way", encoding="utf-8"
            )
            decision, _ = await service.ask(
                Question("Deploy?", options=("Deploy", "Hold"), thread_id=thread["id"])
            )
            before = len(polls)
            waiting = asyncio.create_task(service.wait(decision.id, max_wait=20))
            await until(lambda: len(polls) > before, 30, "the wait's first look at the thread")
            await asyncio.to_thread(people.say, decision.thread_id, "deploy")
            result = await waiting  # never routed here: found by the next poll, not in 30 s
            assert result.selected_option == "Deploy"
            assert interests.threads() == set()
    finally:
        people.close()
        interests.close()
        lease.close()
