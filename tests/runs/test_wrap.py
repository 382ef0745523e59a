"""The job wrapper leads the CLI's process group, records how the CLI ended (so a daemon that is
not its parent can learn it), and passes a SIGTERM aimed at it alone on to the whole group."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from discord_mcp.errors import SpawnError
from discord_mcp.runs.journal.model import ProcessInfo
from discord_mcp.runs.processes.spawner import (
    WRAPPER,
    ProcessSpawner,
    SpawnSpec,
    exit_code_from_status,
    is_alive,
    read_status,
    reap,
)
from tests.runs.conftest import alive
from tests.support.model_server import wait_until


def spec(tmp_path: Path, *argv: str) -> SpawnSpec:
    return SpawnSpec(
        job_id="job_x",
        tool="claude",
        argv=argv,
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "MARK": "explicit-env"},
        stdout_path=tmp_path / "out.log",
        stderr_path=tmp_path / "err.log",
        status_path=tmp_path / "status.json",
    )


def wait_exited(process: ProcessInfo, status: Path) -> int:
    code = wait_until(
        lambda: reap(process.pid) if exit_code_from_status(status) is not None else None,
        timeout=20,
        what="the wrapper to exit",
    )
    return int(code)


def test_the_cli_runs_in_the_project_dir_with_the_given_env_and_files(tmp_path: Path) -> None:
    script = (
        "import os, sys; print(os.getcwd(), os.environ.get('MARK'), os.getpgrp() == os.getppid());"
        "print('to stderr', file=sys.stderr); sys.stdin.read(); raise SystemExit(3)"
    )
    given = spec(tmp_path, sys.executable, "-c", script)
    process = ProcessSpawner().spawn(given)
    assert process.start_time is not None
    assert wait_exited(process, given.status_path) == 3
    assert given.stdout_path.read_text(encoding="utf-8") == f"{tmp_path} explicit-env True\n"
    assert given.stderr_path.read_text(encoding="utf-8") == "to stderr\n"
    status = read_status(given.status_path)
    assert status is not None
    assert (status["state"], status["exit_code"], status["signal"]) == ("exited", 3, None)
    assert status["pgid"] == status["wrapper_pid"] == process.pid
    assert not is_alive(process)


def test_a_sigterm_to_the_wrapper_alone_reaches_the_cli(tmp_path: Path) -> None:
    given = spec(tmp_path, sys.executable, "-c", "import time; time.sleep(60)")
    process = ProcessSpawner().spawn(given)
    status = wait_until(
        lambda: (read_status(given.status_path) or {}).get("cli_pid"),
        timeout=20,
        what="the CLI to start",
    )
    assert is_alive(process)
    os.kill(process.pid, signal.SIGTERM)
    assert wait_exited(process, given.status_path) == 128 + signal.SIGTERM
    recorded = read_status(given.status_path)
    assert recorded is not None
    assert recorded["signal"] == signal.SIGTERM
    assert not alive(int(status))


def test_a_reused_pid_is_not_mistaken_for_the_job(tmp_path: Path) -> None:
    mine = ProcessInfo(os.getpid(), 1, None)  # this process, but not its start time
    assert not is_alive(mine)
    gone = ProcessInfo(2**22 + 12345, None, None)
    assert not is_alive(gone)


def test_a_missing_command_is_reported_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(SpawnError) as caught:
        ProcessSpawner().spawn(spec(tmp_path, "no-such-agent-cli"))
    assert caught.value.code == "E_CLI_NOT_FOUND"


def test_the_wrapper_records_a_command_it_cannot_start(tmp_path: Path) -> None:
    status = tmp_path / "status.json"
    wrapper = [sys.executable, "-I", "-S", str(WRAPPER), "--status", str(status)]
    done = subprocess.run(
        [*wrapper, "--cwd", str(tmp_path), "--", str(tmp_path / "missing")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=30,
        check=False,
    )
    assert done.returncode == 127
    assert done.stdout == ""  # stdout belongs to the CLI's events
    assert "cannot start" in done.stderr
    recorded = json.loads(status.read_text(encoding="utf-8"))
    assert (recorded["state"], recorded["exit_code"]) == ("exited", 127)


def test_the_wrapper_refuses_bad_arguments(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(WRAPPER), "--cwd", str(tmp_path), "--", "true"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "--status" in done.stderr
