"""The benchmarks fail on a broken server instead of printing a flattering figure.

Each benchmark that starts discord-mcp runs here against a deliberately broken server command
(``--server-command``) with the fewest rounds it takes; it must exit 2 and say what broke.
These never look at a figure: timings are the benchmarks' business, not the tests'.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXITS_AT_ONCE = shlex.join([sys.executable, "-c", "pass"])
WRONG_TOOLS = shlex.join([sys.executable, str(ROOT / "bench" / "minimal_server.py")])
FEWEST_ROUNDS = {
    "coldstart": ["--runs", "1"],
    "memory": ["--rounds", "1"],
    "answer_latency": ["--samples", "1"],
    "takeover": ["--rounds", "1"],
}


def bench(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", f"bench.{name}", *FEWEST_ROUNDS[name], *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=100,
    )


@pytest.mark.parametrize("name", sorted(FEWEST_ROUNDS))
def test_a_benchmark_fails_when_the_server_exits_at_once(name: str) -> None:
    done = bench(name, "--server-command", EXITS_AT_ONCE)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "FAILED:" in done.stderr
    assert "exited" in done.stderr
    assert "OK" not in done.stdout


def test_a_benchmark_fails_when_the_server_lacks_the_tools() -> None:
    # bench.memory checks tools/list the same way (bench/mcp_stdio.py).
    done = bench("coldstart", "--server-command", WRONG_TOOLS)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "tools/list lacks [" in done.stderr
    assert "'ask_decision'" in done.stderr
    assert "OK" not in done.stdout


def test_the_runs_benchmark_runs_through_and_prints_its_figures() -> None:
    # No server to break here (it drives the run engine in-process): it must at least run.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.runs",
            *("--jobs", "5", "--events", "200", "--history", "100,300"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=100,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert "owner message (submit) to CLI running, 2 jobs:" in done.stdout  # 3 warm-ups
    assert "journal replay from the events alone, 200 events" in done.stdout
    assert "      100 jobs: on disk" in done.stdout
    assert "start-up after       300 jobs:" in done.stdout
    assert "start-up after 300 jobs / after 100:" in done.stdout


def test_the_team_benchmark_runs_through_and_prints_machines_side_by_side() -> None:
    # Real discord-watch processes, one per machine (issue 27): it must at least run.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.team",
            *("--machines", "1", "2", "--rounds", "1", "--messages", "4"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=200,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stdout + done.stderr
    header = next(line for line in done.stdout.splitlines() if line.startswith("machines"))
    assert header.split()[1:3] == ["1", "2"]
    for row in ("/help -> first answer, p50", "answered twice (40060)", "burst: 429s"):
        assert row in done.stdout
