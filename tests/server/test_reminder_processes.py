"""Reminders sent by real server processes: one sender per state directory, and never a
duplicate when the sending process is killed between its steps.

The servers run with ``DISCORD_MCP_REMINDERS=1s,1h`` (a first reminder one second after the
question, the next an hour later), so a second digest for the same question within a test is
always a duplicate. Their project is another one than the questions', so their start-up
recovery leaves the questions alone; reminders cover every project of the state directory.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.questions import Question
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.emulator import RunningEmulator
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from tests.support.people import People
from tests.support.settings import env_for, settings_for
from tests.support.stdio_peer import StdioPeer
from tests.support.waiting import until_sync as until

SENDS = "this process sends the reminders"


def ask(discord: RunningEmulator, home: Path, question: str) -> Decision:
    """A pending question of project ``proj``, its card posted (as another agent's server would)."""

    async def asking() -> Decision:
        settings = settings_for(discord, home)
        async with (
            RestClient(settings.token, api_base=settings.api_base) as rest,
            Background() as background,
        ):
            service = DecisionService(
                settings=settings, rest=rest, store=DecisionStore(home), background=background
            )
            decision, _ = await service.ask(Question(question, options=("Yes", "No")))
            return decision

    return asyncio.run(asking())


def digests(people: People, discord: RunningEmulator) -> list[str]:
    return [
        m["content"]
        for m in people.messages(discord.channel_id)
        if m["author"].get("bot") and "-# reminder `" in m["content"]
    ]


class Servers:
    """Real ``discord-mcp`` server processes on one state directory."""

    def __init__(self, discord: RunningEmulator, home: Path, cwd: Path) -> None:
        self.discord = discord
        self.home = home
        self.cwd = cwd
        self.peers: list[StdioPeer] = []

    def start(self) -> StdioPeer:
        env = env_for(
            self.discord,
            self.home,
            PROJECT_NAME="elsewhere",
            DISCORD_MCP_GATEWAY="off",
            DISCORD_MCP_REMINDERS="1s,1h",
        )
        peer = StdioPeer(env, self.cwd)
        peer.handshake()  # background work (recovery, reminders) starts after the first request
        self.peers.append(peer)
        return peer

    def close(self) -> None:
        for peer in self.peers:
            peer.close()


@pytest.fixture
def servers(discord: RunningEmulator, tmp_path: Path) -> Iterator[Servers]:
    running = Servers(discord, tmp_path / "home", tmp_path)
    yield running
    running.close()


def reminders_of(home: Path, decision: Decision) -> int:
    return DecisionStore(home).load(decision.id).reminders


def test_two_servers_on_one_state_directory_send_one_digest_and_one_takes_over(
    servers: Servers, discord: RunningEmulator, people: People
) -> None:
    first = ask(discord, servers.home, "Deploy to production now?")
    peers = [servers.start(), servers.start()]
    until(lambda: reminders_of(servers.home, first) == 1, what="the first reminder")
    # A barrier: the next question's digest comes a second later, while the other server looked
    # for due reminders several times.
    second = ask(discord, servers.home, "Rotate the API keys?")
    until(lambda: reminders_of(servers.home, second) == 1, what="the second reminder")
    sent = digests(people, discord)
    assert len(sent) == 2
    assert first.question in sent[0]
    assert second.question not in sent[0]
    assert second.question in sent[1]
    assert reminders_of(servers.home, first) == 1

    senders = [p for p in peers if SENDS in p.stderr.decode("utf-8", "replace")]
    assert len(senders) == 1
    senders[0].process.kill()
    senders[0].process.wait(timeout=10)
    third = ask(discord, servers.home, "Drop the old table?")
    until(lambda: reminders_of(servers.home, third) == 1, what="the survivor's reminder")
    [survivor] = [p for p in peers if p is not senders[0]]
    assert SENDS in survivor.stderr.decode("utf-8", "replace")
    assert len(digests(people, discord)) == 3


def test_a_sender_killed_between_recording_and_posting_leaves_one_digest(
    servers: Servers, discord: RunningEmulator, people: People
) -> None:
    record = servers.home / "reminders" / "digest.json"
    decision = ask(discord, servers.home, "Deploy to production now?")
    people.fault(route="POST /channels/{channel_id}/messages", status=500, count=1000)
    crashing = servers.start()
    until(record.exists, what="the digest to be recorded")
    until(
        lambda: people.state()["faults"]["route_faults"][0]["count"] < 1000,
        what="a failed attempt at posting",
    )
    crashing.process.kill()
    crashing.process.wait(timeout=10)
    people.fault(clear=True)
    assert digests(people, discord) == []
    recorded = json.loads(record.read_text("utf-8"))

    servers.start()
    until(lambda: reminders_of(servers.home, decision) == 1, what="the reminder")
    until(lambda: not record.exists(), what="the record to be finished")
    sent = digests(people, discord)
    assert len(sent) == 1
    assert f"reminder `{recorded['id']}`" in sent[0]


def test_a_sender_killed_between_posting_and_marking_leaves_one_digest(
    servers: Servers, discord: RunningEmulator, people: People
) -> None:
    record = servers.home / "reminders" / "digest.json"
    decision = ask(discord, servers.home, "Deploy to production now?")
    lock_path = servers.home / "decisions" / f"{decision.id}.json.lock"
    # Holding the decision's lock keeps the sender from recording the reminder on it.
    held = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        crashing = servers.start()
        until(lambda: digests(people, discord), what="the digest to be posted")
        crashing.process.kill()
        crashing.process.wait(timeout=10)
    finally:
        os.close(held)
    assert reminders_of(servers.home, decision) == 0
    assert record.exists()

    servers.start()
    until(lambda: reminders_of(servers.home, decision) == 1, what="the reminder to be recorded")
    until(lambda: not record.exists(), what="the record to be finished")
    assert len(digests(people, discord)) == 1
