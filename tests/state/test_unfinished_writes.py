"""Temporary files of state writes do not pile up (issue 38): one left by a process killed
mid-write is removed at the next start of discord-watch (or of the gateway holder), once it is
older than a minute and its writer is gone, and the start says how many it removed. A write
under way, a young file and anything that is not ours are left alone."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from discord_mcp.emulator import RunningEmulator
from discord_mcp.server.runtime import Runtime
from discord_mcp.state import files
from discord_mcp.state.files import sweep_unfinished_writes
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.watch.upkeep import upkeep
from tests.support.settings import settings_for
from tests.support.waiting import until

KILLED_MID_WRITE = """
import os, signal, sys, threading, time
from pathlib import Path
from discord_mcp.state.files import write_bytes

target = Path(sys.argv[1])
def write():
    while True:
        write_bytes(target, b"x" * 64 * 1024 * 1024)
threading.Thread(target=write, daemon=True).start()
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    if any(n.endswith(".tmp") for n in os.listdir(target.parent)):
        os.kill(os.getpid(), signal.SIGKILL)  # in the middle of the write
    time.sleep(0.001)
"""


def killed_mid_write(target: Path) -> Path:
    """The temporary file a process left when it was killed while writing ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE, str(target)], timeout=90)
    assert done.returncode == -9
    [left] = [p for p in target.parent.iterdir() if p.name.endswith(".tmp")]
    return left


def test_a_write_killed_midway_leaves_a_file_the_next_start_removes(tmp_path: Path) -> None:
    left = killed_mid_write(tmp_path / "decisions" / "20261122-160000-abcdef.json")
    assert left.name.startswith(".20261122-160000-abcdef.json.w")  # it names its writer

    assert sweep_unfinished_writes(tmp_path) == 0  # younger than a minute: left alone
    assert sweep_unfinished_writes(tmp_path, now=time.time() + 61) == 1
    assert not left.exists()


def test_a_write_under_way_and_what_is_not_ours_are_left_alone(tmp_path: Path) -> None:
    later = time.time() + 3600 * 2
    mine = tmp_path / "inbox" / f".items.json.{files._writer()}.abcd_123.tmp"  # this process
    mine.parent.mkdir()
    mine.write_bytes(b"half")
    worktree = tmp_path / "worktrees" / "run_20261122_160000_abcdef"
    worktree.mkdir(parents=True)
    project_file = worktree / ".cache.w1-1.abcd_123.tmp"  # a project's file, not ours to judge
    project_file.write_bytes(b"")
    other = tmp_path / "runs" / "notes.tmp"  # not a temporary file's name of ours
    other.parent.mkdir()
    other.write_bytes(b"")
    assert sweep_unfinished_writes(tmp_path, now=later) == 0
    assert mine.exists()
    assert project_file.exists()
    assert other.exists()


def test_a_temporary_file_of_a_dead_writer_or_an_old_version_goes(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True, encoding="utf-8")  # fmt: skip
    pid = int(dead.stdout)
    gone = tmp_path / "watch" / f".cursors.json.w{pid}-12345.abcd_123.tmp"
    gone.parent.mkdir()
    gone.write_bytes(b"")
    reused = tmp_path / "watch" / f".alive.json.w{os.getpid()}-1.abcd_123.tmp"  # pid reused
    reused.write_bytes(b"")
    old = tmp_path / "watch" / ".roster.json.k2j3_x9q.tmp"  # named before files named writers
    old.write_bytes(b"")
    assert sweep_unfinished_writes(tmp_path, now=time.time() + 120) == 2
    assert old.exists()  # no writer named: only after an hour
    assert sweep_unfinished_writes(tmp_path, now=time.time() + 3700) == 1
    assert list((tmp_path / "watch").iterdir()) == []


async def test_discord_watch_says_at_start_how_many_it_removed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    left = killed_mid_write(tmp_path / "runs" / "snapshot.json")
    past = time.time() - 120
    os.utime(left, (past, past))
    caplog.set_level(logging.INFO, logger="discord_mcp")
    task = asyncio.create_task(
        upkeep(tmp_path, {}, ready=asyncio.Event(), wall=time.time)  # never ready: no runs
    )
    try:
        await until(lambda: not left.exists(), what="the leftover removed")
    finally:
        task.cancel()
    assert any("discord-watch removed 1 temporary file" in r.getMessage() for r in caplog.records)


async def test_the_gateway_holder_removes_them_when_it_starts_holding(
    discord: RunningEmulator, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    left = killed_mid_write(home / "gateway" / "status.json")
    past = time.time() - 120
    os.utime(left, (past, past))
    caplog.set_level(logging.INFO, logger="discord_mcp")
    runtime = Runtime(settings_for(discord, home), environ={})
    task = asyncio.create_task(runtime.run_background())
    try:
        await until(lambda: not left.exists(), what="the leftover removed")
        assert runtime.link is not None
        assert runtime.link.holding.is_set()
    finally:
        await cancel_and_wait(task, within=10)
        await runtime.aclose()
    said = [r.getMessage() for r in caplog.records]
    assert any("the gateway holder removed 1 temporary file" in m for m in said)


def leftover_of_a_dead_writer(directory: Path) -> Path:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True, encoding="utf-8")  # fmt: skip
    directory.mkdir(parents=True, exist_ok=True)
    left = directory / f".result.json.w{int(dead.stdout)}-12345.abcd_123.tmp"
    left.write_bytes(b"")
    past = time.time() - 120
    os.utime(left, (past, past))
    return left


async def test_a_start_leaves_the_archives_to_the_daily_sweep_so_it_walks_no_year_of_files(
    tmp_path: Path,
) -> None:
    archived = [
        leftover_of_a_dead_writer(tmp_path / "decisions" / "done" / "2026-01"),
        leftover_of_a_dead_writer(tmp_path / "runs" / "run_20260101_000000_abcdef" / "logs"),
        leftover_of_a_dead_writer(tmp_path / "runs" / "retired" / "68"),  # retired sessions
    ]
    hot = leftover_of_a_dead_writer(tmp_path / "runs")
    assert sweep_unfinished_writes(tmp_path, archives=False) == 1
    assert not hot.exists()
    assert all(path.exists() for path in archived)

    ready = asyncio.Event()
    ready.set()
    task = asyncio.create_task(upkeep(tmp_path, {}, ready=ready, wall=time.time, every=0.05))
    try:  # the start's sweep, then "a day later" the archives too
        await until(lambda: not any(path.exists() for path in archived), what="archives swept")
    finally:
        await cancel_and_wait(task, within=10)
