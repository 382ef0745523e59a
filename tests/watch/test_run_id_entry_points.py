"""Every ``discord-watch`` command that takes a run id refuses a traversal that reaches a REAL
run's files outside ``runs/`` (tests/runs/test_run_ids.py makes the victim), with its error code,
and shows nothing of the victim: ``status``, ``logs`` (and ``--raw``), ``resume`` (without a
daemon, and to a live one), ``stop`` (to a live one). No slash command takes a run id, and
``submit`` makes its own.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from tests.runs.test_run_ids import MARK, TRAVERSALS, make_victim, snapshot
from tests.support.fake_agents import FakeSpawner
from tests.watch.conftest import live_daemon

CLI = "from discord_mcp.watch.cli import main; raise SystemExit(main())"
BAD = TRAVERSALS[0]


async def watch(home: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """``discord-watch ARGS --json`` as its own process: exit code, the JSON, all it wrote."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLI,
        *args,
        "--json",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home.parent), "DISCORD_MCP_HOME": str(home)},
    )
    async with asyncio.timeout(60):
        out, err = await process.communicate()
    assert process.returncode is not None
    text = out.decode() + err.decode()
    return process.returncode, json.loads(out.decode() or "{}"), text


@pytest.mark.parametrize(
    "command",
    [
        ("status", BAD),
        ("logs", BAD),
        ("logs", BAD, "--raw"),
        ("resume", BAD, "go on"),
        ("diff", BAD),
    ],
    ids=["status", "logs", "logs-raw", "resume", "diff"],
)
async def test_a_traversal_to_a_real_run_outside_runs_is_refused(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    victim = await asyncio.to_thread(make_victim, home)
    before = await asyncio.to_thread(snapshot, victim)
    code, answer, said = await watch(home, *command)
    assert code == 2, said
    assert answer["code"] == "E_RUN_NOT_FOUND", said
    assert MARK not in said
    assert await asyncio.to_thread(snapshot, victim) == before


async def test_a_live_daemon_refuses_a_traversal_to_stop_or_resume(
    live_settings: Settings, fake_spawner: FakeSpawner, discord: RunningEmulator
) -> None:
    home = live_settings.home
    victim = await asyncio.to_thread(make_victim, home)
    before = await asyncio.to_thread(snapshot, victim)
    async with live_daemon(live_settings, fake_spawner, discord):
        stop_code, stopped, stop_said = await watch(home, "stop", BAD)
        resume_code, resumed, resume_said = await watch(home, "resume", BAD, "go on")
        # Landing a run (issue 35) takes a run id too: merge, pr and discard go to the daemon.
        for landing in (("merge", BAD), ("pr", BAD), ("discard", BAD, "--yes")):
            code, answer, said = await watch(home, *landing)
            assert (code, answer.get("code")) == (2, "E_RUN_NOT_FOUND"), said
            assert MARK not in said
    assert (stop_code, stopped["code"]) == (2, "E_RUN_NOT_FOUND"), stop_said
    assert "is not a run id" in stopped["message"]
    assert (resume_code, resumed["code"]) == (2, "E_RUN_NOT_FOUND"), resume_said
    assert MARK not in stop_said + resume_said
    assert await asyncio.to_thread(snapshot, victim) == before
    assert fake_spawner.runs() == []
