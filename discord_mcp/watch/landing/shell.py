"""``discord-watch diff|merge|pr|discard RUN_ID`` (issue 35): review and land a run from a
shell, as the buttons of its changes card do.

::

    discord-watch diff RUN_ID [--stat] [--json]
    discord-watch merge RUN_ID [--squash] [--json]
    discord-watch pr RUN_ID [--json]
    discord-watch discard RUN_ID [--yes] [--json]

``diff`` reads the run's folder and worktree and changes nothing, daemon or not: the patch
(``--stat``: the counts and files), or with ``--json`` ``{"ok": true, "run_id", "worktree",
"branch", "base_commit", "head_commit", "changes", "files", "landed", "patch"}``. ``merge``,
``pr`` and ``discard`` ask the running daemon (which journals them and updates the run's card
in Discord) and print ``{"ok": true, "run_id", "action", "message", "landed"}``. ``discard``
deletes the run's work: on a terminal it asks first; elsewhere it needs ``--yes``. Exit codes
as for the other run commands (:mod:`discord_mcp.watch.shell`): 0 done, 2 refused (a merge
conflict included: nothing was changed), 3 no daemon, 5 refused but worth trying again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from discord_mcp.runs.folders.folders import RunFolder, read_document
from discord_mcp.runs.git import worktrees
from discord_mcp.watch import run_client
from discord_mcp.watch.run_client import OK, REFUSED, ShellError, refused

COMMANDS = ("diff", "merge", "pr", "discard")
LANDING_WITHIN_S = 600.0
"""How long ``merge``, ``pr`` and ``discard`` wait for the daemon's answer (a push is slow)."""


def add_landing_commands(sub: Any) -> None:
    diff = sub.add_parser("diff", help="what a run changed (its patch), read-only")
    diff.add_argument("run_id", metavar="RUN_ID")
    diff.add_argument("--stat", action="store_true", help="only the counts and the files")
    merge = sub.add_parser("merge", help="merge a run's worktree into the branch it came from")
    merge.add_argument("run_id", metavar="RUN_ID")
    merge.add_argument("--squash", action="store_true", help="as one new commit")
    pr = sub.add_parser("pr", help="push a run's branch and open its pull request")
    pr.add_argument("run_id", metavar="RUN_ID")
    discard = sub.add_parser("discard", help="delete a run's worktree and branch (its work)")
    discard.add_argument("run_id", metavar="RUN_ID")
    discard.add_argument("--yes", action="store_true", help="do not ask first")
    for parser in (diff, merge, pr, discard):
        parser.add_argument("--json", action="store_true", help="print one JSON object")


def landing_main(args: argparse.Namespace, home: Path) -> int:
    from discord_mcp.watch.shell import ask, fail

    try:
        run_id = run_client.run_of(home, args.run_id)
        if args.command == "diff":
            return _diff(home, run_id, args)
        if args.command == "discard" and not args.yes and not _confirmed(home, run_id):
            raise ShellError(
                "E_CONFIRM",
                f"discarding run {run_id} deletes its worktree and branch (its work): confirm "
                "with --yes",
                REFUSED,
            )
        result = ask(
            home,
            "land",
            {"run_id": run_id, "action": args.command, "squash": bool(getattr(args, "squash", 0))},
            within=LANDING_WITHIN_S,
        )
    except ShellError as exc:
        return fail(exc, as_json=args.json)
    if args.json:
        _print({"ok": True, **result})
    else:
        sys.stdout.write(f"{result.get('message')}\n")
    return OK


def _confirmed(home: Path, run_id: str) -> bool:
    if not sys.stdin.isatty():
        return False
    record = worktrees.load(home, run_id) or {}
    changes = record.get("changes") or {}
    sys.stderr.write(
        f"Discard run {run_id}: remove its worktree and the branch {record.get('branch')} "
        f"({changes.get('files', 0)} files changed)? This cannot be undone. [y/N] "
    )
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def diff_document(home: Path, run_id: str) -> dict[str, Any]:
    """What ``diff --json`` prints (read-only)."""
    from discord_mcp.watch.landing.desk import run_patch

    folder = RunFolder.of(home, run_id)
    record = worktrees.load(home, run_id)
    result = read_document(folder.result) or {}
    if record is None and read_document(folder.session) is None:
        raise refused("E_RUN_NOT_FOUND", f"there is no run {run_id}: check the id")
    patch = asyncio.run(run_patch(home, run_id))
    source = record or result
    return {
        "run_id": run_id,
        "worktree": (record or {}).get("path"),
        "branch": source.get("branch"),
        "base_commit": source.get("base_commit"),
        "head_commit": source.get("head_commit"),
        "changes": source.get("changes"),
        "files": (record or {}).get("files"),
        "landed": source.get("landed"),
        "patch": patch.decode("utf-8", errors="replace"),
    }


def _diff(home: Path, run_id: str, args: argparse.Namespace) -> int:
    document = diff_document(home, run_id)
    if args.json:
        if args.stat:
            document.pop("patch")
        _print({"ok": True, **document})
        return OK
    if args.stat:
        changes = document.get("changes") or {}
        lines = [
            f"{run_id}: {changes.get('files', 0)} files, +{changes.get('insertions', 0)} "
            f"-{changes.get('deletions', 0)}"
        ]
        lines += [
            f"  {f['path']} +{f['insertions']} -{f['deletions']}"
            for f in document.get("files") or []
        ]
        sys.stdout.write("\n".join(lines) + "\n")
        return OK
    patch = document["patch"]
    sys.stdout.write(patch if patch.endswith("\n") or not patch else patch + "\n")
    return OK


def _print(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
