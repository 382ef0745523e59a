"""A missing agent CLI or program fails the run in CI and under scripts/test, and skips by hand."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.requirements import STRICT_VARIABLE, require_program

ROOT = Path(__file__).resolve().parents[1]
# Any test that runs a real CLI will do; this one makes its CLI first thing.
E2E_TEST = "tests/e2e/test_harness.py::test_tool_call_answered_while_blocked_reaches_the_model"


def run_e2e_test(tmp_path: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    """Run one real-CLI test in a fresh pytest with AGENT_CLIS_BIN pointing at nothing."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", STRICT_VARIABLE)}
    env.update(AGENT_CLIS_BIN=str(tmp_path / "no-clis-here"), **variables)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"{E2E_TEST}[claude]"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )


@pytest.mark.parametrize("variables", [{"CI": "true"}, {STRICT_VARIABLE: "1"}])
def test_a_missing_cli_fails_the_run_in_ci_and_under_scripts_test(
    tmp_path: Path, variables: dict[str, str]
) -> None:
    done = run_e2e_test(tmp_path, **variables)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "1 failed" in output
    assert f"agent CLI 'claude' is not installed in {tmp_path / 'no-clis-here'}" in output
    assert "skipped" not in output


def test_a_missing_cli_skips_with_its_reason_when_run_by_hand(tmp_path: Path) -> None:
    done = run_e2e_test(tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "1 skipped" in output
    # -ra prints the reason in the summary.
    assert f"agent CLI 'claude' is not installed in {tmp_path / 'no-clis-here'}" in output


def test_a_missing_program_fails_under_scripts_test_and_skips_by_hand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv(STRICT_VARIABLE, "1")
    with pytest.raises(pytest.fail.Exception, match="no-such-program-7f3a is not on PATH"):
        require_program("no-such-program-7f3a", "a test needs it")
    monkeypatch.delenv(STRICT_VARIABLE)
    with pytest.raises(pytest.skip.Exception, match="no-such-program-7f3a is not on PATH"):
        require_program("no-such-program-7f3a", "a test needs it")
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        require_program("no-such-program-7f3a", "a test needs it")
