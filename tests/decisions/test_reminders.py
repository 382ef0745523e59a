"""Reminders through the emulator: one digest, quiet hours, urgent questions, DM escalation,
and a digest left behind by a sender that stopped between its steps.

The sender's wall clock is injected (a :class:`Wall` the test moves), so "16 minutes later" and
"at 23:00" need no waiting; Discord is the emulator.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Settings
from discord_mcp.config.reminders import QuietHours, parse_quiet_hours
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.questions import Question
from discord_mcp.decisions.reminder_policy import ReminderPolicy
from discord_mcp.decisions.reminders import ReminderSender, digest_marker, jump_link
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.errors import DiscordServerError
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.settings import settings_for

MINUTE = timedelta(minutes=1)
DEFAULT = ReminderPolicy(delays=(15 * 60.0, 3600.0, 4 * 3600.0))


class Wall:
    """The sender's clock: a UTC time the test sets and moves."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@dataclass
class World:
    settings: Settings
    rest: RestClient
    service: DecisionService
    store: DecisionStore
    people: People
    discord: RunningEmulator

    def sender(self, policy: ReminderPolicy, wall: Wall, language: str = "auto") -> ReminderSender:
        return ReminderSender(
            language=language,
            home=self.settings.home,
            rest=self.rest,
            store=DecisionStore(self.settings.home),
            channel_id=self.settings.channel_id,
            owner_ids=self.settings.owner_ids,
            policy=policy,
            wall=wall,
        )

    async def ask(self, question: str, *, asked: datetime | None = None, **extra: Any) -> Decision:
        decision, _ = await self.service.ask(Question(question, options=("Yes", "No"), **extra))
        if asked is not None:
            decision, _ = await self.store.aupdate(
                decision.id, lambda d: d.replace(asked_at=asked.isoformat())
            )
        return decision

    def digests(self, channel_id: str | None = None) -> list[dict[str, Any]]:
        """The reminder digests posted in the channel (or a DM channel), oldest first."""
        return [
            m
            for m in self.people.messages(channel_id or self.discord.channel_id)
            if m["author"].get("bot") and "-# reminder `" in m["content"]
        ]

    def dm_channel(self) -> str | None:
        for channel in self.people.state()["channels"]:
            if (
                channel["type"] == 1
                and channel["recipients"][0]["id"] == self.discord.owner_user_id
            ):
                return str(channel["id"])
        return None


@pytest.fixture
async def world(discord: RunningEmulator, people: People, tmp_path: Path) -> AsyncIterator[World]:
    settings = settings_for(discord, tmp_path / "home")
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        Background() as background,
    ):
        store = DecisionStore(settings.home)
        service = DecisionService(settings=settings, rest=rest, store=store, background=background)
        yield World(settings, rest, service, store, people, discord)


def asked_at(decision: Decision) -> datetime:
    return datetime.fromisoformat(decision.asked_at)


async def test_everything_due_goes_out_as_one_digest_with_a_jump_link_to_each_card(
    world: World,
) -> None:
    decisions = [await world.ask(q) for q in ("Deploy now?", "Drop the old table?", "Tag v2?")]
    wall = Wall(asked_at(decisions[-1]) + 16 * MINUTE)
    sender = world.sender(DEFAULT, wall)
    assert await sender.claim()

    reminded = await sender.send_due()

    assert sorted(reminded) == sorted(d.id for d in decisions)
    [digest] = world.digests()
    assert "3 questions are waiting" in digest["content"]
    for decision in decisions:
        assert decision.question in digest["content"]
        assert jump_link(decision) in digest["content"]
        assert f"<t:{int(asked_at(decision).timestamp())}:R>" in digest["content"]
    assert [u["id"] for u in digest["mentions"]] == [world.discord.owner_user_id]
    for decision in decisions:
        stored = world.store.load(decision.id)
        assert stored.reminders == 1
        assert stored.reminded_at == wall.now.isoformat(timespec="milliseconds")
    assert not (world.settings.home / "reminders" / "digest.json").exists()

    assert await sender.send_due() == []  # nothing is due twice
    wall.now += 59 * MINUTE
    assert await sender.send_due() == []
    wall.now += 2 * MINUTE  # an hour after the first reminder
    assert len(await sender.send_due()) == 3
    assert len(world.digests()) == 2


