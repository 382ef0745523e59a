"""The decision lifecycle against the emulator: ask, answer, wait, expire, cancel, recover."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from discord_mcp.config import Settings
from discord_mcp.decisions.cards import KEYCAPS, NO, YES
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
from tests.support.waiting import until as eventually


@pytest.fixture
def settings(discord: RunningEmulator, tmp_path: Path) -> Settings:
    return settings_for(discord, tmp_path / "home")


@contextlib.asynccontextmanager
async def running_service(settings: Settings) -> AsyncIterator[DecisionService]:
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        Background() as background,
    ):
        yield DecisionService(
            settings=settings, rest=rest, store=DecisionStore(settings.home), background=background
        )


@pytest.fixture
async def service(settings: Settings) -> AsyncIterator[DecisionService]:
    async with running_service(settings) as svc:
        yield svc


def thread_texts(people: People, thread_id: str) -> list[str]:
    return [m["content"] for m in people.messages(thread_id)]


async def start_waiting(
    service: DecisionService, people: People, decision: Decision
) -> asyncio.Task[Decision]:
    """Start ``service.wait`` and return once it is waiting: it has looked at Discord once.

    The card's reactions (added in the background after asking) go first, so the next request
    the emulator counts is the wait's own look at the thread.
    """
    wanted = len(decision.reaction_emojis)
    await eventually(
        lambda: len(people.messages(decision.thread_id)[0].get("reactions", [])) == wanted
    )
    before = people.state()["stats"]["rest_requests"]
    waiting = asyncio.create_task(service.wait(decision.id, max_wait=30))
    await eventually(lambda: people.state()["stats"]["rest_requests"] > before)
    assert not waiting.done()
    return waiting


async def test_asking_opens_a_thread_with_a_card_and_answer_reactions(
    service: DecisionService, people: People, discord: RunningEmulator
) -> None:
    decision, created = await service.ask(
        Question("Deploy to production now?", context="All tests pass.", options=("Yes", "No"))
    )
    assert created
    thread = next(t for t in people.threads() if t["id"] == decision.thread_id)
    assert thread["parent_id"] == discord.channel_id
    assert "Deploy to production" in thread["name"]
    assert "proj" in thread["name"]
    card = people.messages(decision.thread_id)[0]
    assert card["id"] == decision.card_message_id
    for expected in ("Deploy to production now?", "All tests pass.", "Yes", "No", decision.id):
        assert expected in card["content"]
    assert f"<@{discord.owner_user_id}>" in card["content"]
    await eventually(
        lambda: (
            {
                r["emoji"]["name"]
                for r in people.messages(decision.thread_id)[0].get("reactions", [])
            }
            == {YES, NO}
        )
    )
    assert service.store.load(decision.id).status == "pending"


async def test_the_owners_reply_answers_and_the_card_shows_it(
    service: DecisionService, people: People
) -> None:
    decision, _ = await service.ask(Question("Which DB?", options=("Postgres", "SQLite", "Both")))
    people.say(decision.thread_id, "B로 해줘")
    result = await service.wait(decision.id, max_wait=10)
    assert result.status == "answered"
    assert result.selected_index == 1
    assert result.selected_option == "SQLite"
    assert result.via == "text"
    assert result.answered_by is not None
    await eventually(lambda: "Answered" in people.messages(decision.thread_id)[0]["content"])


async def test_a_free_text_question_takes_the_reply_as_the_answer(
    service: DecisionService, people: People
) -> None:
    decision, _ = await service.ask(Question("What should the release be called?"))
    people.say(decision.thread_id, "Call it Aurora")
    result = await service.wait(decision.id, max_wait=10)
    assert result.status == "answered"
    assert result.answer == "Call it Aurora"
    assert result.selected_option is None


async def test_someone_else_cannot_answer_and_is_told_once(
    service: DecisionService, people: People
) -> None:
    stranger = people.new_user("mallory")
    decision, _ = await service.ask(Question("Delete the old branch?", options=("Yes", "No")))
    people.say(decision.thread_id, "yes", author=stranger)
    people.say(decision.thread_id, "1", author=stranger)
    result = await service.wait(decision.id, max_wait=0.5)
    assert result.status == "pending"
    assert [a.user_id for a in result.refused] == [stranger, stranger]
    refusals = [t for t in thread_texts(people, decision.thread_id) if "only" in t]
    assert len(refusals) == 1
    people.say(decision.thread_id, "no")
    result = await service.wait(decision.id, max_wait=10)
    assert result.status == "answered"
    assert result.selected_option == "No"


async def test_short_unclear_replies_get_two_clarifications_then_count_as_free_text(
    service: DecisionService, people: People
) -> None:
    decision, _ = await service.ask(Question("Pick a colour", options=("Red", "Green", "Blue")))
    people.say(decision.thread_id, "hmm?")
    await service.wait(decision.id, max_wait=0.5)
    people.say(decision.thread_id, "warm one")
    await service.wait(decision.id, max_wait=0.5)
    assert service.store.load(decision.id).clarifications == 2
    assert sum("attempt" in t.lower() for t in thread_texts(people, decision.thread_id)) == 2
    people.say(decision.thread_id, "designer's")
    result = await service.wait(decision.id, max_wait=10)
    assert result.status == "answered"
    assert result.answer == "designer's"
    assert result.selected_option is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("hmm, not sure, what do you think?", "whatever the designer prefers"),
        ("잘 모르겠어요", "디자이너가 정해"),  # 3+ Hangul syllables, under 15 characters
    ],
)
async def test_a_long_reply_that_picks_no_option_is_free_text_after_one_clarification(
    service: DecisionService, people: People, first: str, second: str
) -> None:
    """As the Decision MCP seed reads natural language: 15+ characters, or 3+ Hangul syllables,
    picking no option (issue 34)."""
    decision, _ = await service.ask(Question("Pick a colour", options=("Red", "Green", "Blue")))
    people.say(decision.thread_id, first)
    await service.wait(decision.id, max_wait=0.5)
    assert service.store.load(decision.id).clarifications == 1
    asked = [t for t in thread_texts(people, decision.thread_id) if "(attempt 1 of 1)" in t]
    assert len(asked) == 1
    people.say(decision.thread_id, second)
    result = await service.wait(decision.id, max_wait=10)
    assert result.status == "answered"
    assert result.answer == second
    assert result.selected_option is None
    assert service.store.load(decision.id).clarifications == 1


async def test_a_reaction_by_the_owner_answers(service: DecisionService, people: People) -> None:
    decision, _ = await service.ask(Question("Which plan?", options=("A plan", "B plan", "C plan")))
    people.react(decision.thread_id, decision.card_message_id, KEYCAPS[2])
    result = await service.wait(decision.id, max_wait=10)
    assert result.status == "answered"
    assert result.via == "reaction"
    assert result.selected_index == 2


async def test_a_reaction_by_someone_else_is_refused(
    service: DecisionService, people: People
) -> None:
    stranger = people.new_user("eve")
    decision, _ = await service.ask(Question("Ship it?", options=("Ship", "Hold")))
    first = decision.reaction_emojis[0]
    people.react(decision.thread_id, decision.card_message_id, first, user=stranger)
    result = await service.wait(decision.id, max_wait=0.5)
    assert result.status == "pending"
    assert [(a.user_id, a.via) for a in result.refused] == [(stranger, "reaction")]


async def test_waiting_returns_pending_at_its_bound_and_the_answer_is_not_lost(
    service: DecisionService, people: People
) -> None:
    decision, _ = await service.ask(Question("Merge?", options=("Merge", "Wait")))
    first = await service.wait(decision.id, max_wait=0.3)
    assert first.status == "pending"
    people.say(decision.thread_id, "1")
    second = await service.wait(decision.id, max_wait=10)
    assert second.status == "answered"
    assert second.selected_option == "Merge"


async def test_a_cancelled_wait_leaves_the_decision_pending(
    service: DecisionService, people: People
) -> None:
    decision, _ = await service.ask(Question("Rotate keys?", options=("Now", "Tomorrow")))
    waiting = await start_waiting(service, people, decision)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert service.store.load(decision.id).status == "pending"
    people.say(decision.thread_id, "tomorrow")
    assert (await service.wait(decision.id, max_wait=10)).selected_option == "Tomorrow"


async def test_the_agents_own_timeout_expires_the_decision_and_says_so(
    service: DecisionService, people: People
) -> None:
    decision, _ = await service.ask(
        Question("Upgrade now?", options=("Yes", "No"), timeout_seconds=0.3, on_timeout="skip it")
    )
    result = await service.wait(decision.id, max_wait=10)
    assert result.status == "expired"
    await eventually(lambda: "Expired" in people.messages(decision.thread_id)[0]["content"])
    assert "skip it" in people.messages(decision.thread_id)[0]["content"]


async def test_cancelling_ends_a_waiting_call_and_edits_the_card(
    service: DecisionService, people: People
) -> None:
    decision, _ = await service.ask(Question("Refactor the parser?", options=("Yes", "No")))
    waiting = await start_waiting(service, people, decision)
    cancelled = await service.cancel(decision.id, "found a better way")
    assert cancelled.status == "cancelled"
    async with asyncio.timeout(5):
        assert (await waiting).status == "cancelled"
    assert "Withdrawn" in people.messages(decision.thread_id)[0]["content"]
    assert "found a better way" in people.messages(decision.thread_id)[0]["content"]


async def test_an_answered_decision_cannot_be_cancelled(
    service: DecisionService, people: People
) -> None:
    decision, _ = await service.ask(Question("Tag v2?", options=("Tag", "Skip")))
    people.say(decision.thread_id, "A")
    await service.wait(decision.id, max_wait=10)
    assert (await service.cancel(decision.id, "never mind")).status == "answered"


async def test_asking_the_same_pending_question_returns_the_existing_decision(
    service: DecisionService, people: People
) -> None:
    first, created = await service.ask(Question("Use tabs?", options=("Tabs", "Spaces")))
    again, created_again = await service.ask(Question("  use TABS? ", options=("tabs", "spaces")))
    assert created
    assert not created_again
    assert again.id == first.id
    assert len(people.threads()) == 1


async def test_asking_in_a_given_thread_posts_the_card_there(
    service: DecisionService, people: People, discord: RunningEmulator
) -> None:
    thread_id = people.threads()[0]["id"] if people.threads() else None
    assert thread_id is None
    first, _ = await service.ask(Question("First question?"))
    second, _ = await service.ask(Question("Second question?", thread_id=first.thread_id))
    assert second.thread_id == first.thread_id
    assert second.channel_id == discord.channel_id
    assert len(people.threads()) == 1


@pytest.mark.parametrize(
    ("question", "says"),
    [
        (Question("  "), "empty"),
        (Question("Q?", options=tuple(f"o{i}" for i in range(26))), "at most 25"),
        (Question("Q?", options=("same", "Same")), "distinct"),
        (Question("Q?", options=("x" * 101,)), "longer than 100"),
        (Question("Q?", timeout_seconds=-1), "positive"),
    ],
)
async def test_bad_questions_are_refused_with_a_reason(
    service: DecisionService, question: Question, says: str
) -> None:
    with pytest.raises(DecisionError, match=says):
        await service.ask(question)


async def test_an_answer_given_while_no_service_ran_is_found_on_recovery(
    settings: Settings, people: People
) -> None:
    async with running_service(settings) as first:
        decision, _ = await first.ask(Question("Run the migration?", options=("Run", "Skip")))
    people.say(decision.thread_id, "skip")
    async with running_service(settings) as second:
        recovered = await second.recover()
    assert [(d.id, d.status, d.selected_option) for d in recovered] == [
        (decision.id, "answered", "Skip")
    ]


async def test_recovery_only_looks_at_this_projects_decisions(
    discord: RunningEmulator, tmp_path: Path, people: People
) -> None:
    home = tmp_path / "shared"
    mine = settings_for(discord, home, PROJECT_NAME="mine")
    theirs = settings_for(discord, home, PROJECT_NAME="theirs")
    async with running_service(theirs) as other:
        decision, _ = await other.ask(Question("Theirs?", options=("Yes", "No")))
    people.say(decision.thread_id, "yes")
    async with running_service(mine) as service:
        assert await service.recover() == []
    assert DecisionStore(home).load(decision.id).status == "pending"


async def test_an_answer_behind_more_than_a_page_of_chatter_is_still_found(
    service: DecisionService, people: People
) -> None:
    chatty = people.new_user("chatty")
    decision, _ = await service.ask(Question("Proceed?", options=("Go", "Stop")))
    for i in range(105):
        people.say(decision.thread_id, f"chatter {i}", author=chatty)
    people.say(decision.thread_id, "stop")
    result = await service.wait(decision.id, max_wait=20)
    assert result.status == "answered"
    assert result.selected_option == "Stop"
    assert len(result.refused) == 105


async def test_a_card_whose_id_was_never_recorded_is_found_by_its_decision_id(
    service: DecisionService, people: People
) -> None:
    """The asking process died between posting the card and recording it: recovery adopts it."""
    decision, _ = await service.ask(Question("Crash-safe?", options=("Yes", "No")))
    await service.store.aupdate(
        decision.id, lambda d: d.replace(card_message_id="", seen_message_id=None)
    )
    people.say(decision.thread_id, "no")
    [recovered] = await service.recover()
    assert recovered.card_message_id == decision.card_message_id
    assert (recovered.status, recovered.selected_option) == ("answered", "No")


async def test_a_question_whose_card_never_reached_discord_gets_it_on_recovery(
    service: DecisionService, settings: Settings, people: People
) -> None:
    """The asking process died after writing the decision, before its card was posted: the
    next look at it posts the card (never "withdrawn", never an answer), and it can be answered."""
    decision, _ = await service.ask(Question("Lost?", options=("Keep", "Drop")))
    async with RestClient(settings.token, api_base=settings.api_base) as rest:
        await rest.delete_message(decision.thread_id, decision.card_message_id)  # never arrived
    long_ago = "2026-01-01T00:00:00.000+00:00"
    await service.store.aupdate(
        decision.id,
        lambda d: d.replace(card_message_id="", seen_message_id=None, asked_at=long_ago),
    )
    [recovered] = await service.recover()
    assert recovered.status == "pending"
    assert recovered.card_message_id not in ("", decision.card_message_id)
    [card] = [
        m for m in people.messages(decision.thread_id) if m["id"] == recovered.card_message_id
    ]
    assert f"decision `{decision.id}`" in card["content"]
    people.say(decision.thread_id, "drop")
    result = await service.wait(decision.id, max_wait=10)
    assert (result.status, result.selected_option) == ("answered", "Drop")


SEED_YES = ("yes", "y", "네", "예", "맞아", "확인", "ok", "ㅇㅇ")
SEED_NO = ("no", "n", "아니", "아니요", "취소", "보류")


@pytest.mark.parametrize(
    "options", [("A) 진행", "B) 취소"), ("1. Yes", "2. No"), ("A) Proceed", "B) Cancel")]
)
async def test_a_plain_yes_or_no_picks_an_option_written_with_its_own_label(
    service: DecisionService, people: People, options: tuple[str, str]
) -> None:
    """The Decision MCP seed writes its options with their labels ("A) 진행" / "B) 취소"): the
    label hides nothing of the option's meaning, so its parser's cases pick as they did there."""
    for reply, picked in [*((r, 0) for r in SEED_YES), *((r, 1) for r in SEED_NO)]:
        decision, _ = await service.ask(Question(f"Go ahead? ({reply})", options=options))
        people.say(decision.thread_id, reply)
        result = await service.wait(decision.id, max_wait=10)
        assert (result.status, result.selected_index, reply) == ("answered", picked, reply)
