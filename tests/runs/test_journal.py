"""The journal: every change is an fsynced event line; startup is snapshot + replay, and
rebuilding from the events alone gives exactly the same state. Damage is refused loudly,
except a torn last line (a crash mid-write), which is dropped with a warning."""

from __future__ import annotations

import itertools
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from discord_mcp.errors import JournalCorrupt, StateError
from discord_mcp.runs.journal.journal import EVENTS_FILE, SNAPSHOT_FILE, Journal, load
from discord_mcp.runs.journal.model import TOOLS, InvalidEvent


class Ticker:
    """A clock that moves one second per reading (deterministic timestamps)."""

    def __init__(self) -> None:
        self.now = 1_780_000_000.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def open_journal(directory: Path, *, every: int = 50, keep: int = 200) -> Journal:
    ticker = Ticker()
    journal = Journal(
        directory,
        wall_clock=ticker,
        monotonic=ticker,
        snapshot_every_events=every,
        keep_finished=keep,
    )
    journal.open()
    return journal


def session(journal: Journal, thread: str = "t1", tool: str = "claude") -> None:
    journal.append("SessionCreated", {"thread_id": thread, "project_name": "app", "tool": tool})


def enqueue(journal: Journal, thread: str, message: str, retry_of: str | None = None) -> str:
    number = journal.state.job_counter + 1
    job_id = f"job_{number:04d}"
    journal.append(
        "JobEnqueued",
        {
            "job_id": job_id,
            "number": number,
            "thread_id": thread,
            "message_id": message,
            "author": "owner",
            "prompt": f"prompt {message}",
            "attempt": 1 if retry_of is None else 2,
            "retry_of": retry_of,
            "dedupe_key": None if retry_of else f"{thread}:{message}",
        },
    )
    return job_id


def start(journal: Journal, job_id: str) -> None:
    job = journal.state.jobs[job_id]
    tool = journal.state.sessions[job.thread_id].tool
    journal.append(
        "JobStarted", {"job_id": job_id, "tool": tool, "project_name": "app", "resume_key": None}
    )


def finish(journal: Journal, job_id: str, state: str = "success", key: str | None = "k") -> None:
    kind = {
        "success": "JobCompleted",
        "failed": "JobFailed",
        "unknown_after_crash": "JobMarkedUnknownAfterCrash",
    }[state]
    journal.append(
        kind,
        {
            "job_id": job_id,
            "state": state,
            "session_key": key,
            "session_key_action": "set" if key else "keep",
            "usage": {"input_tokens": 3},
            "error_code": None if state == "success" else "E_X",
        },
    )


def some_history(journal: Journal) -> None:
    session(journal, "t1")
    session(journal, "t2", "codex")
    first = enqueue(journal, "t1", "m1")
    enqueue(journal, "t1", "m2")
    start(journal, first)
    journal.append("JobProcessStarted", {"job_id": first, "pid": 10, "start_time": 5})
    journal.append("JobProgress", {"job_id": first, "session_key": "abc"})
    finish(journal, first, "failed", key="abc")
    enqueue(journal, "t1", "m1-retry", retry_of=first)
    journal.append("ToolChanged", {"thread_id": "t2", "tool": "gemini"})


def lines_of(directory: Path) -> list[str]:
    return (directory / EVENTS_FILE).read_text(encoding="utf-8").splitlines()


def write_lines(directory: Path, lines: list[str], *, tail: str = "\n") -> None:
    (directory / EVENTS_FILE).write_text("\n".join(lines) + tail, encoding="utf-8")


def test_events_are_enveloped_numbered_lines(tmp_path: Path) -> None:
    journal = open_journal(tmp_path)
    some_history(journal)
    events = [json.loads(line) for line in lines_of(tmp_path)]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert all(set(e) == {"seq", "ts", "type", "payload"} for e in events)
    assert events[0]["ts"].endswith("Z")
    assert events[0]["type"] == "SessionCreated"


def test_startup_rebuilds_the_same_state_with_or_without_the_snapshot(tmp_path: Path) -> None:
    journal = open_journal(tmp_path, every=4)
    some_history(journal)
    live = journal.state.to_dict()
    journal.close()
    with_snapshot = load(tmp_path)
    events_only = load(tmp_path, use_snapshot=False)
    assert with_snapshot.from_snapshot
    assert with_snapshot.replayed < events_only.replayed
    assert with_snapshot.state.to_dict() == live
    assert events_only.state.to_dict() == live
    assert with_snapshot.seq == events_only.seq == len(lines_of(tmp_path))


