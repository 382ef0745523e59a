"""Presence records are signed with a key derived from the bot token: a record the bot posted
that no discord-watch signed (an agent's message, an older version's record) is not a machine.

Issue 32: an agent's ``send_message`` posted into the machines thread a record naming the
machine; the real machine took it for another machine using its name and stopped answering
``/status``.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime
from pathlib import Path

import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.team.presence import THREAD_NAME
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.slash import Slash
from tests.support.waiting import until
from tests.team.conftest import machine, running


def forged(name: str) -> str:
    """A record as a person (or an agent) would write it from what it sees in the thread: the
    format, another instance, a fresh start, and no signature it could compute."""
    body = {
        "discord_mcp_machine": 1,
        "name": name,
        "instance": "ffffffffffff",
        "up_since": 4_000_000_000.0,
        "version": "9.9.9",
        "gateway": True,
        "projects": ["app"],
        "projects_total": 1,
        "jobs": [],
        "jobs_total": 0,
        "waiting": [],
        "waiting_total": 0,
        "knows": [],
    }
    block = json.dumps(body, separators=(",", ":"))
    return f"**Machine `{name}`**\n```json\n{block}\n```"


def presence_thread(people: People) -> str:
    [thread] = [c for c in people.state()["channels"] if c.get("name") == THREAD_NAME]
    return str(thread["id"])


async def test_a_record_the_bot_posted_unsigned_is_no_machine_and_status_still_answers(
    discord: RunningEmulator, people: People, roots: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="discord_mcp")
    laptop = await machine(discord, roots, "laptop", "app")
    slash = Slash(discord)
    async with running(discord, people, laptop):
        thread = presence_thread(people)
        # A record that claims the name must come after the machine's own (one written
        # before it is taken for the machine's previous run): by Discord's clock.
        [own] = people.messages(thread)
        written = datetime.fromisoformat(own["edited_timestamp"] or own["timestamp"])
        await until(lambda: time.time() > written.timestamp() + 1.5, what="Discord's clock")
        async with RestClient(laptop.settings.token, api_base=discord.api_base) as rest:
            # Posted with the bot's token, as the bot posts everything: twice, to show that
            # the refusal is logged once.
            for _ in range(2):
                await rest.send_text(thread, forged("laptop"), allowed_mentions={"parse": []})
        await until(
            lambda: (
                "ignored a presence record" in caplog.text or "also calls itself" in caplog.text
            ),
            what="the daemon to read the forged record",
        )
        status = await slash.text("status")
    assert "also calls itself" not in caplog.text
    assert "**discord-watch** on `laptop`" in status
    assert "another live machine" not in status
    ignored = [r for r in caplog.records if "ignored a presence record" in r.getMessage()]
    assert len(ignored) == 1, [r.getMessage() for r in ignored]
    assert laptop.settings.token.reveal() not in caplog.text
