"""Every benchmark is a check: in its quick mode it is within every budget it prints, and it
fails on a broken server instead of printing a flattering figure.

Each benchmark (``bench/<name>.py`` with a ``main``) has ``--quick``: the same checks on fewer
rounds, in under a minute. Here each runs so and must exit 0: 1 is a figure over its budget, 2
something measured that is broken. The budgets are the benchmarks' own (docs/benchmarks.md),
absolute where a user feels them and relative to a baseline measured in the same run where the
machine's noise would make an absolute figure lie. With workers they are spread over the
first half of the run (tests/conftest.py), beside the rest of the suite. A benchmark over
budget (exit 1) is run once more, and fails only when it is over again: a real slowdown is
over twice, while one unlucky round on a machine the rest of the suite keeps busy rarely is.
Something broken (exit 2, a traceback) fails at once.

The benchmarks that start discord-mcp also run against a deliberately broken server command
(``--server-command``) with the fewest rounds it takes: they must exit 2 and say what broke.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.agent_clis import require_cli

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
EXITS_AT_ONCE = shlex.join([sys.executable, "-c", "pass"])
WRONG_TOOLS = shlex.join([sys.executable, str(BENCH / "minimal_server.py")])
QUICK_TIMEOUT_S = 240
"""A quick mode takes under a minute; four times that on a machine the suite keeps busy."""
FEWEST_ROUNDS = {
    "coldstart": ["--runs", "1"],
    "memory": ["--rounds", "1"],
    "answer_latency": ["--samples", "1"],
    "takeover": ["--rounds", "1"],
}


HELPERS = frozenset(
    {
        "__init__",
        "mcp_stdio",
        "minimal_server",
        "stamp",
        "chaos_approvals",
        "history_state",
        "reads",
    }
)
"""The modules of ``bench/`` that are no benchmark (shared code, a baseline server, a wrapper)."""


def benchmarks() -> list[str]:
    """Every benchmark: the modules of ``bench/`` but its helpers."""
    return sorted(path.stem for path in BENCH.glob("*.py") if path.stem not in HELPERS)


def run(name: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", f"bench.{name}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
    )


def test_every_benchmark_has_a_quick_mode() -> None:
    found = benchmarks()
    assert len(found) >= 12, found
    for name in found:
        text = (BENCH / f"{name}.py").read_text("utf-8")
        assert "parse_arguments(parser, QUICK" in text, f"bench/{name}.py has no --quick"


NOT_YET_WITHIN_BUDGET: dict[str, str] = {}
"""Benchmarks known to be over budget here: still run, their verdict shown, not hidden."""


def _marked(name: str) -> object:
    reason = NOT_YET_WITHIN_BUDGET.get(name)
    return (
        pytest.param(name, marks=pytest.mark.xfail(reason=reason, strict=False)) if reason else name
    )


@pytest.mark.timeout(2 * QUICK_TIMEOUT_S + 30)
@pytest.mark.parametrize("name", [_marked(name) for name in benchmarks()])
def test_a_benchmark_in_quick_mode_is_within_every_budget_it_prints(name: str) -> None:
    if name == "approvals":
        for cli in ("claude", "codex", "gemini"):
            require_cli(cli)
    done = run(name, "--quick", timeout=QUICK_TIMEOUT_S)
    report = f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    if done.returncode == 1 and "Traceback" not in done.stderr:  # over budget: measure again
        done = run(name, "--quick", timeout=QUICK_TIMEOUT_S)
        report = f"{report}\n--- measured again ---\nexit {done.returncode}\n{done.stdout}\n"
        report += done.stderr
    assert done.returncode == 0, report
    assert "Traceback" not in done.stderr, report
    assert "OVER BUDGET" not in done.stdout, report
    assert "OK" in done.stdout, report  # it printed its verdicts


@pytest.mark.parametrize("name", sorted(FEWEST_ROUNDS))
def test_a_benchmark_fails_when_the_server_exits_at_once(name: str) -> None:
    done = run(name, *FEWEST_ROUNDS[name], "--server-command", EXITS_AT_ONCE, timeout=100)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "FAILED:" in done.stderr
    assert "exited" in done.stderr
    assert "OK" not in done.stdout


def test_a_benchmark_fails_when_the_server_lacks_the_tools() -> None:
    # bench.memory checks tools/list the same way (bench/mcp_stdio.py).
    done = run(
        "coldstart", *FEWEST_ROUNDS["coldstart"], "--server-command", WRONG_TOOLS, timeout=100
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "tools/list lacks [" in done.stderr
    assert "'ask_decision'" in done.stderr
    assert "OK" not in done.stdout


def test_the_history_benchmarks_file_counter_sees_what_a_child_opens_under_its_state_directory(
    tmp_path: Path,
) -> None:
    """bench/history judges "no more files opened after a year": a counter that saw nothing
    would pass every path, so it is checked here against a child that opens known files."""
    from bench.reads import counted_env, opened

    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    for folder in (home / "decisions", elsewhere):
        folder.mkdir(parents=True)
        (folder / "a.json").write_text("{}", encoding="utf-8")
    out = tmp_path / "reads.txt"
    inner = f"open({str(home / 'decisions' / 'a.json')!r}).read()"
    script = (
        "import os, subprocess, sys\n"
        f"open({str(home / 'decisions' / 'a.json')!r}).read()\n"
        f"open({str(elsewhere / 'a.json')!r}).read()\n"
        f"os.chdir({str(home)!r}); open('decisions/a.json').read()\n"
        # a Python child of the child is counted too (hooks and runs start their own)
        f"subprocess.run([sys.executable, '-c', {inner!r}], check=True)\n"
    )
    env = counted_env({**os.environ, "DISCORD_MCP_HOME": str(home)}, out)
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=60)
    assert opened(out) == [str(home / "decisions" / "a.json")] * 3


def test_the_history_benchmark_counts_distinct_files_a_write_s_temporary_file_as_its_target() -> (
    None
):
    """A daemon opens its rate-limit buckets again with each call, as many times as the machine's
    load let it make calls by the moment it is counted (CI saw 190 to 213 opens for one start):
    the figure is the distinct files, so only a file never opened before moves it."""
    from bench.reads import distinct

    home = "/state"
    opens = [
        f"{home}/ratelimits/abc.json",
        f"{home}/ratelimits/abc.json",
        f"{home}/ratelimits/.abc.json.w812-3.k9l0s9ih.tmp",
        f"{home}/ratelimits/.abc.json.w812-4.x_moqf2b.tmp",
        f"{home}/runs/.server.env.31233.tmp",
        f"{home}/decisions/20261121-174643-0003d5.json",
        f"{home}/decisions/done/2026-11/20261121-174643-0003d5.json",
        f"{home}/watch/.hidden",
    ]
    assert distinct(opens) == {
        f"{home}/ratelimits/abc.json",
        f"{home}/runs/server.env",
        f"{home}/decisions/20261121-174643-0003d5.json",
        f"{home}/decisions/done/2026-11/20261121-174643-0003d5.json",
        f"{home}/watch/.hidden",
    }