def test_a_snapshot_is_written_every_n_events(tmp_path: Path) -> None:
    journal = open_journal(tmp_path, every=3)
    session(journal, "a")
    session(journal, "b")
    assert not (tmp_path / SNAPSHOT_FILE).exists()
    session(journal, "c")
    snapshot = json.loads((tmp_path / SNAPSHOT_FILE).read_text(encoding="utf-8"))
    assert snapshot["version"] == 1
    assert snapshot["seq"] == 3
    assert snapshot["events_offset"] == (tmp_path / EVENTS_FILE).stat().st_size
    assert set(snapshot["sessions"]) == {"a", "b", "c"}


def test_a_gap_in_the_sequence_stops_startup_naming_file_and_line(tmp_path: Path) -> None:
    journal = open_journal(tmp_path)
    some_history(journal)
    journal.close()
    lines = lines_of(tmp_path)
    del lines[3]
    write_lines(tmp_path, lines)
    with pytest.raises(JournalCorrupt) as caught:
        load(tmp_path)
    assert caught.value.code == "E_JOURNAL_CORRUPT"
    assert caught.value.line == 4
    assert str(tmp_path / EVENTS_FILE) in str(caught.value)
    assert "expected seq 4, found 5" in str(caught.value)


@pytest.mark.parametrize("damage", ['{"seq": 4, "ts"', "garbage", "", "[1,2]"])
def test_a_damaged_line_in_the_middle_stops_startup(tmp_path: Path, damage: str) -> None:
    journal = open_journal(tmp_path)
    some_history(journal)
    journal.close()
    lines = lines_of(tmp_path)
    lines[3] = damage
    write_lines(tmp_path, lines)
    with pytest.raises(JournalCorrupt) as caught:
        load(tmp_path)
    assert caught.value.line == 4
    with pytest.raises(JournalCorrupt):
        open_journal(tmp_path)


def test_a_torn_last_line_is_dropped_with_a_warning_and_cut_off(tmp_path: Path) -> None:
    journal = open_journal(tmp_path)
    some_history(journal)
    expected = journal.state.to_dict()
    count = journal.seq
    journal.close()
    with open(tmp_path / EVENTS_FILE, "a", encoding="utf-8") as handle:
        handle.write(f'{{"seq": {count + 1}, "ts": "2026-01-01T00:00:00.000Z", "type": "Sess')
    loaded = load(tmp_path)
    assert loaded.state.to_dict() == expected
    assert loaded.seq == count
    assert len(loaded.warnings) == 1
    assert f"line {count + 1}" in loaded.warnings[0]
    assert "dropped" in loaded.warnings[0]

    journal = open_journal(tmp_path)  # cuts the torn tail off, then appends cleanly
    session(journal, "t9")
    journal.close()
    assert load(tmp_path, use_snapshot=False).seq == count + 1
    assert not load(tmp_path).warnings


def test_an_unparsable_last_line_with_its_newline_is_dropped_too(tmp_path: Path) -> None:
    journal = open_journal(tmp_path)
    some_history(journal)
    journal.close()
    lines = lines_of(tmp_path)
    write_lines(tmp_path, [*lines, "\x00\x00\x00"])
    loaded = load(tmp_path)
    assert loaded.seq == len(lines)
    assert loaded.warnings


def test_invalid_utf8_is_damage_in_the_middle_and_a_torn_write_at_the_end(
    tmp_path: Path,
) -> None:
    journal = open_journal(tmp_path)
    some_history(journal)
    journal.close()
    original = (tmp_path / EVENTS_FILE).read_bytes()
    lines = original.split(b"\n")
    lines[2] = lines[2].replace(b"t1", b"t\xff")
    (tmp_path / EVENTS_FILE).write_bytes(b"\n".join(lines))
    with pytest.raises(JournalCorrupt) as caught:
        load(tmp_path)
    assert (caught.value.line, caught.value.problem) == (3, "the line is not valid UTF-8")

    torn = original + '{"seq": 99, "payload": {"prompt": "修'.encode()[:-1]
    (tmp_path / EVENTS_FILE).write_bytes(torn)
    loaded = load(tmp_path)
    assert loaded.offset == len(original)
    assert loaded.warnings


