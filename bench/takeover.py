"""Gateway takeover: kill -9 the process holding the gateway; how long until another holds it.

Two real ``discord-mcp`` processes share a state directory; the holder is killed with SIGKILL
and we time until the other publishes a ready (resumed) session. Budget (issue: one gateway per
machine): within 5 s.

    .venv/bin/python -m bench.takeover [--rounds 5] [--server-command CMD]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.mcp_stdio import OVER_BUDGET, BenchFailure, add_server_option, run_main, server_argv
from discord_mcp.emulator import start_in_thread
from discord_mcp.relay.holder import read_status

BUDGET_S = 5.0
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def _holder(home: Path) -> int | None:
    status = read_status(home / "gateway" / "status.json")
    return status.pid if status is not None and status.connected(time.time()) else None


def _wait(
    condition: Callable[[], bool],
    processes: list[subprocess.Popen[bytes]],
    what: str,
    seconds: float = 30,
) -> float:
    """Seconds until ``condition()``; fails if every server has exited or after ``seconds``."""
    start = time.perf_counter()
    while not condition():
        if all(p.poll() is not None for p in processes):
            codes = ", ".join(str(p.returncode) for p in processes)
            raise BenchFailure(f"every server exited (status {codes}) before {what}")
        if time.perf_counter() - start > seconds:
            raise BenchFailure(f"no {what} within {seconds:g} s")
        time.sleep(0.01)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    add_server_option(parser)
    args = parser.parse_args()
    argv = server_argv(args.server_command)
    times = []
    with (
        start_in_thread(gateway_heartbeat_scale=0.05) as emulator,
        tempfile.TemporaryDirectory() as tmp,
    ):
        home = Path(tmp)
        env = {
            **os.environ,
            "DISCORD_BOT_TOKEN": emulator.token,
            "DISCORD_CHANNEL_ID": emulator.channel_id,
            "DISCORD_OWNER_IDS": emulator.owner_user_id,
            "DISCORD_API_BASE": emulator.api_base,
            "DISCORD_MCP_HOME": str(home),
        }

        def spawn() -> subprocess.Popen[bytes]:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
            )
            assert process.stdin is not None
            try:
                process.stdin.write(json.dumps(INIT).encode() + b"\n")
                process.stdin.flush()
            except BrokenPipeError:
                pass  # exited at once: _wait says so
            return process

        processes = [spawn(), spawn()]
        try:
            for _ in range(args.rounds):
                _wait(
                    lambda: _holder(home) in {p.pid for p in processes}, processes, "gateway holder"
                )
                holder = next(p for p in processes if p.pid == _holder(home))
                os.kill(holder.pid, signal.SIGKILL)
                holder.wait(timeout=10)
                processes.remove(holder)
                processes.append(spawn())
                times.append(
                    _wait(
                        lambda: _holder(home) in {p.pid for p in processes}, processes, "takeover"
                    )
                )
        finally:
            for process in processes:
                process.kill()
                process.wait(timeout=10)
    worst = max(times)
    print(f"gateway takeover after kill -9 of the holder, {len(times)} rounds:")
    print(
        f"  median {statistics.median(times):.2f} s, worst {worst:.2f} s "
        f"(budget <= {BUDGET_S:.0f} s) {'OK' if worst <= BUDGET_S else 'OVER BUDGET'}"
    )
    return 0 if worst <= BUDGET_S else OVER_BUDGET


if __name__ == "__main__":
    run_main(main)
