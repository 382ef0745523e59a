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

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
CI_MINIMUM = 25
"""Issue 36: CI runs at least this many mutations."""
GUARDED = (
    "discord_mcp/approvals/",
    "discord_mcp/hooks/",
    "discord_mcp/outbound/redaction.py",
    "discord_mcp/runs/folders/folders.py",
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


def runner() -> ModuleType:
    """scripts/mutate.py as a module (its dataclasses need it in sys.modules)."""
    name = "scripts_mutate"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "mutate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_every_process_started_in_a_copy_runs_the_copy_not_the_checkout(tmp_path: Path) -> None:
    """The .venv's editable install names the checkout: a test's subprocess started with an
    environment of its own (no PYTHONPATH, as tests/support/settings.py's env_for gives) ran
    the checkout's code, and a mutation only such a test could catch survived. Each copy has
    a .venv of its own now; a copy that only links the checkout's is caught by the check."""
    mutate = runner()
    tree = tmp_path / "src"
    mutate.copy_tree(mutate.ROOT, mutate.tree_files(mutate.ROOT), tree)
    assert mutate.imports_itself(tree) is None
    bin_dir = tree / ".venv" / "bin"
    probe = "import discord_mcp, sys; print(discord_mcp.__file__, sys.executable)"
    ran = subprocess.run(
        [str(bin_dir / "python"), "-c", probe],
        env={},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    assert ran.stdout.split() == [
        str(tree / "discord_mcp" / "__init__.py"),
        str(bin_dir / "python"),
    ]
    # A console script starts the copy's interpreter, so it runs the copy too.
    script = (bin_dir / "discord-mcp").read_text(encoding="utf-8")
    assert script.startswith(f"#!{bin_dir / 'python'}\n")
    version = subprocess.run(
        [str(bin_dir / "discord-mcp"), "--version"], env={}, capture_output=True, check=False
    )
    assert version.returncode == 0, version.stderr

    shutil.rmtree(tree / ".venv")
    (tree / ".venv").symlink_to(mutate.VENV.resolve())  # what the runner did before
    wrong = mutate.imports_itself(tree)
    assert wrong is not None
    assert str(mutate.ROOT) in wrong


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
