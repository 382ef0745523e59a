"""Several machines on one bot, simulated: a discord-watch per machine, each with its own state
directory and DISCORD_MCP_MACHINE, against one emulator and one token."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from discord_mcp.config import Secret, Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.team.presence import THREAD_NAME
from discord_mcp.team.probe import PROBE_WAIT_S
from discord_mcp.team.records import MachineRecord, parse
from discord_mcp.team.routing import LAST_SLOT, SLOT_S
from discord_mcp.team.signing import RecordKey
from discord_mcp.watch.app import run_daemon
from tests.support.fake_agents import FakeSpawner
from tests.support.people import People
from tests.support.settings import settings_for
from tests.support.slash import Slash
from tests.support.waiting import until


@dataclass
class Machine:
    name: str
    settings: Settings
    spawner: FakeSpawner
    task: asyncio.Task[None] | None = None
    projects: tuple[str, ...] = field(default_factory=tuple)

    @property
    def home(self) -> Path:
        return self.settings.home


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Projects live under tmp_path; messages in a run thread are jobs at once."""
    monkeypatch.setenv("DISCORD_WATCH_ROOTS", str(tmp_path))
    monkeypatch.setenv("DISCORD_WATCH_DEBOUNCE_SECONDS", "0")
    return tmp_path


async def machine(
    discord: RunningEmulator, root: Path, name: str, *projects: str, **env: str
) -> Machine:
    """A machine's settings (its own state directory) and projects (none started)."""
    return await asyncio.to_thread(_machine, discord, root, name, *projects, **env)


def _machine(
    discord: RunningEmulator, root: Path, name: str, *projects: str, **env: str
) -> Machine:
    settings = settings_for(discord, root / name / "home", DISCORD_MCP_MACHINE=name, **env)
    registry = ProjectRegistry(settings.home, allowed_roots=[root])
    for project in projects:
        folder = root / name / project
        folder.mkdir(parents=True, exist_ok=True)
        registry.add(project, folder, ["claude", "codex", "gemini"], "claude")
    return Machine(name, settings, FakeSpawner(root / name / "fake"), projects=projects)


def presence_records(people: People) -> dict[str, MachineRecord]:
    """Every machine's (signed) record in the presence thread(s), by name."""
    key = RecordKey(Secret(people.emulator.token))
    found: dict[str, MachineRecord] = {}
    for channel in people.state()["channels"]:
        if channel.get("name") != THREAD_NAME:
            continue
        for message in people.messages(str(channel["id"])):
            record = parse(message, key=key)
            if record is not None:
                found[record.name] = record
    return found


def connected(people: People) -> int:
    return sum(1 for s in people.state()["gateway_sessions"] if s.get("connected"))


def up(people: People, machines: list[Machine]) -> bool:
    """Every machine has its record in Discord and a gateway session."""
    names = {m.name for m in machines}
    return names <= set(presence_records(people)) and connected(people) >= len(machines)


@contextlib.asynccontextmanager
async def running(
    discord: RunningEmulator, people: People, *machines: Machine
) -> AsyncIterator[tuple[Machine, ...]]:
    """Start the machines one after the other (each once the ones before it are in Discord),
    and yield once every machine knows every other one."""
    started: list[Machine] = []
    try:
        for each in machines:
            each.task = asyncio.create_task(run_daemon(each.settings, spawner=each.spawner))
            started.append(each)
            await until(lambda: up(people, started))
            for m in started:
                if m.task is not None and m.task.done():
                    m.task.result()
        await Slash(discord).ready(14)
        await until_known(discord, people, machines)
        yield machines
    finally:
        for each in started:
            if each.task is not None:
                each.task.cancel()
        for each in started:
            if each.task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    async with asyncio.timeout(15):
                        await each.task


async def until_known(
    discord: RunningEmulator, people: People, machines: tuple[Machine, ...]
) -> None:
    """Until /status (answered by one machine) lists every machine: the first ones learn of
    a later one from the gateway (its record's MESSAGE_CREATE), the later ones read the
    earlier ones' records when they start."""
    names = {m.name for m in machines}
    slash = Slash(discord)
    async with asyncio.timeout(30):
        while True:
            text = await slash.text("status")
            if len(names) == 1 or all(f"`{n}`" in text for n in names):
                return
            await asyncio.sleep(0.2)


async def every_turn_taken() -> None:
    """Until every machine of this test's event loop has taken its turn at the interactions
    issued so far: the last slot (and its probe) has come for an interaction received now, and
    no machine is still handling one (each does in a task named ``interaction-<id>``, in the
    gateway's lanes and in its slash commands). Only then can a count of 40060s say that no
    machine answered twice: a later machine answers at its slot, seconds after the first
    answer the control API reports."""
    loop = asyncio.get_running_loop()
    slots_passed = loop.time() + SLOT_S[LAST_SLOT] + PROBE_WAIT_S

    def taken() -> bool:
        handling = [
            task
            for task in asyncio.all_tasks(loop)
            if task.get_name().startswith("interaction-") and not task.done()
        ]
        return loop.time() >= slots_passed and not handling

    await until(taken, what="every machine's turn at the interactions")
