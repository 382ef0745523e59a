"""Answer latency: the owner's reply in Discord to the waiting tool call returning.

Polling mode (no gateway): a real ``discord-mcp`` process asks through stdio; the owner
replies through the emulator; we time reply -> tool result. Budget (DESIGN §6): at most the poll
interval + 200 ms (p99 here, so every answer, not just a typical one, meets it).

    .venv/bin/python -m bench.answer_latency [--samples 20] [--interval 1.0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from discord_mcp.emulator import RunningEmulator, start_in_thread

ROOT = Path(__file__).resolve().parent.parent


class _Server:
    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "discord_mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **env},
            cwd=ROOT,
        )
        self._id = 0
        self._lines: dict[int, dict[str, Any]] = {}
        self._arrived: dict[int, float] = {}
        self._cond = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)
            with self._cond:
                if "id" in message:
                    self._arrived[message["id"]] = time.perf_counter()
                    self._lines[message["id"]] = message
                    self._cond.notify_all()

    def send(self, method: str, params: dict[str, Any] | None = None) -> int:
        self._id += 1
        payload = {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params or {}}
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(payload).encode() + b"\n")
        self.process.stdin.flush()
        return self._id

    def result(self, request_id: int, timeout: float = 60) -> tuple[dict[str, Any], float]:
        with self._cond:
            if not self._cond.wait_for(lambda: request_id in self._lines, timeout):
                raise TimeoutError(f"no answer to request {request_id}")
            return self._lines[request_id], self._arrived[request_id]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=15)


def _threads(control: httpx.Client) -> list[dict[str, Any]]:
    channels = control.get("/state").json()["channels"]
    return [c for c in channels if c.get("type") == 11]


def measure(emulator: RunningEmulator, samples: int, interval: float) -> list[float]:
    control = httpx.Client(base_url=emulator.base_url + "/_emulator", timeout=10)
    with tempfile.TemporaryDirectory() as home:
        server = _Server(
            {
                "DISCORD_BOT_TOKEN": emulator.token,
                "DISCORD_CHANNEL_ID": emulator.channel_id,
                "DISCORD_OWNER_IDS": emulator.owner_user_id,
                "DISCORD_API_BASE": emulator.api_base,
                "DISCORD_MCP_HOME": home,
                "POLL_INTERVAL_SECONDS": str(interval),
                "DISCORD_MCP_MAX_BLOCK_SECONDS": "60",
            }
        )
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        server.result(server.send("initialize", init))
        latencies = []
        try:
            for n in range(samples):
                seen = len(_threads(control))
                call = server.send(
                    "tools/call",
                    {
                        "name": "ask_decision",
                        "arguments": {"question": f"Sample {n}?", "options": ["Yes", "No"]},
                    },
                )
                deadline = time.monotonic() + 30
                while len(_threads(control)) == seen:
                    if time.monotonic() > deadline:
                        raise TimeoutError("the question never appeared")
                    time.sleep(0.01)
                thread_id = _threads(control)[-1]["id"]
                # Reply at a random point of the poll cycle, as a person would.
                time.sleep(random.uniform(0.2, 0.2 + interval))
                replied = time.perf_counter()
                control.post(
                    f"/channels/{thread_id}/messages",
                    json={"author_id": emulator.owner_user_id, "content": "yes"},
                ).raise_for_status()
                answer, returned = server.result(call)
                status = answer["result"]["structuredContent"]["status"]
                if status != "answered":
                    raise RuntimeError(f"sample {n} ended {status}")
                latencies.append(returned - replied)
        finally:
            server.close()
            control.close()
    return latencies


def report(name: str, latencies: list[float], budget: float) -> bool:
    ordered = sorted(latencies)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    ok = p99 <= budget
    print(
        f"  {name}: n={len(ordered)} p50 {p50 * 1000:6.0f} ms  p99 {p99 * 1000:6.0f} ms  "
        f"(budget p99 <= {budget * 1000:.0f} ms) {'OK' if ok else 'OVER BUDGET'}"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--interval", type=float, default=1.0)
    args = parser.parse_args()
    print("answer latency, owner reply -> tool call returns:")
    with start_in_thread(rate_limit_scale=1.0) as emulator:
        polling = measure(emulator, args.samples, args.interval)
    ok = report(f"polling every {args.interval:.1f}s", polling, args.interval + 0.2)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