async def test_a_digest_is_in_the_language_most_of_its_questions_were_asked_in(
    world: World,
) -> None:
    decisions = [await world.ask(q) for q in ("배포할까요?", "Drop the old table?", "태그할까요?")]
    wall = Wall(asked_at(decisions[-1]) + 16 * MINUTE)
    sender = world.sender(DEFAULT, wall)
    assert await sender.claim()
    await sender.send_due()
    [digest] = world.digests()
    assert "⏰ **답을 기다리는 질문이 3개 있습니다**" in digest["content"]
    assert "Drop the old table?" in digest["content"]  # the agent's words, as asked
    assert "questions are waiting" not in digest["content"]
    assert f"-# {digest_marker(digest['content'].split('`')[-2])} · 각 스레드" in digest["content"]


async def test_discord_mcp_language_sets_the_digests_language(world: World) -> None:
    decision = await world.ask("배포할까요?")
    wall = Wall(asked_at(decision) + 16 * MINUTE)
    sender = world.sender(DEFAULT, wall, language="zh")
    assert await sender.claim()
    await sender.send_due()
    [digest] = world.digests()
    assert "⏰ **有 1 个问题在等你回答**" in digest["content"]


async def test_a_question_due_a_little_later_rides_along_instead_of_pinging_again(
    world: World,
) -> None:
    first = await world.ask("Deploy now?")
    second = await world.ask("Rotate the keys?", asked=asked_at(first) + 2 * MINUTE)
    later = await world.ask("Delete the bucket?", asked=asked_at(first) + 10 * MINUTE)
    sender = world.sender(DEFAULT, Wall(asked_at(first) + 15 * MINUTE))
    await sender.claim()

    reminded = await sender.send_due()

    assert sorted(reminded) == sorted([first.id, second.id])
    assert later.id not in reminded
    assert "2 questions are waiting" in world.digests()[0]["content"]


async def test_answered_and_withdrawn_questions_are_not_reminded(world: World) -> None:
    answered = await world.ask("Deploy now?")
    withdrawn = await world.ask("Tag v2?")
    waiting = await world.ask("Drop the old table?")
    world.people.say(answered.thread_id, "yes")
    assert (await world.service.poll(answered)).status == "answered"
    await world.service.cancel(withdrawn.id, "not needed")
    sender = world.sender(DEFAULT, Wall(asked_at(waiting) + 16 * MINUTE))
    await sender.claim()

    assert await sender.send_due() == [waiting.id]
    assert "1 question is waiting" in world.digests()[0]["content"]


async def test_quiet_hours_hold_reminders_until_they_end_and_an_urgent_question_ignores_them(
    world: World,
) -> None:
    evening = datetime(2026, 3, 2, 21, 30, tzinfo=UTC)
    calm = await world.ask("Refactor the parser?", asked=evening)
    urgent = await world.ask("The disk is full: delete the logs?", asked=evening, urgent=True)
    assert world.store.load(urgent.id).urgent
    quiet = parse_quiet_hours("22:00-08:00")
    assert quiet == QuietHours(quiet.start, quiet.end, "UTC")
    policy = ReminderPolicy(delays=(15 * 60.0, 3600.0), quiet=quiet)
    wall = Wall(datetime(2026, 3, 2, 23, 0, tzinfo=UTC))
    sender = world.sender(policy, wall)
    await sender.claim()

    assert await sender.send_due() == [urgent.id]
    [night] = world.digests()
    assert "1 question is waiting" in night["content"]
    assert "urgent" in night["content"]
    assert calm.question not in night["content"]

    wall.now = datetime(2026, 3, 3, 7, 59, tzinfo=UTC)
    assert await sender.send_due() == [urgent.id]  # urgent: its next reminder, an hour on
    wall.now = datetime(2026, 3, 3, 8, 0, tzinfo=UTC)
    assert await sender.send_due() == [calm.id]
    assert calm.question in world.digests()[-1]["content"]


async def test_a_channel_reminder_left_unanswered_escalates_to_a_direct_message(
    world: World,
) -> None:
    decision = await world.ask("Deploy now?")
    policy = ReminderPolicy(delays=(60.0, 60.0), escalate_dm=True)
    wall = Wall(asked_at(decision) + 61 * timedelta(seconds=1))
    sender = world.sender(policy, wall)
    await sender.claim()

    await sender.send_due()
    assert world.dm_channel() is None  # the first reminder is in the channel only

    wall.now += 61 * timedelta(seconds=1)
    await sender.send_due()
    dm = world.dm_channel()
    assert dm is not None
    [direct] = world.digests(dm)
    [_, second] = world.digests()
    marker = second["content"].splitlines()[-1]
    assert marker in direct["content"]
    assert jump_link(decision) in direct["content"]
    assert world.store.load(decision.id).reminders == 2


