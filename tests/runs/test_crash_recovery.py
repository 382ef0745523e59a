"""Crash recovery for real: the engine runs in another process (tests/support/run_driver.py),
is killed with SIGKILL while a job runs, and a new engine picks the job up: reattached while
its CLI still runs, completed from its log when the CLI finished meanwhile, and
``unknown_after_crash`` (then retried on request) only when the CLI died without a result."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.runs import ProjectRegistry, SpawnSpec
from discord_mcp.runs.journal.journal import Journal
from discord_mcp.runs.processes.runner import JobPaths
from discord_mcp.runs.processes.spawner import read_status
from tests.runs.conftest import EngineFactory, alive
from tests.support.fake_agents import FakeSpawner, RecordingNotifier, Scenario
from tests.support.model_server import wait_until

REPO = Path(__file__).resolve().parents[2]


class Daemon:
    """The driver process, with its notices file."""

    def __init__(self, tmp_path: Path, state_dir: Path, gate: Path) -> None:
        self.notices = tmp_path / "driver-notices.jsonl"
        config = {
            "state_dir": str(state_dir),
            "root": str(tmp_path),
            "project": "app",
            "fake_dir": str(tmp_path / "fake"),
            "notices": str(self.notices),
            "thread": "t1",
            "prompts": ["long job"],
            "scenarios": {"long job": {"gate": str(gate), "sample": "claude-mcp.jsonl"}},
        }
        path = tmp_path / "driver.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.run_driver", str(path)],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
        )

    def events(self) -> list[dict[str, Any]]:
        try:
            text = self.notices.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text[: text.rfind("\n") + 1].splitlines()]

    def started(self) -> dict[str, Any] | None:
        found = [e for e in self.events() if e["method"] == "job_started"]
        return found[0] if found else None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)


@pytest.fixture
def gate(tmp_path: Path) -> Path:
    return tmp_path / "gate"


@pytest.fixture
def daemon(
    tmp_path: Path, state_dir: Path, registry: ProjectRegistry, gate: Path, spawner: FakeSpawner
) -> Iterator[Daemon]:
    # ``registry`` first: the project must exist before the daemon reads the catalog.
    daemon = Daemon(tmp_path, state_dir, gate)
    try:
        yield daemon
    finally:
        daemon.kill()
        gate.touch()  # let a fake CLI still waiting finish
        for run in spawner.runs():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(run["pgid"], signal.SIGKILL)


def reconciliation(state_dir: Path) -> list[dict[str, Any]]:
    """The lines of ``logs/reconciliation.log`` (the CodeBridge seed's place for them)."""
    path = state_dir / "logs" / "reconciliation.log"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def crash_while_running(daemon: Daemon, spawner: FakeSpawner) -> tuple[dict[str, Any], int]:
    """Wait until the daemon runs the job, then kill -9 it; (the fake CLI's run, wrapper pid)."""
    started = wait_until(daemon.started, timeout=30, what="the job to start in the daemon")
    [run] = wait_until(spawner.runs, timeout=30, what="the fake CLI to start")
    daemon.kill()
    assert alive(run["pid"])  # the CLI outlives the daemon
    return run, int(started["pid"])


async def test_a_job_whose_cli_still_runs_is_reattached(
    daemon: Daemon,
    state_dir: Path,
    spawner: FakeSpawner,
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    gate: Path,
) -> None:
    _, wrapper = crash_while_running(daemon, spawner)
    async with make_engine() as engine:
        [started] = await notifier.wait_for(lambda: notifier.of("job_started"))
        assert started.job.reattached
        assert started.job.pid == wrapper
        gate.touch()
        done = await notifier.wait_finished(started.job.job_id)
        assert done.state == "success"
        assert done.final_text == "tool said: A (is_error=False)"
        assert done.exit_code == 0  # from the wrapper's status file: not our child
        assert engine.session("t1").resume_ready  # type: ignore[union-attr]
        run_id = engine.session("t1").run_id  # type: ignore[union-attr]
    assert len(spawner.runs()) == 1  # nothing ran twice
    [line] = reconciliation(state_dir)
    assert (line["action"], line["job_id"], line["pid"]) == (
        "reattached",
        started.job.job_id,
        wrapper,
    )
    assert (line["thread_id"], line["run_id"]) == ("t1", run_id)


async def test_a_job_whose_cli_finished_meanwhile_is_completed_from_its_log(
    daemon: Daemon,
    state_dir: Path,
    spawner: FakeSpawner,
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    gate: Path,
) -> None:
    _, wrapper = crash_while_running(daemon, spawner)
    gate.touch()
    wait_until(lambda: not alive(wrapper), timeout=30, what="the orphaned CLI to finish")
    async with make_engine() as engine:
        [finished] = await notifier.wait_for(lambda: notifier.of("job_finished"))
        assert finished.job.state == "success"
        assert finished.job.final_text == "tool said: A (is_error=False)"
        assert finished.job.exit_code == 0
        assert not notifier.of("job_started")
        view = engine.session("t1")
        assert view is not None
        assert (view.state, view.resume_ready) == ("idle", True)
    assert len(spawner.runs()) == 1
    [line] = reconciliation(state_dir)
    assert (line["action"], line["job_id"], line["state"], line["error_code"]) == (
        "completed",
        finished.job.job_id,
        "success",
        None,
    )


async def test_a_job_whose_cli_died_without_a_result_is_unknown_and_can_be_retried(
    daemon: Daemon,
    state_dir: Path,
    spawner: FakeSpawner,
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
) -> None:
    run, wrapper = crash_while_running(daemon, spawner)
    os.killpg(run["pgid"], signal.SIGKILL)  # the machine took the CLI down too
    wait_until(lambda: not alive(wrapper), timeout=30, what="the wrapper to die")
    # (Members of the group may still be on their way out: the engine must not care.)
    async with make_engine() as engine:
        [finished] = await notifier.wait_for(lambda: notifier.of("job_finished"))
        lost = finished.job
        assert lost.state == "unknown_after_crash"
        assert lost.error_code == "E_UNKNOWN_AFTER_CRASH"
        assert "retry" in (lost.error_message or "")
        assert len(spawner.runs()) == 1  # nothing was rerun on its own
        view = engine.session("t1")
        assert view is not None
        assert (view.state, view.retry_job_id) == ("unknown_after_crash", lost.job_id)
        [line] = reconciliation(state_dir)
        assert (line["action"], line["job_id"], line["error_code"]) == (
            "unknown_after_crash",
            lost.job_id,
            "E_UNKNOWN_AFTER_CRASH",
        )

        spawner.script("long job", Scenario(sample="claude-mcp.jsonl"))
        retry = await engine.retry("t1", lost.job_id)
        done = await notifier.wait_finished(retry.job_id)
        assert (done.state, done.attempt, done.retry_of) == ("success", 2, lost.job_id)
    assert len(spawner.runs()) == 2


async def test_a_cli_started_just_before_the_crash_is_found_through_its_wrapper(
    tmp_path: Path,
    state_dir: Path,
    workdir: Path,
    registry: ProjectRegistry,
    spawner: FakeSpawner,
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    gate: Path,
) -> None:
    # The daemon journaled JobStarted and spawned the CLI, then died before JobProcessStarted.
    journal = Journal(state_dir / "runs", wall_clock=time.time, monotonic=time.monotonic)
    journal.open()
    journal.append("SessionCreated", {"thread_id": "t1", "project_name": "app", "tool": "claude"})
    enqueued = {"thread_id": "t1", "message_id": "m1", "author": "owner", "attempt": 1}
    journal.append(
        "JobEnqueued",
        {**enqueued, "job_id": "job_1", "number": 1, "prompt": "p", "dedupe_key": "t1:m1"},
    )
    journal.append("JobStarted", {"job_id": "job_1", "tool": "claude", "resume_key": None})
    journal.close()
    paths = JobPaths.for_job(state_dir, "job_1")
    for directory in (paths.job_dir, paths.stdout.parent):
        directory.mkdir(parents=True)
    spawner.script("p", Scenario(gate=gate))
    spec = SpawnSpec(
        job_id="job_1",
        tool="claude",
        argv=("claude", "-p", "--", "p"),
        cwd=workdir,
        env={"PATH": "/usr/bin:/bin"},
        stdout_path=paths.stdout,
        stderr_path=paths.stderr,
        status_path=paths.status,
    )
    process = spawner.spawn(spec)
    wait_until(lambda: read_status(paths.status), timeout=30, what="the wrapper to start")
    async with make_engine() as engine:
        [started] = await notifier.wait_for(lambda: notifier.of("job_started"))
        assert (started.job.job_id, started.job.reattached, started.job.pid) == (
            "job_1",
            True,
            process.pid,
        )
        gate.touch()
        done = await notifier.wait_finished("job_1")
        assert done.state == "success"
        assert engine.session("t1").resume_ready  # type: ignore[union-attr]


async def test_a_reattached_cli_that_then_dies_without_a_word_is_unknown(
    spawner: FakeSpawner,
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
) -> None:
    spawner.script("long", Scenario(hang=True))
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "long", "owner")
        [run] = await notifier.wait_for(spawner.runs)
    os.kill(run["pgid"], signal.SIGKILL)  # the wrapper alone: its CLI is still at work
    wait_until(lambda: not alive(run["pgid"]), timeout=10, what="the wrapper to die")
    again = RecordingNotifier()
    async with make_engine(notifier=again) as engine:
        [started] = await again.wait_for(lambda: again.of("job_started", job.job_id))
        assert started.job.reattached  # found through the rest of its process group
        os.kill(run["pid"], signal.SIGKILL)
        done = await again.wait_finished(job.job_id)
    assert (done.state, done.error_code) == ("unknown_after_crash", "E_UNKNOWN_AFTER_CRASH")
