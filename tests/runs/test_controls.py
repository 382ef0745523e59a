"""The owner's controls in the engine: debounced messages, automatic retries of temporary
failures, usage-limit holds until the reset, cancelling waiting jobs, a session's model, closed
sessions and the usage ledger. The CLIs are the scripted fake; wall time is injected."""

from __future__ import annotations

import dataclasses
import time

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs import TOOLS, ProjectRegistry, RunEngine
from discord_mcp.runs.journal.journal import load
from discord_mcp.state.files import off_loop
from tests.runs.conftest import FAST, EngineFactory
from tests.support.fake_agents import FakeSpawner, RecordingNotifier, Scenario

RESET = 1_900_000_000.0  # resetsAt in synthetic/claude-usage-limit.jsonl
TICK = dataclasses.replace(FAST, timer_tick=0.02, retry_pause=30.0)


class MovableClock:
    """Real time, plus an offset the test moves (the wall clock only)."""

    def __init__(self, start: float | None = None) -> None:
        self.offset = 0.0 if start is None else start - time.time()

    def time(self) -> float:
        return time.time() + self.offset

    def monotonic(self) -> float:
        return time.monotonic()

    def jump(self, seconds: float) -> None:
        self.offset += seconds


async def settle(engine: RunEngine, notifier: RecordingNotifier) -> None:
    """Let the engine act if it were going to (to show that it does not): a job in another
    thread runs from start to end meanwhile, many timer ticks long."""
    thread = f"elsewhere-{len(engine.sessions())}"
    await engine.start_session(thread, "app")
    job = await engine.submit(thread, "m", "elsewhere", "owner")
    await notifier.wait_finished(job.job_id)


def prompts(spawner: FakeSpawner) -> list[str]:
    return [r["prompt"] for r in spawner.runs() if r["prompt"] != "elsewhere"]


