"""``discord-watch gc``: remove what runs left behind and nobody needs any more.

::

    discord-watch gc [--older-than 14d] [--force] [--dry-run] [--json]

A small command with room for more: each sweeper in :data:`SWEEPERS` looks after one kind of
leftover and reports what it removed, kept or found in use, and why. Today there is one:
abandoned worktrees (:mod:`discord_mcp.git.sweep`: a run at rest, inactive for longer than
``--older-than``; one holding commits that are not merged, or uncommitted changes, is kept
unless ``--force``). It works on the state directory directly, daemon or not, and never on a
run that is running or being landed.

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
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.git.sweep import Swept, sweep

DEFAULT_AGE = "14d"
_DAYS = re.compile(r"^\s*(\d+)\s*d\s*$")

Sweeper = Callable[[Path, float, float, bool, bool], Awaitable[list[Swept]]]
"""``(home, older_than, now, force, dry_run) -> what it did``."""


async def _worktrees(
    home: Path, older_than: float, now: float, force: bool, dry_run: bool
) -> list[Swept]:
    return await sweep(home, older_than=older_than, now=now, force=force, dry_run=dry_run)


SWEEPERS: dict[str, Sweeper] = {"worktrees": _worktrees}


def add_gc_command(sub: Any) -> None:
    gc = sub.add_parser("gc", help="remove abandoned run worktrees (and, later, more leftovers)")
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
    from discord_mcp.watch.cli import parse_duration

    days = _DAYS.match(text)
    if days:
        return int(days.group(1)) * 86400.0
    try:
        return parse_duration(text)
    except RunError:
        raise RunError(
            "E_BAD_ARGUMENTS", f"--older-than {text!r} is not an age: write e.g. 14d, 36h or 90m"
        ) from None


def gc_main(args: argparse.Namespace, home: Path) -> int:
    older_than = parse_age(args.older_than)

    async def everything() -> dict[str, list[Swept]]:
        now = time.time()
        return {
            name: await sweeper(home, older_than, now, args.force, args.dry_run)
            for name, sweeper in SWEEPERS.items()
        }

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
    sys.stdout.write("\n".join(lines or ["nothing to remove"]) + "\n")
    return 0
