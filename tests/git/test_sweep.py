"""``discord-watch gc`` (issue 35): abandoned worktrees go, work is never lost without
``--force``, and a run that is working or young is left alone."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.runs.folders.folders import RunFolder
from discord_mcp.runs.git import sweep, worktrees
from discord_mcp.runs.journal.model import utc_iso
from discord_mcp.watch.cli import main as watch_main
from tests.support.repos import commit, git, make_repo

DAY = 86400.0
NOW = 1_780_000_000.0
OLD = "run_20260101_120000_aaaaaa"
YOUNG = "run_20260101_120001_bbbbbb"


async def a_run(
    home: Path, project: Path, run_id: str, *, active: float, state: str = "completed"
) -> dict[str, Any]:
    """A run with a worktree, last active at ``active`` (epoch seconds), its session ``state``."""
    record = await worktrees.create(
        home, run_id, project="app", project_path=project, now=utc_iso(active)
    )
    folder = RunFolder.of(home, run_id)
    folder.write(
        folder.session,
        {
            "run_id": run_id,
            "engine": "claude",
            "session_id": None,
            "state": state,
            "pid": None,
            "created_at": utc_iso(active),
            "last_active_at": utc_iso(active),
        },
    )
    return record


async def test_an_abandoned_worktree_without_work_goes_and_a_young_one_stays(
    tmp_path: Path,
) -> None:
    project = make_repo(tmp_path / "app")
    home = tmp_path / "home"
    old = await a_run(home, project, OLD, active=NOW - 20 * DAY)
    young = await a_run(home, project, YOUNG, active=NOW - 2 * DAY)

    done = await sweep.sweep(home, older_than=14 * DAY, now=NOW)

    assert [(s.run_id, s.outcome) for s in done] == [(OLD, "removed"), (YOUNG, "kept")]
    assert not Path(old["path"]).exists()
    assert Path(young["path"]).exists()
    assert git(project, "branch", "--list", f"discord-mcp/{OLD}") == ""
    record = worktrees.load(home, OLD) or {}
    assert record["landed"]["action"] == "discarded"
    assert record["landed"]["by"] == "gc"


async def test_a_worktree_with_unmerged_commits_is_kept_unless_forced(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "app")
    home = tmp_path / "home"
    record = await a_run(home, project, OLD, active=NOW - 20 * DAY)
    commit(Path(record["path"]), {"work.txt": "work\n"}, "the agent's work")

    kept = await sweep.sweep(home, older_than=14 * DAY, now=NOW)
    forced = await sweep.sweep(home, older_than=14 * DAY, now=NOW, force=True)

    assert [(s.outcome, s.reason) for s in kept] == [
        ("kept", "1 commit not merged (--force removes it)")
    ]
    assert [s.outcome for s in forced] == ["removed"]
    assert not Path(record["path"]).exists()


async def test_uncommitted_changes_keep_a_worktree_too(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "app")
    home = tmp_path / "home"
    record = await a_run(home, project, OLD, active=NOW - 20 * DAY)
    (Path(record["path"]) / "draft.txt").write_text("draft\n", encoding="utf-8")

    done = await sweep.sweep(home, older_than=14 * DAY, now=NOW)

    assert [(s.outcome, s.reason) for s in done] == [
        ("kept", "uncommitted changes (--force removes it)")
    ]
    assert (Path(record["path"]) / "draft.txt").exists()


async def test_a_merged_worktree_is_not_work_to_keep(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "app")
    home = tmp_path / "home"
    record = await a_run(home, project, OLD, active=NOW - 20 * DAY)
    work = commit(Path(record["path"]), {"work.txt": "work\n"}, "the agent's work")
    git(project, "merge", "-q", "--ff-only", work)

    done = await sweep.sweep(home, older_than=14 * DAY, now=NOW)

    assert [s.outcome for s in done] == ["removed"]


async def test_a_running_run_is_never_touched(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "app")
    home = tmp_path / "home"
    record = await a_run(home, project, OLD, active=NOW - 20 * DAY, state="running")

    done = await sweep.sweep(home, older_than=14 * DAY, now=NOW, force=True)

    assert [(s.outcome, s.reason) for s in done] == [("in_use", "the run is running")]
    assert Path(record["path"]).exists()


async def test_a_dry_run_removes_nothing(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "app")
    home = tmp_path / "home"
    record = await a_run(home, project, OLD, active=NOW - 20 * DAY)

    done = await sweep.sweep(home, older_than=14 * DAY, now=NOW, dry_run=True)

    assert [s.outcome for s in done] == ["removed"]
    assert "dry run" in done[0].reason
    assert Path(record["path"]).exists()
    assert (worktrees.load(home, OLD) or {})["landed"] is None


def test_the_gc_command_reports_each_worktree_as_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_repo(tmp_path / "app")
    home = tmp_path / "home"
    monkeypatch.setenv("DISCORD_MCP_HOME", str(home))
    asyncio.run(a_run(home, project, OLD, active=0.0))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = watch_main(["gc", "--older-than", "14d", "--json"])
    bad = io.StringIO()
    with contextlib.redirect_stderr(bad):
        refused = watch_main(["gc", "--older-than", "soon"])

    assert code == 0
    document = json.loads(out.getvalue())
    assert document["ok"] is True
    assert [(w["run_id"], w["outcome"]) for w in document["worktrees"]] == [(OLD, "removed")]
    assert refused == 2
    assert "E_BAD_ARGUMENTS" in bad.getvalue()
