"""Slash commands: the owner runs a command, to the first response Discord gets from the bot.

A real ``discord-watch`` process (its own gateway, the real REST client) serves a local
emulator; the owner runs a mix of slash commands and autocompletes through the emulator's
control API, which answers once the bot's first callback (the reply, a "thinking..." defer,
or the choices) has arrived. Budget (DESIGN §8): p50 under 500 ms, and every one within
Discord's 3-second deadline (none expired). Exits 1 over budget.

    .venv/bin/python -m bench.commands [--rounds 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.mcp_stdio import OVER_BUDGET, BenchFailure, parse_arguments, run_main
from discord_mcp.emulator import RunningEmulator, start_in_thread

ROOT = Path(__file__).resolve().parent.parent
P50_BUDGET_S = 0.500
DEADLINE_S = 3.0
COMMAND_COUNT = 14
CLI = "from discord_mcp.watch.cli import main; raise SystemExit(main())"

# (command, options, focused option or None): what the owner does, each round.
MIX: list[tuple[str, dict[str, Any], str | None]] = [
    ("status", {}, None),
    ("help", {}, None),
    ("project list", {}, None),
    ("project status", {"project": "app"}, None),
    ("session list", {}, None),
    ("usage", {}, None),
    ("pending", {}, None),
    ("schedule list", {}, None),
    ("logs", {}, None),
    ("start", {"project": "a", "prompt": "x"}, "project"),
    ("model", {"model": "so"}, "model"),
    ("start", {"project": "app", "prompt": "bench"}, None),  # a thread, a job (no CLI found)
]


def _body(
    emulator: RunningEmulator, path: str, options: dict[str, Any], focused: str | None
) -> dict[str, Any]:
    head, _, sub = path.partition(" ")
    given = [{"name": k, "value": v} for k, v in options.items()]
    body: dict[str, Any] = {
        "user_id": emulator.owner_user_id,
        "channel_id": emulator.channel_id,
        "command": head,
        "options": [{"name": sub, "options": given}] if sub else given,
    }
    if focused:
        body["focused"] = focused
    return body


def _wait_ready(control: httpx.Client, daemon: subprocess.Popen[bytes], within: float) -> None:
    limit = time.monotonic() + within
    while time.monotonic() < limit:
        if daemon.poll() is not None:
            raise BenchFailure(f"discord-watch exited with {daemon.returncode}")
        state = control.get("/state").json()
        connected = any(s.get("connected") for s in state.get("gateway_sessions") or [])
        if connected and len(control.get("/commands").json()) >= COMMAND_COUNT:
            return
        time.sleep(0.1)
    raise BenchFailure("discord-watch did not connect and register its commands in time")


def measure(rounds: int) -> tuple[dict[str, list[float]], int]:
    emulator = start_in_thread(rate_limit_scale=0.01)
    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        (root / "app").mkdir()
        (root / "no-clis").mkdir()
        env = {
            **os.environ,
            "PATH": str(root / "no-clis"),  # /start's jobs must never reach a real agent CLI
            "DISCORD_BOT_TOKEN": emulator.token,
            "DISCORD_CHANNEL_ID": emulator.channel_id,
            "DISCORD_OWNER_IDS": emulator.owner_user_id,
            "DISCORD_API_BASE": emulator.api_base,
            "DISCORD_MCP_HOME": str(root / "home"),
            "DISCORD_WATCH_ROOTS": str(root),
        }
        subprocess.run(
            [sys.executable, "-c", CLI, "project", "add", "app", str(root / "app"), "--tools",
             "claude"],
            env=env, check=True, capture_output=True, cwd=root,
        )  # fmt: skip
        daemon = subprocess.Popen(
            [sys.executable, "-c", CLI, "run"],
            env=env,
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        times: dict[str, list[float]] = {}
        expired = 0
        try:
            with httpx.Client(base_url=emulator.base_url + "/_emulator", timeout=30) as control:
                _wait_ready(control, daemon, 60.0)
                for _ in range(rounds):
                    for path, options, focused in MIX:
                        body = _body(emulator, path, options, focused)
                        start = time.perf_counter()
                        report = control.post("/interactions", json=body).json()
                        took = time.perf_counter() - start
                        if report.get("expired") or not report.get("acknowledged"):
                            expired += 1
                        label = f"/{path}" + (f" (autocomplete {focused})" if focused else "")
                        times.setdefault(label, []).append(took)
        finally:
            daemon.terminate()
            try:
                daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                daemon.kill()
            emulator.stop()
    return times, expired


QUICK = ("--rounds", "3")
"""``--quick``: the same checks on fewer rounds."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    args = parse_arguments(parser, QUICK)
    times, expired = measure(args.rounds)
    every = sorted(t for ts in times.values() for t in ts)
    p50 = statistics.median(every)
    worst = every[-1]
    p99 = every[min(len(every) - 1, round(0.99 * (len(every) - 1)))]
    print(f"slash command -> first response, {len(every)} interactions ({args.rounds} rounds):")
    for label, values in times.items():
        print(f"  {label:34s} p50 {statistics.median(values) * 1000:7.1f} ms")
    ok = p50 <= P50_BUDGET_S and worst <= DEADLINE_S and expired == 0
    print(f"  all: p50 {p50 * 1000:.1f} ms (budget < {P50_BUDGET_S * 1000:.0f} ms), "
          f"p99 {p99 * 1000:.1f} ms, max {worst * 1000:.1f} ms (deadline {DEADLINE_S:g} s), "
          f"expired {expired}")  # fmt: skip
    print("OK" if ok else "OVER BUDGET")
    return 0 if ok else OVER_BUDGET


if __name__ == "__main__":
    run_main(main)
