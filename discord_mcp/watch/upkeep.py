"""What ``discord-watch`` does so that a year of history costs nothing (issue 38).

- At start: remove the temporary files of state writes that never finished (their writer was
  killed mid-write; :func:`~discord_mcp.state.files.sweep_unfinished_writes`), and say how many;
  the archives that grow with history (done decisions, run folders) a day later and then once
  a day, so a start-up does not walk a year of files.
- Once ready (after its first catch-up, when the engine has brought the run folders up to date)
  and then once a day: remove the run folders ``DISCORD_MCP_KEEP_RUNS`` lets go
  (:mod:`discord_mcp.runs.folders.retention`, the ``runs`` sweeper of ``discord-watch gc``), and say
  which.

Done decisions move to their archive after every catch-up pass
(:meth:`~discord_mcp.watch.daemon.Watcher.run`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from pathlib import Path

from discord_mcp.errors import DiscordMCPError
from discord_mcp.runs.folders.retention import keep_runs
from discord_mcp.state.files import off_loop, sweep_and_say
from discord_mcp.watch.gc import retire_runs

log = logging.getLogger(__name__)

RUNS_EVERY_S = 86400.0


def check_policy(environ: Mapping[str, str]) -> None:
    """Refuse to start with a ``DISCORD_MCP_KEEP_RUNS`` that means nothing.

    Raises:
        ConfigError: with the sentence that says how to write it.
    """
    keep_runs(environ)


async def upkeep(
    home: Path,
    environ: Mapping[str, str],
    *,
    ready: asyncio.Event | None,
    wall: Callable[[], float],
    every: float = RUNS_EVERY_S,
) -> None:
    """Tidy the state directory (module doc) until cancelled; a failure is logged, never
    raised (the daemon goes on)."""
    try:
        await off_loop(sweep_and_say, home, "discord-watch")
    except OSError as exc:
        log.warning("could not look for temporary files left by unfinished writes: %s", exc)
    if ready is not None:
        await ready.wait()
    first = True
    while True:
        if not first:
            try:
                await off_loop(sweep_and_say, home, "discord-watch (archives too)", archives=True)
            except OSError as exc:
                log.warning("could not look for temporary files in the archives: %s", exc)
        first = False
        try:
            found = await retire_runs(home, environ, wall())
        except (DiscordMCPError, OSError) as exc:
            log.warning("removing old run folders failed (tried again tomorrow): %s", exc)
        else:
            removed = [s.run_id for s in found if s.outcome == "removed"]
            kept = [f"{s.run_id} ({s.reason})" for s in found if s.outcome == "kept"]
            if removed:
                log.info(
                    "removed %d old run folder%s: %s",
                    len(removed),
                    "" if len(removed) == 1 else "s",
                    ", ".join(removed),
                )
            if kept:
                log.info("kept run folders the policy lets go: %s", "; ".join(kept))
        await asyncio.sleep(every)
