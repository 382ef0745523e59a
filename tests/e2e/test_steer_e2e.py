"""``busy: steer`` with headless Claude Code from Discord: a message written while a job runs
reaches the running turn (the real CLI, its prompt and the steered message on stdin, against
the scripted model server), and one job answers both, also after the daemon was restarted
in the middle of that job.

The scripted model holds its first answer until the second message has been handed over, then
calls a tool (Read): Claude Code gives the model the message beside that tool's result ("The
user sent a new message while you were working"), in the same turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.emulator import RunningEmulator
from tests.support.agent_clis import CLAUDE_MODEL, ClaudeCli, require_cli
from tests.support.model_server import BuiltinCall, ModelRequest, ModelServer, Reply, Text
from tests.support.people import People
from tests.support.waiting import until
from tests.support.watch_world import FAST_DISCORD, WatchWorld, texts

pytestmark = pytest.mark.e2e

SECOND = "a second thought"
WAIT_S = 120.0


@pytest.fixture
def discord(make_emulator: Callable[..., RunningEmulator]) -> RunningEmulator:
    return make_emulator(**FAST_DISCORD)


class Brain:
    """Holds the first answer until released, then reads a file; answers the tool's result
    saying whether the steered message came with it."""

    def __init__(self, notes: Path) -> None:
        self.notes = notes
        self.asked = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: ModelRequest) -> Reply:
        if request.latest_tool_results():
            seen = "saw" if request.contains(SECOND) else "did not see"
            return Text(f"Steered: I {seen} the second thought.")
        said = request.user_texts()
        if said and "first task" in said[-1]:
            self.asked.set()
            self.release.wait(90)
            return BuiltinCall("Read", {"file_path": str(self.notes)})
        return Text("Unexpected request.")


def journal(home: Path) -> list[dict[str, Any]]:
    path = home / "runs" / "events.ndjson"
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def of_type(home: Path, kind: str) -> list[dict[str, Any]]:
    """The payloads of the journal's events of one type, oldest first."""
    return [e["payload"] for e in journal(home) if e.get("type") == kind]


def handed_over(home: Path, job_id: str) -> bool:
    """The job wrapper has written every steered message into the CLI's stdin (it deletes each
    file of the job's input once written): Claude Code reads it from there at once, so the
    model's next step gets it."""
    inbox = home / "runs" / "jobs" / job_id / "input"
    return inbox.is_dir() and not any(inbox.iterdir())


def results_in_log(home: Path, job_id: str) -> int:
    log = home / "logs" / "jobs" / f"{job_id}.stdout"
    lines = log.read_text(encoding="utf-8").splitlines()
    return sum(1 for line in lines if line.strip() and json.loads(line).get("type") == "result")


class Setup:
    """Claude Code with ``busy: steer`` in the project; the model holds its first answer."""

    def __init__(self, world: WatchWorld) -> None:
        require_cli("claude")
        self.world = world
        notes = world.workdir / "notes.txt"
        notes.write_text("Nothing to see here.\n", encoding="utf-8")
        self.brain = Brain(notes)
        world.model.script(self.brain, repeat=True)
        world.environ.pop("IS_SANDBOX", None)
        self.tool_env = {"claude": world.cli(ClaudeCli).env()}

    @property
    def home(self) -> Path:
        return self.world.home

    async def project(self) -> None:
        await self.world.add_project(
            ["claude"], "claude", {"claude": ["--model", CLAUDE_MODEL]}, busy="steer"
        )

    def watching(self) -> contextlib.AbstractAsyncContextManager[asyncio.Task[None]]:
        return self.world.watching(self.tool_env)


async def _connected(setup: Setup, people: People) -> None:
    await setup.world.connected(people, seconds=WAIT_S)


async def test_a_message_written_while_claude_code_works_joins_its_running_turn(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    watch_world: Callable[..., WatchWorld],
) -> None:
    setup = Setup(watch_world())
    await setup.project()
    try:
        async with setup.watching():
            await _connected(setup, people)
            thread = people.say(discord.channel_id, "!start app")["id"]
            await until(
                lambda: any("Session started" in t for t in texts(people, thread)), seconds=WAIT_S
            )
            people.say(thread, "first task please")
            await until(setup.brain.asked.is_set, what="the held model request", seconds=WAIT_S)
            people.say(thread, SECOND)
            [steered] = await until(
                lambda: of_type(setup.home, "JobSteered"),
                what="the message steered",
                seconds=WAIT_S,
            )
            await until(
                lambda: handed_over(setup.home, steered["job_id"]),
                what="the hand-over",
                seconds=WAIT_S,
            )
            setup.brain.release.set()
            final = await until(
                lambda: [t for t in texts(people, thread) if "Steered:" in t and "Reply in" in t],
                what="the answer",
                seconds=WAIT_S,
            )
    finally:
        setup.brain.release.set()
    assert "I saw the second thought" in final[0], model_server.describe()
    [job] = of_type(setup.home, "JobEnqueued")  # one job took both messages
    assert steered["job_id"] == job["job_id"]
    assert steered["prompt"] == SECOND
    assert len(of_type(setup.home, "JobProcessStarted")) == 1  # one CLI process
    [done] = of_type(setup.home, "JobCompleted")
    assert done["job_id"] == job["job_id"]
    # The model got it within the first turn: beside the tool's result, before the only result.
    first, *rest = model_server.turn_requests()
    assert not first.contains(SECOND)
    assert rest
    assert all(r.latest_tool_results() and r.contains(SECOND) for r in rest)
    assert results_in_log(setup.home, job["job_id"]) == 1
    assert not any("waiting" in t.lower() for t in texts(people, thread))


async def test_a_job_reattached_after_a_daemon_restart_still_takes_a_steered_message(
    discord: RunningEmulator,
    people: People,
    model_server: ModelServer,
    watch_world: Callable[..., WatchWorld],
) -> None:
    """The job wrapper holds the CLI's input: the daemon that reattaches the job steers it."""
    setup = Setup(watch_world())
    await setup.project()
    try:
        async with setup.watching():
            await _connected(setup, people)
            thread = people.say(discord.channel_id, "!start app")["id"]
            await until(
                lambda: any("Session started" in t for t in texts(people, thread)), seconds=WAIT_S
            )
            people.say(thread, "first task please")
            await until(setup.brain.asked.is_set, what="the held model request", seconds=WAIT_S)
        # The daemon is gone; Claude Code still waits for the model.
        assert not of_type(setup.home, "JobCompleted")
        async with setup.watching():
            await until(
                lambda: of_type(setup.home, "JobReattached"),
                what="the reattached job",
                seconds=WAIT_S,
            )
            await _connected(setup, people)
            people.say(thread, SECOND)
            [steered] = await until(
                lambda: of_type(setup.home, "JobSteered"),
                what="the message steered",
                seconds=WAIT_S,
            )
            await until(
                lambda: handed_over(setup.home, steered["job_id"]),
                what="the hand-over",
                seconds=WAIT_S,
            )
            setup.brain.release.set()
            final = await until(
                lambda: [t for t in texts(people, thread) if "Steered:" in t and "Reply in" in t],
                what="the answer",
                seconds=WAIT_S,
            )
    finally:
        setup.brain.release.set()
    assert "I saw the second thought" in final[0], model_server.describe()
    [job] = of_type(setup.home, "JobEnqueued")
    assert steered["job_id"] == job["job_id"]
    [reattached] = of_type(setup.home, "JobReattached")
    assert reattached["job_id"] == job["job_id"]
    assert len(of_type(setup.home, "JobProcessStarted")) == 1
    assert results_in_log(setup.home, job["job_id"]) == 1