async def test_messages_in_quick_succession_become_one_job(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    clock = MovableClock()
    limits = dataclasses.replace(TICK, debounce=30.0)
    async with make_engine(clock=clock, limits=limits) as engine:
        await engine.start_session("t1", "app")
        first = await engine.submit("t1", "m1", "fix the login", "owner")
        again = await engine.submit("t1", "m2", "and the logout", "owner")
        await engine.submit("t1", "m2", "and the logout", "owner")  # delivered twice
        third = await engine.submit("t1", "m3", "thanks", "owner")
        waiting = engine.job(first.job_id)
        assert waiting is not None
        assert waiting.state == "queued"  # a start would have happened inside submit
        clock.jump(31)
        done = await notifier.wait_finished(first.job_id)
        clock.jump(60)
        later = await engine.submit("t1", "m4", "one more", "owner")
        assert later.job_id != first.job_id  # the window had closed
        clock.jump(31)
        await notifier.wait_finished(later.job_id)
    assert again.job_id == third.job_id == first.job_id
    assert done.prompt == "fix the login\n\nand the logout\n\nthanks"
    assert prompts(spawner) == [done.prompt, "one more"]


async def test_a_temporary_failure_is_retried_once_on_its_own(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    clock = MovableClock()
    spawner.script("deploy", Scenario(sample="claude-fail-529-noretry.jsonl"))
    async with make_engine(clock=clock, limits=TICK) as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "deploy", "owner")
        failed = await notifier.wait_finished(job.job_id)
        later = await engine.submit("t1", "m2", "then report", "owner")
        await settle(engine, notifier)
        assert prompts(spawner) == ["deploy"]  # the retry waits its pause, the later job too
        clock.jump(31)
        assert failed.retried_by is not None
        retry = await notifier.wait_finished(failed.retried_by)  # fails the same way
        await notifier.wait_finished(later.job_id)
    assert (retry.attempt, retry.retry_of, retry.reason) == (2, job.job_id, "temporary")
    assert retry.state == "failed"
    assert retry.retried_by is None  # once only
    assert prompts(spawner) == ["deploy", "deploy", "then report"]


async def test_a_failure_of_the_job_itself_is_not_retried(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    spawner.script("deploy", Scenario(sample="claude-fail-401-noretry.jsonl"))
    async with make_engine(limits=dataclasses.replace(TICK, retry_pause=0.0)) as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "deploy", "owner")
        failed = await notifier.wait_finished(job.job_id)
        await settle(engine, notifier)
    assert failed.retried_by is None
    assert prompts(spawner) == ["deploy"]


async def test_a_usage_limit_holds_the_job_until_the_reset_then_it_continues(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    clock = MovableClock(start=RESET - 3600)
    spawner.script("big refactor", Scenario(sample="synthetic/claude-usage-limit.jsonl"))
    async with make_engine(clock=clock, limits=TICK) as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "big refactor", "owner")
        failed = await notifier.wait_finished(job.job_id)
        later = await engine.submit("t1", "m2", "and then tests", "owner")
        view = engine.session("t1")
        clock.jump(3000)  # still before the reset
        await settle(engine, notifier)
        assert prompts(spawner) == ["big refactor"]
        spawner.script("big refactor", Scenario())  # after the reset the quota is back
        clock.jump(620)
        assert failed.retried_by is not None
        resumed = await notifier.wait_finished(failed.retried_by)
        await notifier.wait_finished(later.job_id)
    assert failed.resets_at is not None
    assert failed.resets_at.timestamp() == RESET
    assert view is not None
    assert view.held_until is not None
    assert view.held_until.timestamp() == RESET + 10
    assert (resumed.state, resumed.reason, resumed.attempt) == ("success", "usage_limit", 2)
    assert prompts(spawner) == ["big refactor", "big refactor", "and then tests"]


async def test_cancel_takes_waiting_jobs_out_but_never_the_running_one(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, tmp_path
) -> None:
    gate = tmp_path / "gate"
    spawner.script("long", Scenario(gate=gate))
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        running = await engine.submit("t1", "m1", "long", "owner")
        second = await engine.submit("t1", "m2", "second", "owner")
        third = await engine.submit("t1", "m3", "third", "owner")
        fourth = await engine.submit("t1", "m4", "fourth", "owner")
        await notifier.wait_for(lambda: notifier.of("job_started", running.job_id))
        with pytest.raises(RunError) as caught:
            await engine.cancel("t1", running.job_id)
        one = await engine.cancel("t1", third.job_id)
        rest = await engine.cancel("t1")
        gate.touch()
        await notifier.wait_finished(running.job_id)
        await settle(engine, notifier)
        none = await engine.cancel("t1")
        session = engine.session("t1")
    assert caught.value.code == "E_JOB_NOT_CANCELLABLE"
    assert [j.job_id for j in one] == [third.job_id]
    assert [j.job_id for j in rest] == [second.job_id, fourth.job_id]
    assert {j.state for j in one + rest} == {"cancelled"}
    assert none == []
    assert session is not None
    assert (session.state, session.pending) == ("idle", 0)
    assert prompts(spawner) == ["long"]


async def test_a_sessions_model_is_passed_to_its_next_jobs(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    registry: ProjectRegistry,
    workdir,
) -> None:
    await off_loop(registry.remove, "app")
    args = {"claude": ["--model", "opus", "--verbose"]}
    await off_loop(registry.add, "app", workdir, TOOLS, "claude", args)
    async with make_engine() as engine:
        await engine.start_session("t1", "app", model="haiku")
        first = await engine.submit("t1", "m1", "one", "owner")
        await notifier.wait_finished(first.job_id)
        await engine.set_model("t1", "sonnet")
        second = await engine.submit("t1", "m2", "two", "owner")
        await notifier.wait_finished(second.job_id)
        view = await engine.set_model("t1", "default")
        third = await engine.submit("t1", "m3", "three", "owner")
        await notifier.wait_finished(third.job_id)
        with pytest.raises(RunError) as caught:
            await engine.set_model("t1", "--dangerously-skip")
    models = []
    for run in spawner.runs():
        argv = run["argv"]
        models.append([argv[i + 1] for i, a in enumerate(argv) if a == "--model"])
    assert models == [["haiku"], ["sonnet"], ["opus"]]
    assert view.model is None
    assert caught.value.code == "E_INVALID_MODEL"


async def test_a_closed_session_takes_no_jobs_until_reopened(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, tmp_path
) -> None:
    gate = tmp_path / "gate"
    spawner.script("long", Scenario(gate=gate))
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        running = await engine.submit("t1", "m1", "long", "owner")
        await engine.submit("t1", "m2", "waiting", "owner")
        with pytest.raises(RunError) as busy:
            await engine.close_session("t1")
        await engine.cancel("t1")
        gate.touch()
        await notifier.wait_finished(running.job_id)
        closed = await engine.close_session("t1")
        with pytest.raises(RunError) as refused:
            await engine.submit("t1", "m3", "more", "owner")
        reopened = await engine.reopen_session("t1")
        job = await engine.submit("t1", "m4", "more, now", "owner")
        await notifier.wait_finished(job.job_id)
    assert busy.value.code == "E_SESSION_BUSY"
    assert closed.closed
    assert refused.value.code == "E_SESSION_CLOSED"
    assert not reopened.closed
    assert [r["prompt"] for r in spawner.runs()] == ["long", "more, now"]


async def test_usage_is_counted_per_day_project_and_thread_and_survives_a_replay(
    make_engine: EngineFactory, notifier: RecordingNotifier, state_dir
) -> None:
    async with make_engine() as engine:
        for thread in ("t1", "t2"):
            await engine.start_session(thread, "app")
            job = await engine.submit(thread, f"{thread}-m", "count me", "owner")
            await notifier.wait_finished(job.job_id)
        rows = engine.usage_rows()
        only = engine.usage_rows("nope")
    replayed = load(state_dir / "runs", use_snapshot=False).state
    assert {r.thread_id for r in rows} == {"t1", "t2"}
    assert all(r.jobs == 1 and r.project == "app" for r in rows)
    assert all(r.input_tokens > 0 and r.output_tokens > 0 for r in rows)
    assert only == []
    assert replayed.usage == engine.state.usage
