"""``discord-watch --local`` (or no bot token configured): the run engine without Discord.

Runs come only from the command line (``discord-watch submit|resume|stop``) and are the same
runs as with Discord: the same engine, queue, resumes, crash reattach and run folders. Nothing
here makes a network connection: no REST client, no gateway, no discord-mcp server registered
for the runs' agents (their tool approvals are the CLI's own configuration, as a project with
``--approvals off``), no reminders, no inbox. The first line the daemon prints says it is local
only.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from discord_mcp.config import watch_roots
from discord_mcp.runs import Activity, Clock, JobView, RunLimits, SessionView, SystemClock, Tool
from discord_mcp.runs.engine.engine import RunEngine
from discord_mcp.runs.processes.spawner import Spawner
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.state.files import ensure_dir
from discord_mcp.watch.display import render_status
from discord_mcp.watch.downtime import Downtime
from discord_mcp.watch.options import watch_options
from discord_mcp.watch.requests import ShellRequests
from discord_mcp.watch.upkeep import check_policy, upkeep

log = logging.getLogger(__name__)

DISPLAY_EVERY_S = 2.0
WITHHELD = frozenset({"DISCORD_BOT_TOKEN"})


def first_line(home: Path) -> str:
    return (
        f"discord-watch: local only (no Discord): runs come from `discord-watch submit`, "
        f"state {home}"
    )


class LocalNotifier:
    """The engine's notifier in local mode: the log, and nothing else (the run folders say
    the rest)."""

    async def job_queued(self, job: JobView, position: int) -> None:
        log.info("job %s queued (%s)", job.job_id, job.thread_id)

    async def job_started(self, job: JobView, session: SessionView) -> None:
        log.info("job %s started: %s in run %s", job.job_id, job.tool, session.run_id)

    async def job_activity(self, job: JobView, activity: Activity) -> None:
        return None

    async def job_text(self, job: JobView, text: str) -> None:
        return None  # no thread to stream into: the run folder gets the whole answer

    async def job_finished(self, job: JobView, session: SessionView) -> None:
        log.info("job %s %s (%s)", job.job_id, job.state, job.error_code or "ok")


async def run_local(
    home: Path,
    *,
    environ: Mapping[str, str] | None = None,
    spawner: Spawner | None = None,
    display: TextIO | None = None,
    tool_env: Mapping[Tool, Mapping[str, str]] | None = None,
    limits: RunLimits | None = None,
    clock: Clock | None = None,
) -> None:
    """Run the local-only daemon until cancelled (see the module doc)."""
    environment = dict(os.environ if environ is None else environ)
    ensure_dir(home)
    options = watch_options(environment)
    check_policy(environment)
    clock = clock or SystemClock()
    engine = RunEngine(
        state_dir=home,
        projects=ProjectRegistry(home, allowed_roots=watch_roots(environment)),
        notifier=LocalNotifier(),
        limits=limits or RunLimits(debounce=options.debounce),
        clock=clock,
        spawner=spawner,
        mcp=None,
        env={k: v for k, v in environment.items() if k not in WITHHELD},
        tool_env=tool_env,
    )
    downtime = Downtime(home, wall=clock.time)
    async with engine:
        log.info("%s", first_line(home))
        async with asyncio.TaskGroup() as group:
            group.create_task(ShellRequests(engine, home).run(), name="shell-requests")
            group.create_task(downtime.beat(), name="alive")
            settled = asyncio.Event()  # the run folders are up to date (the recorder's start-up)
            group.create_task(_settle(engine, settled), name="settle")
            group.create_task(
                upkeep(home, environment, ready=settled, wall=clock.time), name="upkeep"
            )
            if display is not None:
                group.create_task(_display(home, display), name="display")


async def _settle(engine: RunEngine, settled: asyncio.Event) -> None:
    await engine.recorder.drain()
    settled.set()


async def _display(home: Path, out: TextIO) -> None:
    while True:
        text = await asyncio.to_thread(render_status, home)
        out.write("\x1b[2J\x1b[H" + first_line(home) + "\n" + text + "\n")
        out.flush()
        await asyncio.sleep(DISPLAY_EVERY_S)