async def test_an_owner_who_refuses_dms_still_gets_the_channel_digest_and_no_retries(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    decision = await world.ask("Deploy now?")
    await world.store.aupdate(
        decision.id,
        lambda d: d.replace(reminders=1, reminded_at=(asked_at(d) + MINUTE).isoformat()),
    )
    world.people._http.post(
        f"/users/{world.discord.owner_user_id}", json={"accepts_dms": False}
    ).raise_for_status()
    policy = ReminderPolicy(delays=(60.0, 60.0), escalate_dm=True)
    wall = Wall(asked_at(decision) + 3 * MINUTE)
    sender = world.sender(policy, wall)
    await sender.claim()

    assert await sender.send_due() == [decision.id]
    assert len(world.digests()) == 1
    assert "could not send the reminder" in caplog.text
    assert "50007" in caplog.text
    assert world.store.load(decision.id).reminders == 2
    assert not (world.settings.home / "reminders" / "digest.json").exists()


async def test_one_sender_per_state_directory_and_another_takes_over_when_it_stops(
    world: World,
) -> None:
    wall = Wall(datetime.now(UTC))
    first, second = world.sender(DEFAULT, wall), world.sender(DEFAULT, wall)
    assert await first.claim()
    assert not await second.claim()
    assert first.is_sender
    assert not second.is_sender
    first.release()
    assert await second.claim()


async def test_a_digest_recorded_but_never_posted_is_posted_once_by_the_next_sender(
    world: World,
) -> None:
    decision = await world.ask("Deploy now?")
    wall = Wall(asked_at(decision) + 16 * MINUTE)
    crashing = world.sender(DEFAULT, wall)
    await crashing.claim()
    # Discord fails every attempt at posting (the first try and the client's three retries).
    world.people.fault(route="POST /channels/{channel_id}/messages", status=500, count=4)
    with pytest.raises(DiscordServerError):
        await crashing.send_due()
    record = json.loads((world.settings.home / "reminders" / "digest.json").read_text("utf-8"))
    assert record["posted"] is None
    assert world.digests() == []
    crashing.release()

    successor = world.sender(DEFAULT, wall)
    await successor.claim()
    assert await successor.send_due() == [decision.id]
    [digest] = world.digests()
    assert digest_marker(record["id"]) in digest["content"]
    assert await successor.send_due() == []
    assert len(world.digests()) == 1
    assert world.store.load(decision.id).reminders == 1


async def test_a_digest_posted_but_not_recorded_as_posted_is_found_not_sent_again(
    world: World,
) -> None:
    decision = await world.ask("Deploy now?")
    wall = Wall(asked_at(decision) + 16 * MINUTE)
    first = world.sender(DEFAULT, wall)
    await first.claim()
    await first.send_due()
    [digest] = world.digests()
    # As if the sender had died right after Discord took the message: the record still says
    # "not posted", and the decision has no reminder yet.
    record_id = digest["content"].split("reminder `")[1].split("`")[0]
    channel_before = world.people.messages(world.discord.channel_id)[-2]["id"]
    (world.settings.home / "reminders").mkdir(exist_ok=True)
    (world.settings.home / "reminders" / "digest.json").write_text(
        json.dumps(
            {
                "version": 1,
                "id": record_id,
                "at": wall.now.isoformat(timespec="milliseconds"),
                "channel_id": world.discord.channel_id,
                "after": channel_before,
                "decisions": [decision.id],
                "owners": [world.discord.owner_user_id],
                "escalate": False,
                "posted": None,
                "dms": {},
            }
        ),
        encoding="utf-8",
    )
    await world.store.aupdate(decision.id, lambda d: d.replace(reminders=0, reminded_at=None))
    first.release()

    successor = world.sender(DEFAULT, wall)
    await successor.claim()
    assert await successor.send_due() == [decision.id]
    assert len(world.digests()) == 1
    assert world.store.load(decision.id).reminders == 1


async def test_a_malformed_record_is_set_aside_and_the_reminder_still_goes_out(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    decision = await world.ask("Deploy now?")
    record = world.settings.home / "reminders" / "digest.json"
    record.parent.mkdir(exist_ok=True)
    record.write_text(json.dumps({"version": 1, "id": 7}), encoding="utf-8")
    sender = world.sender(DEFAULT, Wall(asked_at(decision) + 16 * MINUTE))
    await sender.claim()

    assert await sender.send_due() == [decision.id]
    assert len(world.digests()) == 1
    assert "is not a reminder record" in caplog.text
    assert not record.exists()
