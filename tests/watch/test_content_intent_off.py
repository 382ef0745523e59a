"""Without the portal's Message Content toggle the daemon still holds the gateway (issue 33):
it logs in without the privileged intent, answers slash commands, and says which toggle would
let it read the text of replies (its log, ``discord-watch status``)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.relay.holder import read_status
from discord_mcp.watch.display import render_status
from tests.support.fake_agents import FakeSpawner
from tests.support.people import People
from tests.support.slash import Slash
from tests.support.waiting import until
from tests.watch.conftest import live_daemon, watch_settings

TOGGLE = "Bot > Privileged Gateway Intents > Message Content Intent"


async def test_slash_commands_are_answered_and_the_toggle_is_named_when_the_intent_is_off(
    discord: RunningEmulator,
    watch_env: Path,
    fake_spawner: FakeSpawner,
    slash: Slash,
    people: People,
    caplog: pytest.LogCaptureFixture,
) -> None:
    people.fault(message_content_intent_enabled=False)
    settings = await asyncio.to_thread(watch_settings, discord, watch_env)
    with caplog.at_level(logging.ERROR):
        async with live_daemon(settings, fake_spawner, discord):
            answer = await slash.text("status")
            status = await until(
                lambda: read_status(settings.home / "gateway" / "status.json"),
                what="the holder's status",
            )
            shown = await asyncio.to_thread(render_status, settings.home)
    assert answer  # answered within Discord's 3 s, through the gateway
    assert people.state()["stats"]["interactions_failed"] == 0
    assert status.message_content is False
    assert TOGGLE in shown
    assert any(TOGGLE in r.getMessage() for r in caplog.records)
