"""A daemon's start compares with the journal only the run folders changed since the recorder
last noted them up to date (runs/recorded.json, issue 38): a year of runs is not read at every
start, and a doubt about the note means comparing them all."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from discord_mcp.runs.contract import SystemClock
from discord_mcp.runs.folders.folders import RunFolder, RunQueue, new_run_id
from discord_mcp.runs.folders.recorded import MARGIN, compare_after, note_recorded, path
from tests.runs.conftest import EngineFactory
from tests.runs.test_run_folders import at_rest, document, run_one
from tests.support.fake_agents import RecordingNotifier
from tests.support.waiting import until

DAY = 86400.0
REQUEST = {
    "project": "app",
    "engine": "claude",
    "mode": "new",
    "session_id": None,
    "message": "lost",
    "created_at": "2026-01-01T00:00:00.000Z",
    "constraints": {"allow_network": True, "timeout_s": None},
    "reply_id": "1-abcd",
}


class Yesterday(SystemClock):
    def time(self) -> float:
        return time.time() - DAY


def lose_the_result(folder: RunFolder) -> None:
    """As if the daemon died after the journal said the turn ended, before the folder did."""
    folder.result.unlink()
    session = {k: v for k, v in document(folder.session).items() if k != "version"}
    folder.write(folder.session, session | {"state": "running"})


async def two_runs(
    make_engine: EngineFactory, notifier: RecordingNotifier
) -> tuple[RunFolder, RunFolder]:
    """A run last changed a day ago, and one changed now (each ran a turn)."""
    folders = []
    for thread, clock in (("t-old", Yesterday()), ("t-new", SystemClock())):
        async with make_engine(clock=clock) as engine:
            view = await engine.start_session(thread, "app", "claude")
            assert view.run_id is not None
            folder = RunFolder.of(engine.state_dir, view.run_id)
            await run_one(engine, notifier, thread, "hello")
            await at_rest(folder)
            folders.append(folder)
    return folders[0], folders[1]


async def test_a_start_compares_only_the_runs_changed_since_the_folders_were_noted_up_to_date(
    make_engine: EngineFactory, notifier: RecordingNotifier, state_dir: Path
) -> None:
    old, new = await two_runs(make_engine, notifier)
    mark = json.loads(path(state_dir).read_text(encoding="utf-8"))
    assert mark["version"] == 1
    assert mark["recorded_through"]
    lose_the_result(old)
    lose_the_result(new)
    async with make_engine():
        restored = await at_rest(new)  # changed after the note (less its margin): compared
    assert restored["status"] == "completed"
    assert not old.result.exists()  # noted up to date a day ago: not read at this start


async def test_without_a_trustworthy_note_every_run_is_compared(
    make_engine: EngineFactory, notifier: RecordingNotifier, state_dir: Path
) -> None:
    old, new = await two_runs(make_engine, notifier)
    for note in ("{not json", json.dumps({"version": 1, "recorded_through": "2999-01-01T00:00Z"})):
        lose_the_result(old)
        lose_the_result(new)
        path(state_dir).write_text(note, encoding="utf-8")
        async with make_engine():
            for folder in (old, new):
                assert (await at_rest(folder))["status"] == "completed"


def test_the_note_is_read_back_less_its_margin_and_only_when_it_can_be_trusted(
    tmp_path: Path,
) -> None:
    home = tmp_path
    (home / "runs").mkdir()
    now = time.time()
    assert compare_after(home, now) is None  # never noted
    note_recorded(home, now - 100)
    after = compare_after(home, now)
    assert after is not None
    assert abs(after.timestamp() - (now - 100 - MARGIN.total_seconds())) < 0.01
    assert compare_after(home, now - 200) is None  # noted in the future: the clock went back
    broken: list[dict[str, Any]] = [{"version": 1}, {"version": 1, "recorded_through": "soon"}]
    for document_ in broken:
        path(home).write_text(json.dumps(document_), encoding="utf-8")
        assert compare_after(home, now) is None


async def test_the_recorder_notes_the_folders_up_to_date_once_its_queue_runs_empty(
    make_engine: EngineFactory, notifier: RecordingNotifier, state_dir: Path
) -> None:
    def noted_since(moment: float) -> bool:
        after = compare_after(state_dir, time.time())
        return after is not None and after.timestamp() + MARGIN.total_seconds() >= moment

    async with make_engine() as engine:
        view = await engine.start_session("t1", "app", "claude")
        assert view.run_id is not None
        await run_one(engine, notifier, "t1", "hello")
        folder = RunFolder.of(state_dir, view.run_id)
        await at_rest(folder)
        written = folder.session.stat().st_mtime  # the turn's last write
        assert await until(lambda: noted_since(written - 0.001))  # ms in the note


async def test_a_start_looks_for_unstarted_runs_only_among_folders_changed_since_the_note(
    make_engine: EngineFactory, state_dir: Path
) -> None:
    """A claim moves request.json into the folder (the folder's time changes): a run claimed
    after the note is found however old its id; a folder untouched since is not read."""
    queue = RunQueue(state_dir)
    runs = []
    for n in range(2):
        run_id = new_run_id(n)  # ids from long ago: the time in an id is not the claim's
        claimed = queue.claim(queue.put({**REQUEST, "run_id": run_id}))
        assert claimed is not None  # ...and the daemon died right there
        runs.append(RunFolder.of(state_dir, run_id))
    untouched, claimed_late = runs
    two_days_ago = time.time() - 2 * DAY
    os.utime(untouched.root, (two_days_ago, two_days_ago))
    note_recorded(state_dir, time.time() - DAY)

    async with make_engine():
        await until(lambda: claimed_late.result.exists())
    assert not untouched.result.exists()  # not read: unchanged since the note
