"""``discord-watch gc``: remove what runs left behind and nobody needs any more.

::

    discord-watch gc [--older-than 14d] [--force] [--dry-run] [--json]

A small command with room for more: each sweeper in :data:`SWEEPERS` looks after one kind of
leftover and reports what it removed, kept or found in use, and why, in this order:

- ``worktrees``: abandoned worktrees (:mod:`discord_mcp.runs.git.sweep`: a run at rest, inactive
  for longer than ``--older-than``; one holding commits that are not merged, or uncommitted
  changes, is kept unless ``--force``);
- ``runs``: run folders ``DISCORD_MCP_KEEP_RUNS`` no longer keeps
  (:mod:`discord_mcp.runs.folders.retention`), unless a keeper of :data:`RUN_KEEPERS` holds one (a
  running run, a landing under way, a worktree still there). ``--force`` changes nothing here.
  ``discord-watch`` runs this one by itself at start and once a day.

It works on the state directory directly, daemon or not, and never on a run that is running or
being landed.

Output: a line per item, or with ``--json`` ``{"ok": true, "<sweeper>": [{run_id, path,
outcome, why}]}``; exit 0, or 2 for a bad argument.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from discord_mcp.errors import RunError
from discord_mcp.runs.folders import retention
from discord_mcp.runs.folders.retention import Keeper, KeepRuns, keep_runs, sweep_runs
from discord_mcp.runs.git.sweep import sweep
from discord_mcp.runs.git.worktrees import keeps_run_folder
from discord_mcp.state.files import off_loop

DEFAULT_AGE = "14d"
_DAYS = re.compile(r"^\s*(\d+)\s*d\s*$")


@dataclass(frozen=True)
class Request:
    """What one ``gc`` asks of every sweeper."""

    home: Path
    older_than: float
    now: float
    force: bool = False
    dry_run: bool = False
    keep_runs: KeepRuns = field(default_factory=KeepRuns)


class Reported(Protocol):
    """One thing a sweeper removed, kept or found in use."""

    @property
    def run_id(self) -> str: ...
    @property
    def outcome(self) -> str: ...
    @property
    def reason(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...


Sweeper = Callable[[Request], Awaitable[Sequence[Reported]]]


RUN_KEEPERS: tuple[Keeper, ...] = (*retention.KEEPERS, keeps_run_folder)
"""Why a run folder must stay: the run side's keepers and the worktree side's."""


async def _worktrees(request: Request) -> Sequence[Reported]:
    return await sweep(
        request.home,
        older_than=request.older_than,
        now=request.now,
        force=request.force,
        dry_run=request.dry_run,
    )


async def _runs(request: Request) -> Sequence[Reported]:
    return await off_loop(
        sweep_runs,
        request.home,
        request.keep_runs,
        now=request.now,
        keepers=RUN_KEEPERS,
        dry_run=request.dry_run,
    )


SWEEPERS: dict[str, Sweeper] = {"worktrees": _worktrees, "runs": _runs}


async def retire_runs(home: Path, environ: Mapping[str, str], now: float) -> list[Reported]:
    """The daemon's own sweep of run folders (the ``runs`` sweeper, with its policy)."""
    return list(await _runs(Request(home, 0.0, now, keep_runs=keep_runs(environ))))


def add_gc_command(sub: Any) -> None:
    gc = sub.add_parser(
        "gc", help="remove abandoned run worktrees and run folders DISCORD_MCP_KEEP_RUNS lets go"
    )
    gc.add_argument(
        "--older-than",
        default=DEFAULT_AGE,
        metavar="AGE",
        help="only what was last active longer ago than this: 14d (default), 36h, 90m",
    )
    gc.add_argument(
        "--force",
        action="store_true",
        help="also remove worktrees holding unmerged commits or uncommitted changes",
    )
    gc.add_argument("--dry-run", action="store_true", help="say what would go; remove nothing")
    gc.add_argument("--json", action="store_true", help="print one JSON object")


def parse_age(text: str) -> float:
    """Seconds in ``14d``, ``36h``, ``90m``, ``1h30m``.

    Raises:
        RunError: E_INVALID_TIMEOUT.
    """
    from discord_mcp.watch.durations import parse_duration

    days = _DAYS.match(text)
    if days:
        return int(days.group(1)) * 86400.0
    try:
        return parse_duration(text)
    except RunError:
        raise RunError(
            "E_BAD_ARGUMENTS", f"--older-than {text!r} is not an age: write e.g. 14d, 36h or 90m"
        ) from None


def gc_main(args: argparse.Namespace, home: Path, environ: Mapping[str, str]) -> int:
    request = Request(
        home,
        parse_age(args.older_than),
        time.time(),
        force=args.force,
        dry_run=args.dry_run,
        keep_runs=keep_runs(environ),
    )

    async def everything() -> dict[str, Sequence[Reported]]:
        return {name: await sweeper(request) for name, sweeper in SWEEPERS.items()}

    done = asyncio.run(everything())
    if args.json:
        body = {"ok": True, **{k: [s.to_dict() for s in v] for k, v in done.items()}}
        sys.stdout.write(json.dumps(body, ensure_ascii=False) + "\n")
        return 0
    lines = [
        f"{s.outcome} {s.run_id} ({name}): {s.reason}"
        for name, found in done.items()
        for s in found
    ]
    removed = {name: sum(s.outcome == "removed" for s in found) for name, found in done.items()}
    if any(removed.values()):
        verb = "would remove" if args.dry_run else "removed"
        lines.append(f"{verb}: " + ", ".join(f"{n} {name}" for name, n in removed.items()))
    sys.stdout.write("\n".join(lines or ["nothing to remove"]) + "\n")
    return 0
