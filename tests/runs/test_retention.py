"""Run folders do not pile up (issue 38): ``DISCORD_MCP_KEEP_RUNS`` keeps the newest runs and
the recently active ones, ``discord-watch gc`` and the daemon remove the rest and say so, and
a run that is running, waiting, being landed or holding a worktree is never removed. The engine
starts and compacts its journal as before when folders are gone (test_removed_folders.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.errors import ConfigError
from discord_mcp.runs.folders.folders import RunFolder, new_run_id
from discord_mcp.runs.folders.results import not_started
from discord_mcp.runs.folders.retention import KeepRuns, keep_runs, sweep_runs
from discord_mcp.runs.journal.journal import Journal
from discord_mcp.runs.journal.model import utc_iso
from discord_mcp.state.leases import try_exclusive
from discord_mcp.watch import cli
from discord_mcp.watch.gc import RUN_KEEPERS
from discord_mcp.watch.upkeep import upkeep
from tests.git.test_sweep import a_run
from tests.support.repos import commit, make_repo
from tests.support.waiting import until

DAY = 86400.0
NOW = 1_790_000_000.0  # 2026-09-21


def iso(moment: float) -> str:
    return utc_iso(moment)


def run_folder(home: Path, age_days: float, state: str = "completed", n: int = 0) -> RunFolder:
    """A run folder as the recorder leaves it, last active ``age_days`` ago."""
    made = NOW - age_days * DAY
    folder = RunFolder.of(home, new_run_id(made - n))
    folder.make()
    session = {"run_id": folder.run_id, "engine": "claude", "session_id": None, "state": state}
    times = {"pid": None, "created_at": iso(made), "last_active_at": iso(made)}
    folder.write(folder.session, {**session, **times})
    if state in ("completed", "failed", "stopped"):
        folder.write(folder.result, not_started(folder.run_id, {"engine": "claude"}, made))
    return folder


def names(found: list[Any], outcome: str) -> list[str]:
    return sorted(s.run_id for s in found if s.outcome == outcome)


@pytest.mark.parametrize(
    ("text", "count", "days"),
    [("500,90d", 500, 90), ("500", 500, None), ("90d", None, 90), (" 20 , 7d ", 20, 7)],
)
def test_the_policy_is_a_count_and_or_an_age(text: str, count: int, days: int | None) -> None:
    policy = KeepRuns.parse(text)
    assert policy.count == count
    assert policy.age_s == (days * DAY if days else None)
    assert keep_runs({}) == KeepRuns(500, 90 * DAY)
    assert KeepRuns.parse("all").keeps_all


@pytest.mark.parametrize("text", ["0", "-5", "90x", "500,600", "forever", "1d,2d"])
def test_a_policy_that_means_nothing_is_refused_with_how_to_write_it(text: str) -> None:
    with pytest.raises(ConfigError) as refused:
        keep_runs({"DISCORD_MCP_KEEP_RUNS": text})
    assert "DISCORD_MCP_KEEP_RUNS" in str(refused.value)
    assert "500,90d" in str(refused.value)


def test_a_folder_goes_once_neither_the_count_nor_the_age_keeps_it(tmp_path: Path) -> None:
    newest = [run_folder(tmp_path, 200, n=n) for n in range(3)]  # old, but the newest three
    recent = run_folder(tmp_path, 5, n=10)  # the newest of all
    old = [run_folder(tmp_path, 300 + n) for n in range(4)]
    found = sweep_runs(tmp_path, KeepRuns(count=3, age_s=90 * DAY), now=NOW)
    assert names(found, "removed") == sorted(f.run_id for f in [*newest[2:], *old])
    for folder in [recent, *newest[:2]]:
        assert folder.root.is_dir()
    for folder in [*newest[2:], *old]:
        assert not folder.root.exists()
    assert all(s.reason.endswith("(DISCORD_MCP_KEEP_RUNS)") for s in found)


def test_a_run_that_runs_waits_or_is_being_landed_is_never_removed(tmp_path: Path) -> None:
    running = run_folder(tmp_path, 400, state="running", n=1)
    stopping = run_folder(tmp_path, 400, state="stopping", n=2)
    landing = run_folder(tmp_path, 400, n=3)
    held = try_exclusive(landing.root / "landing.lock")
    queued = run_folder(tmp_path, 400, n=4)  # at rest on disk, a job queued in the journal
    journal = Journal(tmp_path / "runs", wall_clock=lambda: NOW, monotonic=lambda: 0.0)
    journal.open()
    journal.append(
        "SessionCreated",
        {"thread_id": "t1", "project_name": "app", "tool": "claude", "run_id": queued.run_id},
    )
    journal.append(
        "JobEnqueued",
        {
            "job_id": "job_0001",
            "number": 1,
            "thread_id": "t1",
            "message_id": "m1",
            "author": "owner",
            "prompt": "go on",
            "attempt": 1,
            "retry_of": None,
            "dedupe_key": "t1:m1",
        },
    )
    journal.close()
    gone = run_folder(tmp_path, 400, n=5)
    try:
        found = sweep_runs(tmp_path, KeepRuns(count=None, age_s=DAY), now=NOW, keepers=RUN_KEEPERS)
    finally:
        assert held is not None
        held.release()
    assert names(found, "removed") == [gone.run_id]
    why = {s.run_id: s.reason for s in found if s.outcome == "kept"}
    assert why == {
        running.run_id: "the run is running",
        stopping.run_id: "the run is stopping",
        landing.run_id: "a Merge, Open PR or Discard is under way",
        queued.run_id: "its session has a job running or queued",
    }


def test_a_run_whose_worktree_holds_unmerged_work_is_never_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_repo(tmp_path / "app")
    home = tmp_path / "home"
    idle = NOW - 400 * DAY
    working = asyncio.run(a_run(home, project, "run_20250801_120000_aaaaaa", active=idle))
    commit(Path(working["path"]), {"work.txt": "the agent's work\n"}, "work")
    asyncio.run(a_run(home, project, "run_20250801_120001_bbbbbb", active=idle))
    monkeypatch.setenv("DISCORD_MCP_HOME", str(home))
    monkeypatch.setenv("DISCORD_MCP_KEEP_RUNS", "30d")

    assert cli.main(["gc", "--json"]) == 0  # worktrees first, then the run folders
    body = json.loads(capsys.readouterr().out)

    assert [(s["run_id"][-6:], s["outcome"]) for s in body["worktrees"]] == [
        ("aaaaaa", "kept"),
        ("bbbbbb", "removed"),
    ]
    assert [(s["run_id"][-6:], s["outcome"]) for s in body["runs"]] == [
        ("bbbbbb", "removed"),
        ("aaaaaa", "kept"),
    ]
    assert "worktree is still there" in body["runs"][1]["why"]
    assert RunFolder.of(home, working["run_id"]).root.is_dir()
    assert Path(working["path"]).is_dir()
    assert not RunFolder.of(home, "run_20250801_120001_bbbbbb").root.exists()


def test_gc_says_what_it_would_remove_and_then_removes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    old = [run_folder(tmp_path, 100 + n, n=n) for n in range(3)]
    new = run_folder(tmp_path, 1, n=9)
    monkeypatch.setenv("DISCORD_MCP_HOME", str(tmp_path))
    monkeypatch.setenv("DISCORD_MCP_KEEP_RUNS", "1,30d")

    assert cli.main(["gc", "--dry-run"]) == 0
    said = capsys.readouterr().out
    for folder in old:
        assert f"removed {folder.run_id} (runs): " in said
        assert folder.root.is_dir()
    assert "would remove: 0 worktrees, 3 runs" in said

    assert cli.main(["gc", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert sorted(r["run_id"] for r in body["runs"]) == sorted(f.run_id for f in old)
    assert all(not f.root.exists() for f in old)
    assert new.root.is_dir()


async def test_the_daemon_removes_old_run_folders_once_ready_and_says_which(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old = run_folder(tmp_path, 10)
    new = run_folder(tmp_path, 1, n=1)
    ready = asyncio.Event()
    caplog.set_level("INFO", logger="discord_mcp")
    task = asyncio.create_task(
        upkeep(tmp_path, {"DISCORD_MCP_KEEP_RUNS": "7d"}, ready=ready, wall=lambda: NOW)
    )

    def said(words: str) -> bool:
        return any(words in r.getMessage() for r in caplog.records)

    try:
        await until(lambda: said("temporary files"))  # it started, and waits to be ready
        assert old.root.is_dir()
        ready.set()
        await until(lambda: said(f"removed 1 old run folder: {old.run_id}"))
    finally:
        task.cancel()
    assert not old.root.exists()
    assert new.root.is_dir()
