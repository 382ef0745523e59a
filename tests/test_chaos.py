"""Twenty rounds of the chaos bench in every run of the suite: real servers and the watch
daemon killed with SIGKILL around answers (half of the kills at the waiting server, a quarter
exactly at the answer's hand-over), and guard hooks asked while Discord is down. Twenty rounds
find an answer marked delivered before its response was written (4 lost with seed 3), which a
fifth of a hundred rounds once missed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(600)
def test_twenty_chaos_rounds_lose_duplicate_and_run_nothing() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.chaos",
            *("--rounds", "20", "--down-rounds", "6", "--seed", "3", "--servers", "4"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=590,
    )
    report = done.stdout + done.stderr
    assert "Traceback" not in done.stderr, report
    for line in (
        "answers lost:           0",
        "answers handed to two sessions:   0",
        "questions duplicated:   0",
        "calls run without an Allow:    0 of 6",
    ):
        assert line in done.stdout, report
    assert "OVER BUDGET" not in done.stdout, report
    assert done.returncode == 0, report
