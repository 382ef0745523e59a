"""The mutation check's CI list (issue 36): each guard broken on purpose fails a test.

``scripts/mutate --ci`` applies every mutation of scripts/mutations.toml marked ``ci = true``,
one at a time in a copy of the work tree (its own ``.venv``: the tests' subprocesses run the
mutated code too), and runs the tests the mutation names. Every one must be caught. A mutation
that survives is a promise no test guards; one that no longer applies (its code moved or
changed) must be rewritten, never skipped. The list is chosen for speed (unit tests of a few
seconds each); ``scripts/mutate`` runs the whole list.

The named tests are not run unmutated first (``--no-baseline``): the suite runs them, and fails
on its own if one of them does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CI_MINIMUM = 25
"""Issue 36: CI runs at least this many mutations."""
GUARDED = (
    "discord_mcp/approvals/",
    "discord_mcp/hooks/",
    "discord_mcp/outbound/redaction.py",
    "discord_mcp/runs/folders.py",
    "discord_mcp/runs/restricted.py",
    "discord_mcp/server/app.py",
    "discord_mcp/team/",
)
"""Every one of these has a mutation in the CI list."""


def ci_list() -> list[dict[str, object]]:
    document = tomllib.loads((ROOT / "scripts" / "mutations.toml").read_text(encoding="utf-8"))
    return [entry for entry in document["mutation"] if entry.get("ci") is True]


def test_the_ci_list_covers_every_guard_named_by_the_issue() -> None:
    listed = ci_list()
    assert len(listed) >= CI_MINIMUM
    files = {str(entry["file"]) for entry in listed}
    missing = [g for g in GUARDED if not any(f.startswith(g) for f in files)]
    assert not missing, f"no CI mutation of {', '.join(missing)}"


@pytest.mark.timeout(900)
def test_every_mutation_of_the_ci_list_is_caught_by_a_test(tmp_path: Path) -> None:
    report = tmp_path / "mutations.json"
    # Not pytest's own variables: the runs in the copies are sessions of their own.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    argv = [sys.executable, "scripts/mutate.py", "--ci", "--jobs", "1", "--no-baseline"]
    run = subprocess.run(
        [*argv, "--report", str(report)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=840,
        check=False,
    )
    assert report.is_file(), f"scripts/mutate wrote no report:\n{run.stdout[-3000:]}{run.stderr}"
    results = json.loads(report.read_text(encoding="utf-8"))["results"]
    assert [r["id"] for r in results] == [str(e["id"]) for e in ci_list()]
    wrong = [
        f"{r['verdict']} {r['id']} ({r['file']}): {r['breaks']}"
        + (f" [{r['detail']}]" if r["detail"] else "")
        for r in results
        if r["verdict"] != "caught"
    ]
    assert not wrong, "promises no test guards, or mutations to rewrite:\n" + "\n".join(wrong)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
