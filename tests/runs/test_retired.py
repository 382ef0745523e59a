"""A year of sessions costs a start nothing (issue 38): a session at rest for a week leaves the
run state for a file of its own, and comes back as it was when its thread is written in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from discord_mcp.runs.engine.retiring import RETIRE_AFTER_S
from discord_mcp.runs.journal.journal_replay import load
from discord_mcp.runs.journal.model import InvalidEvent, RunState
from discord_mcp.watch.recovery import snowflake_at
from tests.runs.conftest import EngineFactory
from tests.runs.test_controls import MovableClock
from tests.support.fake_agents import FakeSpawner, RecordingNotifier

THREAD = "1443949102307451168"
WEEK_AND_A_DAY = RETIRE_AFTER_S + 86400.0


async def test_a_session_at_rest_for_a_week_retires_and_comes_back_as_it_was(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    state_dir: Path,
) -> None:
    clock = MovableClock()
    async with make_engine(clock=clock) as engine:
        await engine.start_session(THREAD, "app", model="sonnet")
        job = await engine.submit(THREAD, "m1", "write the tests", "owner")
        key = (await notifier.wait_finished(job.job_id)).session_key
        before = engine.session(THREAD)
    assert key
    assert before is not None

    clock.offset += WEEK_AND_A_DAY
    async with make_engine(clock=clock) as engine:
        assert engine.session(THREAD) is None  # retired at the start
        assert engine.sessions() == []
        snapshot = load(state_dir / "runs").state
        assert THREAD not in snapshot.sessions
        assert job.job_id not in snapshot.jobs  # its jobs went with it
        kept = json.loads((state_dir / "runs/retired/68" / f"{THREAD}.json").read_text("utf-8"))
        assert kept["session"]["thread_id"] == THREAD

        assert await engine.revive(THREAD)  # the owner writes in its thread
        assert not await engine.revive(THREAD)  # it is live again: nothing to bring back
        assert engine.session(THREAD) == before  # CLI session, model, last job: as they were
        again = await engine.submit(THREAD, "m2", "and the docs", "owner")
        await notifier.wait_finished(again.job_id)

    assert [run["resume"] for run in spawner.runs()] == [None, key]  # the CLI session resumes
    models = [run["argv"][run["argv"].index("--model") + 1] for run in spawner.runs()]
    assert models == ["sonnet", "sonnet"]
    clock.offset += 60
    async with make_engine(clock=clock) as engine:
        assert engine.session(THREAD) is not None  # written in today: it stays


async def test_a_retired_run_is_found_by_its_run_id_for_a_resume(
    make_engine: EngineFactory, notifier: RecordingNotifier, state_dir: Path
) -> None:
    clock = MovableClock()
    async with make_engine(clock=clock) as engine:
        session = await engine.start_session(THREAD, "app")
        job = await engine.submit(THREAD, "m1", "one", "owner")
        await notifier.wait_finished(job.job_id)
    assert session.run_id
    clock.offset += WEEK_AND_A_DAY
    async with make_engine(clock=clock) as engine:
        assert engine.session_of_run(session.run_id) is None
        assert await engine.revive_run(session.run_id)
        found = engine.session_of_run(session.run_id)
        assert found is not None
        assert found.thread_id == THREAD
        assert not await engine.revive_run("run_20990101_000000_abcdef")  # never was


async def test_a_session_with_a_worktree_waiting_to_be_landed_never_retires(
    make_engine: EngineFactory, notifier: RecordingNotifier, workdir: Path
) -> None:
    clock = MovableClock()
    async with make_engine(clock=clock) as engine:
        await engine.start_session(THREAD, "app")
        job = await engine.submit(THREAD, "m1", "one", "owner")
        await notifier.wait_finished(job.job_id)
        engine.state.sessions[THREAD].workdir = str(workdir)  # as a run in a worktree has
        engine.journal.snapshot()
    clock.offset += WEEK_AND_A_DAY
    async with make_engine(clock=clock) as engine:
        assert engine.session(THREAD) is not None  # Merge, Open PR and Discard still work


def test_retiring_and_reviving_replay_to_the_same_state_and_refuse_what_does_not_fit() -> None:
    state = RunState()
    ts = "2026-01-01T00:00:00.000Z"
    state.apply("SessionCreated", {"thread_id": "t1", "project_name": "app", "tool": "claude"}, ts)
    enqueued = {
        "thread_id": "t1",
        "job_id": "job_0000001",
        "number": 1,
        "message_id": "m1",
        "author": "owner",
        "prompt": "p",
        "attempt": 1,
    }
    state.apply("JobEnqueued", enqueued, ts)
    with pytest.raises(InvalidEvent, match="running or queued"):
        state.apply("SessionsRetired", {"thread_ids": ["t1"]}, ts)  # work waits in it
    state.apply("JobCancelled", {"job_id": "job_0000001"}, ts)
    record = {
        "session": state.sessions["t1"].to_dict(),
        "jobs": [j.to_dict() for j in state.jobs.values()],
    }
    whole = state.to_dict()

    state.apply("SessionsRetired", {"thread_ids": ["t1"]}, ts)
    assert state.sessions == {}
    assert state.jobs == {} or all(j.thread_id != "t1" for j in state.jobs.values())
    with pytest.raises(InvalidEvent, match="no session"):
        state.apply("SessionsRetired", {"thread_ids": ["t1"]}, ts)
    state.apply("SessionRevived", record, ts)
    assert state.sessions["t1"].to_dict() == whole["sessions"]["t1"]
    with pytest.raises(InvalidEvent, match="already has a session"):
        state.apply("SessionRevived", record, ts)


def test_dedupe_keys_two_weeks_older_than_the_newest_message_are_forgotten() -> None:
    """A year of messages costs the state two weeks of dedupe keys (the watch cursors keep an
    older message from being read again), and an old message that does come again forgets
    nothing newer: ages follow the messages' ids, not the clock."""
    state = RunState()
    ts = "2026-01-01T00:00:00.000Z"
    state.apply("SessionCreated", {"thread_id": "t1", "project_name": "app", "tool": "claude"}, ts)
    day = 86400.0
    start = 1_790_000_000.0

    def enqueue(n: int, at: float) -> None:
        job = {"thread_id": "t1", "job_id": f"job_{n:07d}", "number": n, "author": "owner"}
        message = snowflake_at(at)
        state.apply(
            "JobEnqueued",
            {
                **job,
                "message_id": message,
                "prompt": "p",
                "attempt": 1,
                "dedupe_key": f"t1:{message}",
            },
            ts,
        )
        state.apply("JobCancelled", {"job_id": f"job_{n:07d}"}, ts)

    for n in range(30):  # a message a day for a month
        enqueue(n + 1, start + n * day)
    kept = [snowflake_at(start + n * day) for n in range(30)]
    assert list(state.dedupe) == [f"t1:{m}" for m in kept[15:]]  # the last 15 days
    enqueue(31, start)  # the first day's message, once more
    assert len(state.dedupe) == 16
