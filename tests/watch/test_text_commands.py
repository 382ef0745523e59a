"""The ``!`` text commands: the fallback without slash commands, the same handlers behind them.

With the gateway off, the daemon reads the channel by REST polling (no interactions at all),
and every command still works by typing it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.engine.schedules import ScheduleStore
from tests.support.fake_agents import FakeSpawner
from tests.support.people import People
from tests.support.waiting import until
from tests.watch.conftest import watch_settings
from tests.watch.test_daemon import daemon, started, texts


@pytest.fixture
def polling_settings(discord: RunningEmulator, watch_env: Path) -> Settings:
    return watch_settings(discord, watch_env, DISCORD_MCP_GATEWAY="off")


async def reply_to(people: People, channel_id: str, text: str) -> str:
    """Type ``text`` as the owner; the bot's reply to it."""
    message = people.say(channel_id, text)

    def answer() -> str | None:
        for m in people.messages(channel_id):
            if (m.get("message_reference") or {}).get("message_id") == message["id"]:
                return str(m["content"])
        return None

    return str(await until(answer))


async def test_every_new_command_works_by_typing_it_without_a_gateway(
    polling_settings: Settings,
    fake_spawner: FakeSpawner,
    people: People,
    discord: RunningEmulator,
) -> None:
    settings, spawner = polling_settings, fake_spawner
    channel = discord.channel_id
    async with daemon(settings, spawner):
        await started(people)
        thread_id = people.say(channel, "!start app say hello")["id"]
        await until(lambda: any("Reply in this thread" in t for t in texts(people, thread_id)))
        replies = {
            "projects": await reply_to(people, channel, "!project list"),
            "project": await reply_to(people, channel, "!project status app"),
            "sessions": await reply_to(people, channel, "!session list"),
            "model": await reply_to(people, thread_id, "!model sonnet"),
            "cancel": await reply_to(people, thread_id, "!cancel"),
            "logs": await reply_to(people, thread_id, "!logs"),
            "usage": await reply_to(people, channel, "!usage app today"),
            "period": await reply_to(people, channel, "!usage app fortnight"),
            "pending": await reply_to(people, channel, "!pending"),
            "schedule": await reply_to(people, thread_id, "!schedule add every 2h check the CI"),
            "help": await reply_to(people, channel, "!help"),
            "unknown": await reply_to(people, channel, "!frobnicate"),
            "usage error": await reply_to(people, thread_id, "!tool"),
            "rename": await reply_to(people, thread_id, "!session rename release checks"),
        }
    assert "**app**" in replies["projects"]
    assert "session_total: 1" in replies["project"]
    assert f"<#{thread_id}>" in replies["sessions"]
    assert replies["model"] == "From the next job on, this thread asks for model `sonnet`."
    assert replies["cancel"] == "No job is waiting here."
    assert replies["logs"].startswith("**Log of `job_")
    assert "total: 1 jobs" in replies["usage"]
    assert replies["period"].startswith("**E_INVALID_PERIOD**")
    assert replies["pending"] == "Nothing is waiting for you."
    assert replies["schedule"].startswith(f"Scheduled `sch_1` (every 2h) in <#{thread_id}>")
    assert "`!schedule remove sch_1`" in replies["schedule"]
    assert "`!start <project> [prompt] [tool] [model] [worktree]`" in replies["help"]
    assert replies["unknown"].startswith("**E_UNKNOWN_COMMAND**")
    assert replies["usage error"] == (
        "**E_BAD_ARGUMENTS**: tool missing; usage: `!tool <tool> [session]`"
    )
    assert replies["rename"] == f"Renamed <#{thread_id}> to **release checks**."
    [schedule] = ScheduleStore(settings.home).list()
    assert (schedule.thread_id, schedule.prompt) == (thread_id, "check the CI")
