"""``discord-watch`` without an ACP agent never loads the ACP SDK (issue 36): ``acp.schema``
alone cost about 0.6 s of CPU at every start, and only a thread whose tool is an ACP agent
needs it (:mod:`discord_mcp.runs.adapters.acp_wire`, imported where an agent starts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from discord_mcp.emulator import RunningEmulator
from tests.support.imports import PROFILE, imported, of_packages
from tests.support.settings import env_for
from tests.support.waiting import until_sync

WATCH = [sys.executable, "-c", "from discord_mcp.watch.cli import main; raise SystemExit(main())"]


def caught_up(alive: Path) -> bool:
    try:
        return isinstance(json.loads(alive.read_text(encoding="utf-8")).get("caught_up_at"), str)
    except (OSError, ValueError):
        return False


def test_the_daemon_starts_and_stops_without_importing_the_acp_sdk(
    discord: RunningEmulator, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    env = {
        **os.environ,
        **env_for(discord, state, DISCORD_WATCH_ROOTS=str(tmp_path)),
        **PROFILE,
    }
    err = tmp_path / "watch.err"
    with err.open("wb") as out:
        daemon = subprocess.Popen(
            WATCH, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=out
        )
    try:
        until_sync(
            lambda: caught_up(state / "watch" / "alive.json"),
            seconds=60,
            what="the daemon's first catch-up",
        )
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    names = imported(err.read_text(encoding="utf-8", errors="replace"))
    assert "discord_mcp.runs.engine.scheduler" in names  # the run engine was loaded, and read
    assert of_packages(names, ["acp", "discord_mcp.runs.adapters.acp_wire"]) == []


def test_importing_the_discord_watch_command_leaves_the_acp_sdk_unloaded(tmp_path: Path) -> None:
    """Every ``discord-watch`` command starts from this import; no emulator needed."""
    done = subprocess.run(
        [sys.executable, "-c", "import discord_mcp.watch.cli"],
        env={**os.environ, **PROFILE},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    names = imported(done.stderr)
    assert "discord_mcp.watch.cli" in names  # the probe saw the import it traces
    assert of_packages(names, ["acp", "discord_mcp.runs.adapters.acp_wire"]) == []


def test_a_command_that_lists_projects_leaves_the_approval_machinery_and_the_engine_unloaded(
    tmp_path: Path,
) -> None:
    """``discord_mcp.runs`` and ``runs.contract`` hand out their names when asked (PEP 562):
    a short command pays for what it uses, not for the engine, approvals and httpx."""
    done = subprocess.run(
        [*WATCH, "project", "list"],
        env={**os.environ, **PROFILE, "DISCORD_MCP_HOME": str(tmp_path / "state")},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no projects yet" in done.stdout
    names = imported(done.stderr)
    assert "discord_mcp.runs.projects" in names  # the probe saw the command's own import
    loaded = of_packages(
        names, ["discord_mcp.approvals", "discord_mcp.runs.engine.engine", "httpx", "acp"]
    )
    assert loaded == []


def test_every_name_the_runs_package_hands_out_is_where_it_says() -> None:
    import importlib

    import discord_mcp.approvals.asks as asks
    import discord_mcp.runs as runs
    import discord_mcp.runs.contract as contract

    assert sorted(runs._HOMES) == sorted(runs.__all__)
    for name, home in runs._HOMES.items():
        module = importlib.import_module(f"discord_mcp.runs.{home}")
        assert getattr(runs, name) is getattr(module, name), name
    for name in contract._FROM_APPROVALS:
        assert getattr(contract, name) is getattr(asks, name), name
