"""An idle server sleeps: the gateway holder and a follower each wake at most a few times a
second. Counted as the kernel's voluntary context switches of every thread (each is one sleep
and one wake-up), not as wall time or CPU, so a busy machine does not change the count."""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

from discord_mcp.emulator import RunningEmulator
from discord_mcp.relay.holder import read_status
from tests.support.settings import env_for
from tests.support.stdio_peer import StdioPeer

WAKEUPS_PER_S = 5.0
"""Measured on an idle server: about 2 a second for the holder, under 1 for a follower."""
WINDOW_S = 2.0
WINDOWS = 5


def wakeups(pid: int) -> int:
    """Voluntary context switches of every thread of ``pid`` so far."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("voluntary_ctxt_switches:"):
                        total += int(line.split()[1])
        except FileNotFoundError:
            continue  # a thread that ended meanwhile
    return total


def rates(pids: list[int]) -> dict[int, float]:
    """Each process's wake-ups per second: the median over :data:`WINDOWS` windows."""
    found: dict[int, list[float]] = {pid: [] for pid in pids}
    for _ in range(WINDOWS):
        before = {pid: wakeups(pid) for pid in pids}
        started = time.monotonic()
        time.sleep(WINDOW_S)  # the measurement window: counting what happens in it
        elapsed = time.monotonic() - started
        for pid in pids:
            found[pid].append((wakeups(pid) - before[pid]) / elapsed)
    return {pid: statistics.median(values) for pid, values in found.items()}


def test_an_idle_holder_and_follower_wake_at_most_a_few_times_a_second(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = env_for(discord, home)
    peers = [StdioPeer(env, tmp_path), StdioPeer(env, tmp_path)]
    try:
        for peer in peers:
            peer.handshake()
        deadline = time.monotonic() + 60
        while True:  # one of them holds the machine's gateway, connected; the other follows
            status = read_status(home / "gateway" / "status.json")
            if status is not None and status.connected(time.time()):
                break
            assert time.monotonic() < deadline, "no server took the gateway"
            time.sleep(0.05)
        pids = [peer.process.pid for peer in peers]
        assert status.pid in pids
        measured = rates(pids)
    finally:
        for peer in peers:
            peer.close()
    for pid, rate in measured.items():
        role = "holder" if pid == status.pid else "follower"
        assert rate <= WAKEUPS_PER_S, f"the idle {role} woke {rate:.1f} times a second"
