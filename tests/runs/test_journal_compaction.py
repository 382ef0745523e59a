"""The journal does not grow with history: the live segment is closed once large, old segments
go, the state keeps bounded numbers of jobs and dedupe keys, and every crash between the steps
of a compaction still starts with the same state."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from discord_mcp.errors import StateError
from discord_mcp.runs.journal.journal import (
    BASE_FILE,
    EVENTS_FILE,
    SNAPSHOT_FILE,
    Journal,
    closed_segments,
    load,
    segment_name,
)
from discord_mcp.runs.journal.model import RunState
from tests.runs.test_journal import Ticker, enqueue, finish, session, start

SEGMENT = 4096
BOUNDS = {"keep_finished": 20, "keep_finished_total": 40, "keep_dedupe": 60}


def no_fsync(fd: int) -> None:
    """These tests are about what is kept, not about durability (tests/runs/test_journal.py)."""


def compacting(directory: Path, *, keep_segments: int = 2, every: int = 10) -> Journal:
    ticker = Ticker()
    journal = Journal(
        directory,
        wall_clock=ticker,
        monotonic=ticker,
        snapshot_every_events=every,
        segment_bytes=SEGMENT,
        keep_segments=keep_segments,
        keep_finished=20,
        keep_finished_total=40,
        keep_dedupe=60,
        fsync=no_fsync,
    )
    journal.open()
    return journal


def run_jobs(journal: Journal, count: int, threads: int = 3) -> None:
    for thread in range(threads):
        if f"t{thread}" not in journal.state.sessions:
            session(journal, f"t{thread}")
    for n in range(count):
        thread = f"t{n % threads}"
        job = enqueue(journal, thread, f"m{journal.state.job_counter + 1}")
        start(journal, job)
        finish(journal, job)


def journal_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.iterdir() if p.is_file())


def test_a_long_history_keeps_one_live_segment_and_a_few_closed_ones(tmp_path: Path) -> None:
    journal = compacting(tmp_path)
    run_jobs(journal, 400)
    live = journal.state.to_dict()
    journal.close()
    segments = closed_segments(tmp_path)
    assert len(segments) == 2
    assert (tmp_path / BASE_FILE).exists()
    assert (tmp_path / EVENTS_FILE).stat().st_size < SEGMENT + 1024
    loaded = load(tmp_path, **BOUNDS)
    assert loaded.state.to_dict() == live
    assert loaded.replayed < 50  # the snapshot and a short live segment, not the history
    first, last = segments[-1].name.split("-")[1:3]
    assert int(last.split(".")[0]) + 1 == json.loads(
        (tmp_path / EVENTS_FILE).read_text(encoding="utf-8").splitlines()[0]
    )["seq"] or not (tmp_path / EVENTS_FILE).read_text(encoding="utf-8")
    assert int(first) < int(last.split(".")[0])


def test_the_journal_on_disk_is_bounded_whatever_the_history(tmp_path: Path) -> None:
    short, long = tmp_path / "short", tmp_path / "long"
    for directory, jobs in ((short, 150), (long, 1500)):  # ten times the history
        directory.mkdir()
        journal = compacting(directory)
        run_jobs(journal, jobs)
        journal.close()
    snapshot = (long / SNAPSHOT_FILE).stat().st_size
    assert journal_bytes(long) <= 2 * snapshot + (2 + 1) * (SEGMENT + 1024)
    assert journal_bytes(long) < 2 * journal_bytes(short)


def test_appends_go_on_in_the_new_segment_after_a_restart(tmp_path: Path) -> None:
    journal = compacting(tmp_path)
    run_jobs(journal, 120)
    journal.close()
    reopened = compacting(tmp_path)
    run_jobs(reopened, 120)
    live = reopened.state.to_dict()
    reopened.close()
    assert load(tmp_path, **BOUNDS).state.to_dict() == live


def test_without_the_snapshot_the_base_and_the_live_segment_rebuild_the_state(
    tmp_path: Path,
) -> None:
    journal = compacting(tmp_path, every=1000)  # snapshots only when the engine says so
    run_jobs(journal, 80)
    journal.snapshot()  # closes the segment: base.json is the state before the new one
    run_jobs(journal, 5)
    live = journal.state.to_dict()
    journal.close()
    (tmp_path / SNAPSHOT_FILE).write_text("{not json", encoding="utf-8")
    loaded = load(tmp_path, **BOUNDS)
    assert loaded.state.to_dict() == live
    assert any("rebuilding" in w for w in loaded.warnings)


def test_a_start_reads_no_base_when_the_snapshot_is_continued_by_the_live_segment(
    tmp_path: Path,
) -> None:
    """base.json is the state when the segment was last closed (after a year, the biggest
    file there): needed only when the snapshot is not, so it is not read otherwise."""
    journal = compacting(tmp_path, every=1000)
    run_jobs(journal, 80)
    journal.snapshot()  # closes the segment: base.json
    run_jobs(journal, 5)
    journal.snapshot()  # and a snapshot the live segment continues
    live = journal.state.to_dict()
    journal.close()
    base = tmp_path / BASE_FILE
    base.write_text("{not json", encoding="utf-8")  # not even noticed

    loaded = load(tmp_path, **BOUNDS)

    assert loaded.state.to_dict() == live
    assert loaded.warnings == []
    assert base.read_text(encoding="utf-8") == "{not json"  # left where it is, unread


def test_with_neither_snapshot_nor_base_a_compacted_journal_refuses_to_start(
    tmp_path: Path,
) -> None:
    journal = compacting(tmp_path, keep_segments=0)
    run_jobs(journal, 200)
    journal.close()
    (tmp_path / SNAPSHOT_FILE).unlink()
    (tmp_path / BASE_FILE).unlink()
    with pytest.raises(StateError, match="cannot be rebuilt"):
        load(tmp_path, **BOUNDS)


def crash_copy(source: Path, target: Path) -> None:
    target.mkdir()
    for path in source.iterdir():
        (target / path.name).write_bytes(path.read_bytes())


@pytest.mark.parametrize("step", ["base written", "segment renamed", "new segment opened"])
def test_a_crash_between_the_steps_of_a_compaction_starts_with_the_same_state(
    tmp_path: Path, step: str
) -> None:
    """Rebuild on disk what each step leaves, from an uncompacted journal at the same point."""
    plain = tmp_path / "plain"
    plain.mkdir()
    ticker = Ticker()
    journal = Journal(
        plain,
        wall_clock=ticker,
        monotonic=ticker,
        snapshot_every_events=10**6,
        segment_bytes=10**9,
        fsync=no_fsync,
        **BOUNDS,
    )
    journal.open()
    run_jobs(journal, 40)
    journal.snapshot()
    expected = journal.state.to_dict()
    snapshot = json.loads((plain / SNAPSHOT_FILE).read_text(encoding="utf-8"))
    seq = journal.seq
    journal.close()
    crashed = tmp_path / "crashed"
    crash_copy(plain, crashed)
    base = {**snapshot, "segment_start": seq + 1}
    (crashed / BASE_FILE).write_text(json.dumps(base), encoding="utf-8")
    if step in ("segment renamed", "new segment opened"):
        os.replace(crashed / EVENTS_FILE, crashed / segment_name(1, seq))
    if step == "new segment opened":
        (crashed / EVENTS_FILE).write_bytes(b"")
    loaded = load(crashed, **BOUNDS)
    assert loaded.state.to_dict() == expected
    assert loaded.seq == seq
    again = compacting(crashed)
    run_jobs(again, 3)
    after = again.state.to_dict()
    again.close()
    assert load(crashed, **BOUNDS).state.to_dict() == after
    assert load(crashed, **BOUNDS).seq == seq + 3 * 3


def test_the_state_keeps_a_bounded_number_of_jobs_and_dedupe_keys() -> None:
    state = RunState(keep_finished=50, keep_finished_total=100, keep_dedupe=120)
    for thread in ("a", "b", "c"):
        state.apply(
            "SessionCreated", {"thread_id": thread, "project_name": "p", "tool": "claude"}, "t"
        )
    for n in range(1, 1001):
        thread = "abc"[n % 3]
        job_id = f"job_{n}"
        state.apply(
            "JobEnqueued",
            {
                "job_id": job_id,
                "number": n,
                "thread_id": thread,
                "message_id": str(n),
                "author": "o",
                "prompt": "p",
                "attempt": 1,
                "dedupe_key": f"{thread}:{n}",
            },
            "2026-11-25T00:00:00Z",
        )
        state.apply(
            "JobStarted",
            {"job_id": job_id, "tool": "claude", "project_name": "p", "resume_key": None},
            "2026-11-25T00:00:01Z",
        )
        state.apply(
            "JobCompleted",
            {"job_id": job_id, "state": "success", "session_key": "k", "session_key_action": "set"},
            "2026-11-25T00:00:02Z",
        )
    assert len(state.jobs) <= 100 + 3
    assert len(state.dedupe) == 120
    for each in state.sessions.values():
        assert each.last_job_id in state.jobs  # how each session stands is kept
        assert all(job in state.jobs for job in each.finished_job_ids)
    copy = RunState.from_dict(
        json.loads(json.dumps(state.to_dict())),
        keep_finished=50,
        keep_finished_total=100,
        keep_dedupe=120,
    )
    assert copy.to_dict() == state.to_dict()


def test_a_snapshot_from_before_the_bounds_loads(tmp_path: Path) -> None:
    journal = compacting(tmp_path)
    run_jobs(journal, 10)
    journal.snapshot()
    live = journal.state.to_dict()
    journal.close()
    document = json.loads((tmp_path / SNAPSHOT_FILE).read_text(encoding="utf-8"))
    del document["finished"], document["segment_start"]
    (tmp_path / SNAPSHOT_FILE).write_text(json.dumps(document), encoding="utf-8")
    assert load(tmp_path, **BOUNDS).state.to_dict() == live