def test_extra_characters_after_an_event_are_damage(tmp_path: Path) -> None:
    journal = open_journal(tmp_path)
    some_history(journal)
    journal.close()
    lines = lines_of(tmp_path)
    lines[1] += " trailing"
    write_lines(tmp_path, lines)
    with pytest.raises(JournalCorrupt, match="extra characters"):
        load(tmp_path)


def test_non_ascii_history_survives_a_torn_tail_and_reopening(tmp_path: Path) -> None:
    journal = open_journal(tmp_path, every=3)
    session(journal, "t1")
    for message in ("請幫我修 tests", "テストを直して", "테스트 고쳐줘"):
        enqueue(journal, "t1", message)
    expected = journal.state.to_dict()
    journal.close()
    with open(tmp_path / EVENTS_FILE, "ab") as handle:
        handle.write(
            '{"seq": 5, "ts": "x", "type": "JobEnqueued", "payload": {"prompt": "半'.encode()
        )
    journal = open_journal(tmp_path, every=3)
    assert journal.state.to_dict() == expected
    enqueue(journal, "t1", "最後")
    live = journal.state.to_dict()
    journal.close()
    assert load(tmp_path).state.to_dict() == live
    assert load(tmp_path, use_snapshot=False).state.to_dict() == live
    assert not load(tmp_path).warnings


def test_a_corrupt_snapshot_is_moved_aside_and_the_events_rebuild_the_state(
    tmp_path: Path,
) -> None:
    journal = open_journal(tmp_path, every=2)
    some_history(journal)
    expected = journal.state.to_dict()
    journal.close()
    (tmp_path / SNAPSHOT_FILE).write_text("{broken", encoding="utf-8")
    loaded = load(tmp_path)
    assert loaded.state.to_dict() == expected
    assert not loaded.from_snapshot
    assert any("rebuilding" in w for w in loaded.warnings)
    assert list(tmp_path.glob(f"{SNAPSHOT_FILE}.corrupt-*"))


def test_a_snapshot_ahead_of_the_events_refuses_to_start(tmp_path: Path) -> None:
    journal = open_journal(tmp_path, every=2)
    some_history(journal)
    journal.close()
    write_lines(tmp_path, lines_of(tmp_path)[:1])
    with pytest.raises(StateError, match="events were lost"):
        load(tmp_path)


def test_a_snapshot_whose_offset_no_longer_fits_falls_back_to_a_full_scan(
    tmp_path: Path,
) -> None:
    journal = open_journal(tmp_path, every=3)
    some_history(journal)
    expected = journal.state.to_dict()
    journal.close()
    snapshot = json.loads((tmp_path / SNAPSHOT_FILE).read_text(encoding="utf-8"))
    snapshot["events_offset"] = 7  # mid-line
    (tmp_path / SNAPSHOT_FILE).write_text(json.dumps(snapshot), encoding="utf-8")
    assert load(tmp_path).state.to_dict() == expected


def test_an_event_that_does_not_fit_is_refused_and_not_written(tmp_path: Path) -> None:
    journal = open_journal(tmp_path)
    session(journal, "t1")
    size = (tmp_path / EVENTS_FILE).stat().st_size
    before = journal.state.to_dict()
    bad: list[tuple[str, dict[str, Any]]] = [
        ("SessionCreated", {"thread_id": "t1", "project_name": "app", "tool": "claude"}),
        ("JobStarted", {"job_id": "nope", "tool": "claude"}),
        ("ToolChanged", {"thread_id": "t1", "tool": "Not a tool!"}),  # (agents: any name)
        ("Nonsense", {}),
        ("JobEnqueued", {"thread_id": "t1"}),
    ]
    for kind, payload in bad:
        with pytest.raises(InvalidEvent):
            journal.append(kind, payload)
    assert journal.state.to_dict() == before
    assert (tmp_path / EVENTS_FILE).stat().st_size == size
    assert journal.seq == 1


