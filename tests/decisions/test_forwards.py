"""A forwarded message in a question's thread is read from its snapshot: the words it forwards
answer like a reply, instead of being taken for text Discord withheld."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from discord_mcp.config import Settings
from discord_mcp.decisions.answers import content_hint
from discord_mcp.decisions.questions import Question
from discord_mcp.emulator import RunningEmulator
from tests.decisions.test_service import running_service
from tests.support.people import People
from tests.support.settings import settings_for


@pytest.fixture
def settings(discord: RunningEmulator, tmp_path: Path) -> Settings:
    return settings_for(discord, tmp_path / "home")


async def test_a_forwarded_answer_is_read_from_its_snapshot(
    settings: Settings, people: People, discord: RunningEmulator
) -> None:
    colleague = people.new_user("colleague")
    async with running_service(settings) as service:
        decision, _ = await service.ask(Question("Ship on Friday?", options=("Ship", "Wait")))
        said = await asyncio.to_thread(
            people.say, discord.channel_id, "wait, the tests are red", author=colleague
        )
        await asyncio.to_thread(people.forward, decision.thread_id, said["id"])
        answered = await service.wait(decision.id, max_wait=10)
    assert answered.status == "answered"
    assert answered.selected_option == "Wait"
    assert answered.answered_by == discord.owner_user_id
    notices = [m["content"] for m in people.messages(decision.thread_id)]
    assert content_hint(decision.language) not in notices


async def test_a_forward_whose_text_is_withheld_gets_the_intent_hint(
    settings: Settings, people: People, discord: RunningEmulator
) -> None:
    async with running_service(settings) as service:
        decision, _ = await service.ask(Question("Ship on Friday?", options=("Ship", "Wait")))
        said = await asyncio.to_thread(people.say, discord.channel_id, "wait")
        await asyncio.to_thread(people.fault, message_content_intent_enabled=False)
        await asyncio.to_thread(people.forward, decision.thread_id, said["id"])
        await service.poll(decision)
    assert service.store.load(decision.id).status == "pending"
    assert content_hint(decision.language) in [
        m["content"] for m in people.messages(decision.thread_id)
    ]
