"""A run folder removed (by retention, or by hand) stays removed: the engine starts, runs and
compacts its journal as before, the thread goes on as a session, and its start-up never writes
the old folder back (issue 38)."""

from __future__ import annotations

import os
import shutil

from discord_mcp.runs.folders.folders import RunFolder, new_run_id
from discord_mcp.runs.journal.journal import closed_segments, load
from tests.runs.conftest import EngineFactory
from tests.support.fake_agents import FakeSpawner, RecordingNotifier, Scenario

NOW = 1_790_000_000.0
DAY = 86400.0


async def test_the_engine_starts_and_compacts_as_before_and_never_writes_a_removed_folder_back(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    spawner.script("hello", Scenario(sample="claude-mcp.jsonl"))
    first, second = new_run_id(NOW - 10 * DAY), new_run_id(NOW - DAY)
    async with make_engine() as engine:
        home = engine.state_dir
        for thread, run_id in (("t1", first), ("t2", second)):
            await engine.start_session(thread, "app", "claude", run_id=run_id)
            for turn in range(3):
                job = await engine.submit(thread, f"{thread}m{turn}", "hello", "owner")
                await notifier.wait_finished(job.job_id)
    removed = RunFolder.of(home, first).root
    shutil.rmtree(removed)  # as retention removes it

    async with make_engine() as engine:
        await engine.recorder.drain()  # the start-up's reconcile is done
        assert not removed.exists()
        assert engine.session("t1") is not None  # the thread is still a session
        engine.journal.segment_bytes = 2048  # close segments as the jobs come
        for turn in range(6):
            job = await engine.submit("t2", f"again{turn}", "hello", "owner")
            await notifier.wait_finished(job.job_id)
        await engine.recorder.drain()
        assert not removed.exists()
    assert closed_segments(home / "runs")  # compaction happened
    restarted = load(home / "runs")
    assert {s.thread_id for s in restarted.state.sessions.values()} == {"t1", "t2"}
    assert not removed.exists()
    assert sorted(os.listdir(RunFolder.of(home, second).logs))[-1].startswith("turn-009")
