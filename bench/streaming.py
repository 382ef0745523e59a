"""Streaming: the owner starts a run, to the agent's first words showing in the thread.

A real ``discord-watch`` process serves a local emulator; its project's tool is a scripted ACP
agent (tests/support/fake_acp_agent.py, no model) that writes its first chunk, notes the time,
pauses, then finishes. Each round the owner sends ``!start app hello`` (the same command as
``/start``); the bench watches the new thread and notes when the first words appear (the
streamed preview, before the final answer). Figures: first chunk to shown (budget: p50 within
500 ms), and ``/start`` to shown (for reference: it includes starting the agent's process).
Exits 1 over budget.

    .venv/bin/python -m bench.streaming [--rounds 10]
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

import httpx

from bench.mcp_stdio import OVER_BUDGET, BenchFailure, parse_arguments, run_main
from discord_mcp.emulator import RunningEmulator, start_in_thread

ROOT = Path(__file__).resolve().parent.parent
AGENT = ROOT / "tests" / "support" / "fake_acp_agent.py"
P50_BUDGET_S = 0.500
CLI = "from discord_mcp.watch.cli import main; raise SystemExit(main())"
FIRST = "first words"


def _cli(env: dict[str, str], root: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-c", CLI, *args], env=env, check=True, capture_output=True, cwd=root
    )


def _wait_connected(control: httpx.Client, daemon: subprocess.Popen[bytes], within: float) -> None:
    limit = time.monotonic() + within
    while time.monotonic() < limit:
        if daemon.poll() is not None:
            raise BenchFailure(f"discord-watch exited with {daemon.returncode}")
        state = control.get("/state").json()
        if any(s.get("connected") for s in state.get("gateway_sessions") or []):
            return
        time.sleep(0.1)
    raise BenchFailure("discord-watch did not connect in time")


def _first_shown(control: httpx.Client, thread_id: str, within: float) -> float:
    """The wall time at which the thread first shows the agent's first words (polled)."""
    limit = time.monotonic() + within
    while time.monotonic() < limit:
        response = control.get(f"/channels/{thread_id}/messages")
        if response.status_code == 200 and any(
            FIRST in (m.get("content") or "") for m in response.json()
        ):
            return time.time()
        time.sleep(0.01)
    raise BenchFailure(f"the first words never showed in thread {thread_id}")


def measure(rounds: int) -> tuple[list[float], list[float]]:
    emulator: RunningEmulator = start_in_thread(rate_limit_scale=0.01)
    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        (root / "app").mkdir()
        marks = root / "marks.txt"
        env = {
            **os.environ,
            "DISCORD_BOT_TOKEN": emulator.token,
            "DISCORD_CHANNEL_ID": emulator.channel_id,
            "DISCORD_OWNER_IDS": emulator.owner_user_id,
            "DISCORD_API_BASE": emulator.api_base,
            "DISCORD_MCP_HOME": str(root / "home"),
            "DISCORD_WATCH_ROOTS": str(root),
            "DISCORD_WATCH_DEBOUNCE_SECONDS": "0",
            "FAKE_ACP_MARKS": str(marks),
            "FAKE_ACP_PAUSE": "2",
        }
        _cli(env, root, "agent", "add", "fake", "--", sys.executable, str(AGENT))
        _cli(env, root, "project", "add", "app", str(root / "app"), "--tools", "fake")
        daemon = subprocess.Popen(
            [sys.executable, "-c", CLI, "run"],
            env=env,
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        after_chunk: list[float] = []
        after_start: list[float] = []
        headers = {"Authorization": f"Bearer {emulator.control_token}"}
        try:
            with httpx.Client(
                base_url=emulator.base_url + "/_emulator",
                timeout=30,
                headers=headers if emulator.control_token else {},
            ) as control:
                _wait_connected(control, daemon, 60.0)
                for number in range(rounds):
                    started = time.time()
                    sent = control.post(
                        f"/channels/{emulator.channel_id}/messages",
                        json={"author_id": emulator.owner_user_id, "content": "!start app hello"},
                    ).json()
                    shown = _first_shown(control, str(sent["id"]), 60.0)
                    chunks = marks.read_text(encoding="utf-8").split()
                    if len(chunks) <= number:
                        raise BenchFailure("the agent did not note its first chunk")
                    after_chunk.append(shown - float(chunks[number]))
                    after_start.append(shown - started)
        finally:
            daemon.terminate()
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
            emulator.stop()
    return after_chunk, after_start


QUICK = ("--rounds", "4")
"""``--quick``: the same checks on fewer rounds."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=10)
    args = parse_arguments(parser, QUICK)
    after_chunk, after_start = measure(args.rounds)
    p50 = statistics.median(after_chunk)
    within = p50 <= P50_BUDGET_S
    print(f"first streamed text after the agent's first chunk ({args.rounds} runs):")
    print(
        f"  p50 {p50 * 1000:.0f} ms  max {max(after_chunk) * 1000:.0f} ms"
        f"  (budget: p50 <= {P50_BUDGET_S * 1000:.0f} ms) {'OK' if within else 'OVER BUDGET'}"
    )
    print(
        f"first streamed text after !start (agent process start included): p50 "
        f"{statistics.median(after_start) * 1000:.0f} ms  max {max(after_start) * 1000:.0f} ms"
        " (shown, not judged: the agent's own start)"
    )
    return 0 if within else OVER_BUDGET


if __name__ == "__main__":
    run_main(main)