def test_after_a_failed_write_nothing_more_is_written_and_no_snapshot_lies(
    tmp_path: Path,
) -> None:
    journal = open_journal(tmp_path, every=2)
    session(journal, "t1")
    durable = load(tmp_path).state.to_dict()
    read_only = os.open(tmp_path / EVENTS_FILE, os.O_RDONLY)
    os.dup2(read_only, journal._fd)  # type: ignore[arg-type]  # the disk refuses writes now
    os.close(read_only)
    with pytest.raises(StateError, match="cannot append"):
        session(journal, "t2")
    with pytest.raises(StateError, match="restart the engine"):
        session(journal, "t3")
    journal.snapshot()
    journal.close()
    assert load(tmp_path).state.to_dict() == durable  # t2 never became durable


def test_old_finished_jobs_are_dropped_but_their_messages_stay_deduplicated(
    tmp_path: Path,
) -> None:
    journal = open_journal(tmp_path, keep=2)
    session(journal, "t1")
    for message in ("m1", "m2", "m3"):
        job = enqueue(journal, "t1", message)
        start(journal, job)
        finish(journal, job)
    assert sorted(journal.state.jobs) == ["job_0002", "job_0003"]
    assert journal.state.dedupe["t1:m1"] == "job_0001"
    journal.close()
    assert load(tmp_path, use_snapshot=False, keep_finished=2).state.to_dict() == (
        journal.state.to_dict()
    )


# --------------------------------------------------------------------------------------------
# Random histories


def random_step(journal: Journal, data: st.DataObject, counter: itertools.count[int]) -> None:
    """One random but valid state change, chosen from what the current state allows."""
    state = journal.state
    threads = sorted(state.sessions)
    queued_heads = [
        s.queue[0] for s in state.sessions.values() if s.queue and s.running_job_id is None
    ]
    running = sorted(j.job_id for j in state.running_jobs())
    retryable = sorted(
        j.job_id
        for j in state.jobs.values()
        if j.state in ("failed", "unknown_after_crash") and j.retried_by is None
    )
    options = ["session"]
    if threads:
        options += ["enqueue", "enqueue", "tool"]
    if queued_heads:
        options += ["start", "start"]
    if running:
        options += ["process", "progress", "finish", "finish"]
    if retryable:
        options.append("retry")
    choice = data.draw(st.sampled_from(options))
    if choice == "session":
        session(journal, f"t{next(counter)}", data.draw(st.sampled_from(TOOLS)))
    elif choice == "enqueue":
        enqueue(journal, data.draw(st.sampled_from(threads)), f"m{next(counter)}")
    elif choice == "tool":
        journal.append(
            "ToolChanged",
            {
                "thread_id": data.draw(st.sampled_from(threads)),
                "tool": data.draw(st.sampled_from(TOOLS)),
            },
        )
    elif choice == "start":
        start(journal, data.draw(st.sampled_from(sorted(queued_heads))))
    elif choice == "process":
        job = data.draw(st.sampled_from(running))
        journal.append("JobProcessStarted", {"job_id": job, "pid": next(counter), "start_time": 1})
    elif choice == "progress":
        job = data.draw(st.sampled_from(running))
        journal.append("JobProgress", {"job_id": job, "session_key": f"key{next(counter)}"})
    elif choice == "finish":
        end = data.draw(st.sampled_from(["success", "failed", "unknown_after_crash"]))
        key = data.draw(st.sampled_from([None, f"key{next(counter)}"]))
        finish(journal, data.draw(st.sampled_from(running)), end, key)
    else:
        job = state.jobs[data.draw(st.sampled_from(retryable))]
        enqueue(journal, job.thread_id, f"r{next(counter)}", retry_of=job.job_id)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_rebuilding_from_events_alone_equals_the_snapshot_after_random_histories(
    data: st.DataObject,
) -> None:
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        counter = itertools.count(1)
        every = data.draw(st.integers(min_value=1, max_value=10), label="snapshot every")
        keep = data.draw(st.integers(min_value=1, max_value=5), label="keep finished")
        journal = open_journal(directory, every=every, keep=keep)
        for _ in range(data.draw(st.integers(min_value=0, max_value=60), label="steps")):
            random_step(journal, data, counter)
            if data.draw(st.integers(0, 20), label="restart?") == 0:
                live = journal.state.to_dict()
                journal.close()  # a restart: the state must come back as it was
                journal = open_journal(directory, every=every, keep=keep)
                assert journal.state.to_dict() == live
        live = journal.state.to_dict()
        journal.close()
        assert load(directory, keep_finished=keep).state.to_dict() == live
        assert load(directory, keep_finished=keep, use_snapshot=False).state.to_dict() == live
