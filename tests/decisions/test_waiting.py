"""A waiting call sleeps until its decision changes: another process's answer, written to the
decision's file, wakes it, and nothing else does (no look at the file every few milliseconds)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from discord_mcp.decisions.questions import Question
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.relay.fswatch import FileChanges
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from tests.support.settings import settings_for

ANSWER = """
import sys
from pathlib import Path
from discord_mcp.decisions.model import utc_now
from discord_mcp.decisions.store import DecisionStore
DecisionStore(Path(sys.argv[1])).finish(
    sys.argv[2], status="answered", answer="Ship", selected_option="Ship", selected_index=0,
    via="reply", answered_at=utc_now(),
)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
async def test_another_process_answer_wakes_a_waiting_call_through_the_file(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    # REST polls an hour apart, the file looked at an hour apart without notifications: only
    # the file's change notification can end this wait early.
    settings = settings_for(discord, tmp_path / "home", POLL_INTERVAL_SECONDS="3600")
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        Background() as background,
        FileChanges() as changes,
    ):
        service = DecisionService(
            settings=settings,
            rest=rest,
            store=DecisionStore(settings.home),
            background=background,
            changes=changes,
            file_poll=3600,
        )
        decision, _ = await service.ask(Question("Ship it?", options=("Ship", "Hold")))
        waiting = asyncio.create_task(service.wait(decision.id, max_wait=3600))
        # Once the call sleeps (its wake-up event exists from then on), another process answers.
        async with asyncio.timeout(30):
            while decision.id not in service._changed:
                await asyncio.sleep(0.01)
        await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", ANSWER, str(settings.home), decision.id],
            check=True,
        )
        async with asyncio.timeout(30):
            result = await waiting
    assert result.status == "answered"
    assert result.selected_option == "Ship"
    # It woke when the file changed, not 20 times a second.
    assert 1 <= service.file_looks <= 3


async def test_without_notifications_a_waiting_call_still_sees_another_process_answer(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    settings = settings_for(discord, tmp_path / "home", POLL_INTERVAL_SECONDS="3600")
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        Background() as background,
    ):
        service = DecisionService(
            settings=settings,
            rest=rest,
            store=DecisionStore(settings.home),
            background=background,
            changes=FileChanges(enabled=False),
            file_poll=0.02,
        )
        decision, _ = await service.ask(Question("Ship it?", options=("Ship", "Hold")))
        waiting = asyncio.create_task(service.wait(decision.id, max_wait=3600))
        async with asyncio.timeout(30):
            while decision.id not in service._changed:
                await asyncio.sleep(0.01)
        await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", ANSWER, str(settings.home), decision.id],
            check=True,
        )
        async with asyncio.timeout(30):
            result = await waiting
    assert result.status == "answered"
