"""discord-watch sends the reminders of its state directory (every project's questions)."""

from __future__ import annotations

import dataclasses

from discord_mcp.config import Settings
from discord_mcp.decisions.questions import Question
from discord_mcp.decisions.reminder_policy import ReminderPolicy
from discord_mcp.emulator import RunningEmulator
from tests.decisions.test_service import running_service
from tests.support.fake_agents import FakeSpawner
from tests.support.people import People
from tests.support.waiting import until
from tests.watch.test_daemon import daemon, started


async def test_the_daemon_reminds_the_owner_of_an_unanswered_question(
    settings: Settings, spawner: FakeSpawner, people: People, discord: RunningEmulator
) -> None:
    async with running_service(settings) as service:
        decision, _ = await service.ask(Question("Merge now?", options=("Yes", "No")))
    reminding = dataclasses.replace(settings, reminders=ReminderPolicy(delays=(1.0, 3600.0)))
    async with daemon(reminding, spawner):
        await started(people)
        await until(lambda: service.store.load(decision.id).reminders == 1)
    assert (settings.home / "reminders" / "sender.lock").exists()
    [digest] = [
        m["content"] for m in people.messages(discord.channel_id) if "-# reminder `" in m["content"]
    ]
    assert "Merge now?" in digest
