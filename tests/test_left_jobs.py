"""The suite's own hygiene (tests/support/left_jobs.py): a job a test left running ends with
the test, and nothing but that job's process group is ever signalled."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from discord_mcp.runs.processes.spawner import WRAPPER
from tests.support.left_jobs import end_left_jobs
from tests.support.model_server import wait_until


def _job(home: Path, name: str) -> Path:
    folder = home / "runs" / "jobs" / name
    folder.mkdir(parents=True)
    return folder / "status.json"


def test_a_job_left_running_is_ended_with_its_group(tmp_path: Path) -> None:
    status = _job(tmp_path / "home", "job_1")
    argv = [sys.executable, "-I", "-S", str(WRAPPER), "--status", str(status)]
    wrapper = subprocess.Popen(  # the wrapper leads its own group, as the spawner starts it
        [*argv, "--cwd", str(tmp_path), "--", "sleep", "600"],
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_until(
        lambda: status.exists() and '"running"' in status.read_text("utf-8"),
        timeout=30,
        what="the job running",
    )
    cli = int(json.loads(status.read_text("utf-8"))["cli_pid"])

    assert end_left_jobs(tmp_path) == [wrapper.pid]

    assert wrapper.wait(timeout=30) != 0
    wait_until(lambda: not Path(f"/proc/{cli}").exists(), timeout=30, what="the CLI ended")


def test_a_status_naming_another_program_is_left_alone(tmp_path: Path) -> None:
    other = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        status = _job(tmp_path / "home", "job_1")
        record = {"version": 1, "wrapper_pid": other.pid, "pgid": other.pid, "state": "running"}
        status.write_text(json.dumps(record), encoding="utf-8")
        assert end_left_jobs(tmp_path) == []
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
