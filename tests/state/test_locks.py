"""State locks never freeze an event loop, never wait forever, and liveness survives kill -9."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from discord_mcp.errors import StateBusy
from discord_mcp.state.files import locked, off_loop, read_json, write_json
from discord_mcp.state.leases import ProcessLease, acquire_shared, lease_alive, try_exclusive
from discord_mcp.state.quarantine import find_quarantined, quarantine, take_reports


async def test_a_lock_taken_on_the_event_loop_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="event loop"), locked(tmp_path / "x.json"):
        pass


async def test_off_loop_runs_a_locked_read_modify_write_while_the_loop_keeps_going(
    tmp_path: Path,
) -> None:
    path = tmp_path / "counter.json"
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with locked(path):
            taken.set()
            release.wait(10)

    def bump() -> int:
        with locked(path):
            count = (read_json(path, max_version=1) or {"count": 0})["count"] + 1
            write_json(path, {"version": 1, "count": count})
            return int(count)

    holder = threading.Thread(target=hold)
    holder.start()
    assert taken.wait(5)
    bumping = asyncio.ensure_future(off_loop(bump))
    ticks = 0
    while ticks < 20:  # the loop is free while the bump waits for the lock
        await asyncio.sleep(0.005)
        ticks += 1
    assert not bumping.done()
    release.set()
    assert await asyncio.wait_for(bumping, 10) == 1
    holder.join(5)


def test_a_lock_held_too_long_is_a_sentence_not_a_hang(tmp_path: Path) -> None:
    path = tmp_path / "busy.json"
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with locked(path):
            taken.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert taken.wait(5)
        with pytest.raises(StateBusy, match="stayed locked"), locked(path, wait=0.2):
            pass
    finally:
        release.set()
        holder.join(5)


def test_two_quarantines_in_the_same_second_keep_both_files(tmp_path: Path) -> None:
    take_reports()
    first = tmp_path / "inbox.json"
    first.write_text("first", encoding="utf-8")
    moved_first = quarantine(first, "bad")
    first.write_text("second", encoding="utf-8")
    moved_second = quarantine(first, "bad again")
    assert moved_first is not None
    assert moved_second is not None
    assert moved_first != moved_second
    assert moved_first.read_text(encoding="utf-8") == "first"
    assert moved_second.read_text(encoding="utf-8") == "second"
    assert [r.moved_to for r in take_reports()] == [str(moved_first), str(moved_second)]
    assert take_reports() == []
    assert find_quarantined(tmp_path) == sorted([moved_first, moved_second])


def test_a_lease_is_alive_while_its_process_is_even_after_kill_9(tmp_path: Path) -> None:
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from discord_mcp.state.leases import ProcessLease\n"
        "lease = ProcessLease(Path(sys.argv[1]))\n"
        "print(lease.name, flush=True)\n"
        "time.sleep(60)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    try:
        assert child.stdout is not None
        name = child.stdout.readline().strip()
        assert lease_alive(tmp_path, name)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
        assert not lease_alive(tmp_path, name)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        if child.stdout is not None:
            child.stdout.close()
    own = ProcessLease(tmp_path)
    assert lease_alive(tmp_path, own.name)
    own.close()
    assert not lease_alive(tmp_path, own.name)
    assert not lease_alive(tmp_path, None)
    assert not lease_alive(tmp_path, "../escape")


def test_a_waiter_hold_keeps_the_exclusive_probe_out(tmp_path: Path) -> None:
    path = tmp_path / "d.json.wait"
    first, second = acquire_shared(path), acquire_shared(path)  # many waiters at once
    assert try_exclusive(path) is None
    first.release()
    assert try_exclusive(path) is None
    second.release()
    probe = try_exclusive(path)
    assert probe is not None
    probe.release()
