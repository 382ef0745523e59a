"""A job's clock: its project's timeout, paused while its agent waits for the owner.

The engine's monotonic clock is injected (real time plus jumps the test makes), and the
"waiting for the owner" probe is a fake the test sets; the CLI is the scripted fake.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from discord_mcp.runs import ProjectRegistry
from discord_mcp.runs.contract import OwnerWait
from discord_mcp.state.files import off_loop
from tests.runs.conftest import FAST, EngineFactory
from tests.support.fake_agents import FakeSpawner, RecordingNotifier, Scenario
from tests.support.waiting import until

LIMITS = dataclasses.replace(FAST, job_timeout=3600.0, wait_check_interval=0.02)


class JumpingClock:
    """Real time, plus whatever the test adds to the monotonic clock with :meth:`jump`."""

    def __init__(self) -> None:
        self.offset = 0.0

    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic() + self.offset

    def jump(self, seconds: float) -> float:
        self.offset += seconds
        return self.monotonic()


class OwnerWaits:
    """The probe: how long the test says the thread's agent has waited; records each ask."""

    def __init__(self, clock: JumpingClock) -> None:
        self.clock = clock
        self.waited = 0.0
        self.asks: list[tuple[str, float, float]] = []  # (thread, since, monotonic at the ask)

    def probe(self) -> OwnerWait:
        async def ask(thread_id: str, since: float) -> float:
            self.asks.append((thread_id, since, self.clock.monotonic()))
            return self.waited

        return ask

    def asked_after(self, moment: float) -> int:
        return sum(1 for _, _, at in self.asks if at >= moment)


async def project_with_timeout(registry: ProjectRegistry, workdir: Path, seconds: float) -> None:
    await off_loop(registry.add, "slowpoke", workdir, ["claude"], "claude", job_timeout=seconds)


async def test_a_job_waiting_for_the_owner_longer_than_its_timeout_is_not_killed(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    registry: ProjectRegistry,
    workdir: Path,
    tmp_path: Path,
) -> None:
    await project_with_timeout(registry, workdir, 100.0)
    gate = tmp_path / "answered"
    spawner.script("ask the owner", Scenario(gate=gate))
    clock = JumpingClock()
    waits = OwnerWaits(clock)
    async with make_engine(limits=LIMITS, clock=clock, owner_wait=waits.probe()) as engine:
        await engine.start_session("t1", "slowpoke")
        job = await engine.submit("t1", "m1", "ask the owner", "owner")
        await until(lambda: waits.asks)
        waits.waited = 10_000.0  # the agent has been waiting on a question all along
        jumped = clock.jump(500.0)  # five times its timeout later
        await until(lambda: waits.asked_after(jumped) >= 5)
        assert notifier.finished(job.job_id) is None  # checked past its timeout, still running
        gate.touch()  # the answer came; the agent finishes
        done = await notifier.wait_finished(job.job_id)
    assert (done.state, done.error_code) == ("success", None)
    thread, since, _ = waits.asks[0]
    assert thread == "t1"
    assert done.started_at is not None
    assert abs(since - done.started_at.timestamp()) < 1.0  # waits since the job started


async def test_a_job_running_past_its_projects_timeout_without_waiting_is_killed(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    registry: ProjectRegistry,
    workdir: Path,
) -> None:
    await project_with_timeout(registry, workdir, 100.0)
    spawner.script("busy", Scenario(hang=True))
    clock = JumpingClock()
    waits = OwnerWaits(clock)
    async with make_engine(limits=LIMITS, clock=clock, owner_wait=waits.probe()) as engine:
        await engine.start_session("t1", "slowpoke")
        job = await engine.submit("t1", "m1", "busy", "owner")
        await until(lambda: waits.asks)
        waits.waited = 30.0  # it did wait a little, which is not counted...
        clock.jump(131.0)  # ...but it has run longer than 100 s besides
        done = await notifier.wait_finished(job.job_id)
    assert (done.state, done.error_code) == ("failed", "E_CLI_TIMEOUT")
    assert "100 s timeout (30 s waiting for the owner not counted)" in (done.error_message or "")


async def test_a_job_within_its_timeout_plus_its_waits_keeps_running(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    registry: ProjectRegistry,
    workdir: Path,
    tmp_path: Path,
) -> None:
    await project_with_timeout(registry, workdir, 100.0)
    gate = tmp_path / "done"
    spawner.script("steady", Scenario(gate=gate))
    clock = JumpingClock()
    waits = OwnerWaits(clock)
    async with make_engine(limits=LIMITS, clock=clock, owner_wait=waits.probe()) as engine:
        await engine.start_session("t1", "slowpoke")
        job = await engine.submit("t1", "m1", "steady", "owner")
        await until(lambda: waits.asks)
        waits.waited = 60.0
        jumped = clock.jump(150.0)  # 150 s in, 60 of them waiting: 90 s of its 100
        await until(lambda: waits.asked_after(jumped) >= 5)
        assert notifier.finished(job.job_id) is None
        gate.touch()
        done = await notifier.wait_finished(job.job_id)
    assert done.state == "success"


async def test_without_a_project_timeout_the_engine_default_applies(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    spawner.script("busy", Scenario(hang=True))
    clock = JumpingClock()
    limits = dataclasses.replace(LIMITS, job_timeout=40.0)
    async with make_engine(limits=limits, clock=clock) as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "busy", "owner")
        await until(lambda: notifier.of("job_started", job.job_id))
        clock.jump(41.0)
        done = await notifier.wait_finished(job.job_id)
    assert done.error_code == "E_CLI_TIMEOUT"
    assert "40 s timeout" in (done.error_message or "")
