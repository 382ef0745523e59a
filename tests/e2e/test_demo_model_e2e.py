"""``discord-mcp demo model`` (issue 37): delegation tried offline with a real CLI (Claude Code,
Codex, Gemini CLI) and no key,
as docs/delegation.md shows it: the scripted model started alone, its printed environment read
by a shell, ``discord-watch --local``, ``project add`` with the printed arguments, and
``submit --wait --json``."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from discord_mcp.demo.model_cli import DONE, FILE, PROJECT_ARGS
from tests.support.agent_clis import bin_dir
from tests.support.model_server import wait_until
from tests.support.requirements import missing

pytestmark = pytest.mark.e2e

MCP = [sys.executable, "-m", "discord_mcp"]
WATCH = [sys.executable, "-c", "from discord_mcp.watch.cli import main; raise SystemExit(main())"]


def _stop(process: subprocess.Popen[str]) -> str:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        out, _ = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return out or ""


@pytest.fixture
def model(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    env_file = tmp_path / "model.env"
    (tmp_path / "tmp").mkdir()
    # The settings go under the user's cache, as on a machine whose home is not in /tmp.
    cache = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "TMPDIR": str(tmp_path / "tmp")}
    process = subprocess.Popen(
        [*MCP, "demo", "model", "--env-file", str(env_file)],
        env={**os.environ, **cache},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        encoding="utf-8",
        text=True,
    )
    try:
        wait_until(env_file.exists, timeout=30, what="the model's environment file")
        yield process, env_file
    finally:
        _stop(process)


def _read_exports(env_file: Path) -> dict[str, str]:
    """What ``. model.env`` sets in a POSIX shell (read by the shell itself)."""
    done = subprocess.run(
        ["sh", "-c", f". {shlex.quote(str(env_file))} && env -0"],
        capture_output=True,
        env={"PATH": "/usr/bin:/bin"},
        check=True,
    )
    pairs = [item.split("=", 1) for item in done.stdout.decode().split("\0") if "=" in item]
    return {k: v for k, v in pairs if k not in ("PWD", "SHLVL", "_", "PATH")}


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_a_real_cli_delegated_to_with_no_key_writes_the_task_and_answers(
    cli: str, tmp_path: Path, model: tuple[subprocess.Popen[str], Path]
) -> None:
    claude = bin_dir() / cli
    if not claude.exists():
        missing(f"{cli} is not installed; run scripts/install-agent-clis")
    process, env_file = model
    exported = _read_exports(env_file)
    assert exported["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
    assert exported["GOOGLE_GEMINI_BASE_URL"] == exported["ANTHROPIC_BASE_URL"]
    home, project = tmp_path / "state", tmp_path / "app"
    project.mkdir()
    git = ["git", "-C", str(project)]
    subprocess.run([*git, "init", "-q"], check=True)
    env = {
        "PATH": os.pathsep.join([str(claude.parent), os.environ.get("PATH", "/usr/bin:/bin")]),
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "TMPDIR": str(tmp_path / "tmp"),  # Codex's sandbox helper is never made under it
        "DISCORD_MCP_HOME": str(home),
        "DISCORD_WATCH_ROOTS": str(tmp_path),
        **exported,
    }

    def watch(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*WATCH, *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=env,
            cwd=tmp_path,
            timeout=240,
        )

    added = watch("project", "add", "app", str(project), "--tools", cli, "--default",
                  cli, "--args", f"{cli}={PROJECT_ARGS[cli]}")  # fmt: skip
    assert added.returncode == 0, added.stderr
    daemon = subprocess.Popen(
        [*WATCH, "--local"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=tmp_path,
        text=True,
        encoding="utf-8",
    )
    try:
        wait_until((home / "watch" / "alive.json").exists, timeout=30, what="the daemon")
        done = watch("submit", "app", "Add a greeting to the README", "--wait", "--json")
    finally:
        daemon_out = _stop(daemon)
    assert done.returncode == 0, (done.stdout, done.stderr, daemon_out)
    result = json.loads(done.stdout)
    assert result["status"] == "completed"
    assert result["summary"].startswith(DONE)
    assert "Add a greeting to the README" in (project / FILE).read_text(encoding="utf-8")
    patch = Path(result["run_dir"]) / "artifacts" / "changes.patch"
    assert FILE in patch.read_text(encoding="utf-8")
    assert result.get("tool", cli) == cli, result
    settings = Path(exported["CLAUDE_CONFIG_DIR"]).parent
    printed = _stop(process)
    assert "export ANTHROPIC_BASE_URL=" in printed
    assert settings.is_relative_to(tmp_path / "cache")
    assert not settings.exists()  # its temporary folder is removed when it stops
