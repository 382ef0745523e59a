"""Runs in worktrees of their own (issue 35), with the engine and the scripted fake CLIs: two
runs of one project at once never touch each other's files nor the project's checkout, a
resume works in the same worktree, each turn is committed, and landing is journaled."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs import ProjectRegistry
from discord_mcp.runs.folders.folders import RunFolder, new_run_id
from discord_mcp.runs.git import worktrees
from discord_mcp.runs.journal.journal import load
from discord_mcp.state.files import off_loop
from tests.runs.conftest import EngineFactory
from tests.support.fake_agents import FakeSpawner, RecordingNotifier, Scenario
from tests.support.repos import git, head, make_repo
from tests.support.waiting import until

RACE_WINDOW_S = 2.0
"""How long the first turn's writing waits to see whether a second CLI starts meanwhile."""
PROMPTS = ("first", "second")


@pytest.fixture
def repo(workdir: Path) -> Path:
    return make_repo(workdir, {"same.txt": "from the project\n"})


@pytest.fixture
def with_worktrees(registry: ProjectRegistry, repo: Path) -> ProjectRegistry:
    registry.update("app", worktrees="on")
    return registry


def document(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def written(path: Path) -> dict[str, Any]:
    """The document at ``path`` once it is written (the result follows the job's end)."""
    return document(path) if path.exists() else {}


async def result_at_rest(folder: RunFolder) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        try:
            if document(folder.session)["state"] in ("completed", "failed", "stopped"):
                return document(folder.result)
        except (OSError, ValueError, KeyError):
            return None
        return None

    found: dict[str, Any] = await until(done)
    return found


async def test_two_runs_at_once_write_the_same_file_each_in_its_own_worktree(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    with_worktrees: ProjectRegistry,
    repo: Path,
) -> None:
    gate = repo.parent / "gate"
    for who in ("one", "two"):
        spawner.script(
            f"write {who}",
            Scenario(gate=gate, writes=(("same.txt", f"from run {who}\n"),)),
        )
    before = head(repo)
    async with make_engine() as engine:
        one = await engine.start_session("t1", "app", "claude", run_id=new_run_id(0))
        two = await engine.start_session("t2", "app", "claude", run_id=new_run_id(0))
        jobs = [
            await engine.submit("t1", "m1", "write one", "owner"),
            await engine.submit("t2", "m2", "write two", "owner"),
        ]
        await until(lambda: len(spawner.runs()) == 2)  # both CLIs run at the same time
        gate.write_text("go", encoding="utf-8")
        for job in jobs:
            await notifier.wait_finished(job.job_id)
        results = [
            await result_at_rest(RunFolder.of(engine.state_dir, str(s.run_id))) for s in (one, two)
        ]
    cwds = sorted(run["cwd"] for run in spawner.runs())
    assert cwds == sorted(str(s.workdir) for s in (one, two))
    assert one.workdir != two.workdir
    for who, session, result in zip(("one", "two"), (one, two), results, strict=True):
        assert session.workdir is not None
        assert (Path(session.workdir) / "same.txt").read_text(
            encoding="utf-8"
        ) == f"from run {who}\n"
        assert result["status"] == "completed"
        assert result["worktree"] == session.workdir
        assert result["branch"] == f"discord-mcp/{session.run_id}"
        assert result["base_commit"] == before
        assert result["head_commit"] == head(Path(session.workdir))
        assert result["changes"] == {"files": 1, "insertions": 1, "deletions": 1}
        assert result["landed"] is None
        patch = (RunFolder.of(engine.state_dir, str(session.run_id)).patch).read_text(
            encoding="utf-8"
        )
        assert f"+from run {who}" in patch
    assert (repo / "same.txt").read_text(encoding="utf-8") == "from the project\n"
    assert head(repo) == before
    assert git(repo, "status", "--porcelain") == ""


async def test_a_resumed_run_works_in_the_same_worktree_and_commits_each_turn(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    with_worktrees: ProjectRegistry,
) -> None:
    spawner.script("first", Scenario(writes=(("a.txt", "a\n"),)))
    spawner.script("second", Scenario(sample="claude-resume.jsonl", writes=(("b.txt", "b\n"),)))
    async with make_engine() as engine:
        session = await engine.start_session("t1", "app", "claude", run_id=new_run_id(0))
        for n, prompt in enumerate(("first", "second")):
            job = await engine.submit("t1", f"m{n}", prompt, "owner")
            await notifier.wait_finished(job.job_id)
        folder = RunFolder.of(engine.state_dir, str(session.run_id))
        result = await until(lambda: (r := written(folder.result)) and len(r["turns"]) == 2 and r)
    assert [run["cwd"] for run in spawner.runs()] == [session.workdir, session.workdir]
    assert session.workdir is not None
    log = git(Path(session.workdir), "log", "--format=%s", "-3").splitlines()
    assert log[:2] == ["second", "first"]
    assert result["changes"] == {"files": 2, "insertions": 2, "deletions": 0}


async def test_a_queued_turn_waits_until_the_turn_before_it_is_committed(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    with_worktrees: ProjectRegistry,
) -> None:
    """Two turns queued at once: the second must not start (and write) while the first one's
    work is being committed, or the first commit takes the second turn's files and git runs
    twice at once in one worktree (a CI flake before the fix: the log read first, start)."""
    spawner.script("first", Scenario(writes=(("a.txt", "a\n"),)))
    spawner.script("second", Scenario(sample="claude-resume.jsonl", writes=(("b.txt", "b\n"),)))
    seen_while_recording: list[int] = []

    def not_run(thread_id: str, *_times: object) -> list[dict[str, Any]]:
        # Called (off the loop) while the first turn is written, before its commit: give a
        # second CLI the time to start and write, were it allowed to.
        if not seen_while_recording:
            deadline = time.monotonic() + RACE_WINDOW_S
            while len(spawner.runs()) < 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            seen_while_recording.append(len(spawner.runs()))
        return []

    async with make_engine(not_run=not_run) as engine:
        session = await engine.start_session("t1", "app", "claude", run_id=new_run_id(0))
        jobs = [await engine.submit("t1", f"m{n}", p, "owner") for n, p in enumerate(PROMPTS)]
        for job in jobs:
            await notifier.wait_finished(job.job_id)
        folder = RunFolder.of(engine.state_dir, str(session.run_id))
        await until(lambda: (r := written(folder.result)) and len(r["turns"]) == 2 and r)
    assert seen_while_recording == [1]
    assert session.workdir is not None
    assert git(Path(session.workdir), "log", "--format=%s", "-3").splitlines()[:2] == [
        "second",
        "first",
    ]
    shown = git(Path(session.workdir), "show", "--name-only", "--format=", "HEAD~1")
    assert shown.split() == ["a.txt"]


async def test_a_run_may_ask_for_a_worktree_where_the_project_does_not(
    make_engine: EngineFactory, registry: ProjectRegistry, repo: Path
) -> None:
    async with make_engine() as engine:
        plain = await engine.start_session("t1", "app", "claude")
        own = await engine.start_session("t2", "app", "claude", worktree=True)

    assert plain.workdir is None
    assert own.workdir is not None
    assert Path(own.workdir).is_relative_to(engine.state_dir / "worktrees")


async def test_a_project_that_is_not_a_git_repository_is_refused_not_run_in_place(
    make_engine: EngineFactory, registry: ProjectRegistry, workdir: Path
) -> None:
    await off_loop(registry.update, "app", worktrees="on")
    async with make_engine() as engine:
        with pytest.raises(RunError) as refused:
            await engine.start_session("t1", "app", "claude")
        assert engine.session("t1") is None
    assert refused.value.code == "E_NOT_A_GIT_REPO"
    assert not (engine.state_dir / "worktrees").exists() or not any(
        (engine.state_dir / "worktrees").iterdir()
    )


async def test_merging_is_journaled_and_a_merged_run_takes_no_more_turns(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    with_worktrees: ProjectRegistry,
    repo: Path,
) -> None:
    spawner.script("change it", Scenario(writes=(("same.txt", "changed by the run\n"),)))
    async with make_engine() as engine:
        session = await engine.start_session("t1", "app", "claude", run_id=new_run_id(0))
        job = await engine.submit("t1", "m1", "change it", "owner")
        await notifier.wait_finished(job.job_id)
        done = await engine.land(str(session.run_id), "merge", by="owner", via="test")
        with pytest.raises(RunError) as refused:
            await engine.submit("t1", "m2", "more", "owner")
        landed = engine.session("t1")
    assert done.landed is not None
    assert done.landed["action"] == "merged"
    assert (repo / "same.txt").read_text(encoding="utf-8") == "changed by the run\n"
    assert refused.value.code == "E_RUN_LANDED"
    assert landed is not None
    assert landed.landed == "merged"
    events = [
        json.loads(line)
        for line in (engine.state_dir / "runs" / "events.ndjson")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    landings = [e["payload"] for e in events if e["type"] == "RunLanded"]
    assert landings == [
        {
            "thread_id": "t1",
            "run_id": session.run_id,
            "action": "merged",
            "ok": True,
            "message": done.message,
        }
    ]
    assert load(engine.state_dir / "runs").state.sessions["t1"].landed == "merged"
    result = document(RunFolder.of(engine.state_dir, str(session.run_id)).result)
    assert result["landed"]["action"] == "merged"


async def test_a_run_that_is_still_working_is_not_landed(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    with_worktrees: ProjectRegistry,
    repo: Path,
) -> None:
    gate = repo.parent / "gate"
    spawner.script("slow", Scenario(gate=gate, writes=(("x.txt", "x\n"),)))
    async with make_engine() as engine:
        session = await engine.start_session("t1", "app", "claude", run_id=new_run_id(0))
        job = await engine.submit("t1", "m1", "slow", "owner")
        await until(lambda: spawner.runs())
        with pytest.raises(RunError) as refused:
            await engine.land(str(session.run_id), "discard", by="owner", via="test")
        gate.write_text("go", encoding="utf-8")
        await notifier.wait_finished(job.job_id)
    assert refused.value.code == "E_RUN_BUSY"
    assert session.workdir is not None
    assert Path(session.workdir).exists()


async def test_a_refused_landing_is_journaled_too(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    with_worktrees: ProjectRegistry,
) -> None:
    spawner.script("nothing", Scenario())
    async with make_engine() as engine:
        session = await engine.start_session("t1", "app", "claude", run_id=new_run_id(0))
        job = await engine.submit("t1", "m1", "nothing", "owner")
        await notifier.wait_finished(job.job_id)
        with pytest.raises(RunError) as refused:
            await engine.land(str(session.run_id), "merge", by="owner", via="test")
    assert refused.value.code == "E_NOTHING_TO_MERGE"
    events = [
        json.loads(line)
        for line in (engine.state_dir / "runs" / "events.ndjson")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    landings = [e["payload"] for e in events if e["type"] == "RunLanded"]
    assert [(p["action"], p["ok"]) for p in landings] == [("merged", False)]
    assert worktrees.load(engine.state_dir, str(session.run_id)) is not None
