"""Exactly one holder per state directory; a dead holder's lock is free at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from discord_mcp.relay.holder import (
    HolderLock,
    HolderStatus,
    clear_preference,
    preferred_pid,
    read_status,
    write_preference,
    write_status,
)

HOLD = """
import sys, time
from pathlib import Path
from discord_mcp.relay.holder import HolderLock
lock = HolderLock(Path(sys.argv[1]))
assert lock.try_acquire()
print("held", flush=True)
time.sleep(600)
"""


def test_a_second_lock_in_another_process_fails_until_the_holder_is_killed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "holder.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True, encoding="utf-8"
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        mine = HolderLock(path)
        assert not mine.try_acquire()
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)
        deadline = time.monotonic() + 5
        while not mine.try_acquire():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert mine.held
        mine.release()
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=10)
        if holder.stdout is not None:
            holder.stdout.close()


def test_status_round_trips_and_tells_connected_from_stale(tmp_path: Path) -> None:
    path = tmp_path / "status.json"
    assert read_status(path) is None
    status = HolderStatus(
        pid=os.getpid(),
        program="discord-mcp",
        state="ready",
        alive_at=1000.0,
        session_id="abc",
        seq=42,
        resume_url="ws://x",
    )
    write_status(path, status)
    assert read_status(path) == status
    assert status.connected(1005.0)
    assert not status.connected(1100.0)
    assert status.resumable(1050.0)
    assert not HolderStatus(pid=999_999_999, program="x", state="ready", alive_at=0).connected(1)


def test_the_preference_names_a_live_other_process_only(tmp_path: Path) -> None:
    path = tmp_path / "prefer.json"
    write_preference(path, "discord-watch")
    assert preferred_pid(path) is None  # it is us
    clear_preference(path)
    assert not path.exists()
