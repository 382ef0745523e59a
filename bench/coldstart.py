"""Cold start: process spawn to ``tools/list`` answered, discord-mcp beside a minimal server.

Budget (DESIGN §6): discord-mcp's median at most 1.1x the minimal FastMCP server's, measured
side by side in one run (alternating, so both see the same machine state).

    .venv/bin/python -m bench.coldstart [--runs 21]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_RATIO = 1.1


def _spawn_to_tools_list(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    process.stdin.flush()
    for line in process.stdout:
        if json.loads(line).get("id") == 2:
            break
    elapsed = time.perf_counter() - start
    process.stdin.close()
    process.wait(timeout=10)
    process.stdout.close()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = {
            **os.environ,
            "DISCORD_BOT_TOKEN": "bench.token.value",
            "DISCORD_CHANNEL_ID": "123456789012345678",
            "DISCORD_OWNER_IDS": "223456789012345678",
            "DISCORD_MCP_HOME": home,
            # Unroutable: proves the handshake needs no Discord at all.
            "DISCORD_API_BASE": "http://127.0.0.1:9/api/v10",
        }
        ours = [sys.executable, "-m", "discord_mcp"]
        minimal = [sys.executable, str(ROOT / "bench" / "minimal_server.py")]
        for argv in (ours, minimal):  # warm the OS file cache once each
            _spawn_to_tools_list(argv, env)
        ours_times, minimal_times = [], []
        for _ in range(args.runs):
            ours_times.append(_spawn_to_tools_list(ours, env))
            minimal_times.append(_spawn_to_tools_list(minimal, env))
    ours_median = statistics.median(ours_times)
    minimal_median = statistics.median(minimal_times)
    ratio = ours_median / minimal_median
    print(f"cold start, spawn to tools/list answered, median of {args.runs} runs each:")
    print(f"  minimal FastMCP server (1 tool): {minimal_median * 1000:7.1f} ms")
    print(f"  discord-mcp                    : {ours_median * 1000:7.1f} ms")
    verdict = "OK" if ratio <= BUDGET_RATIO else "OVER BUDGET"
    print(f"  ratio {ratio:.3f} (budget <= {BUDGET_RATIO}) {verdict}")
    return 0 if ratio <= BUDGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
