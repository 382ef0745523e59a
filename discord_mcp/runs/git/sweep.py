"""Abandoned worktrees: the ones ``discord-watch gc`` removes (issue 35).

A worktree is abandoned when its run is at rest (its ``session.json`` says completed, failed or
stopped) and has not been active for the given age. It is removed with its branch, and the
removal is recorded as the run's landing (``discarded`` by ``gc``), unless it holds work: a
commit that is in neither its base branch nor where it started, or uncommitted changes. Such a
worktree is kept and listed, unless ``force``. A folder under ``<state>/worktrees/`` that no run
folder describes is listed, and removed only with ``force``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.errors import DiscordMCPError
from discord_mcp.runs.folders.folders import AT_REST, RunFolder, is_run_id, read_document
from discord_mcp.runs.git import command, worktrees
from discord_mcp.runs.git.command import GitFailed
from discord_mcp.runs.git.landing import sync_result
from discord_mcp.runs.journal.model import parse_iso, utc_iso
from discord_mcp.state.files import off_loop
from discord_mcp.state.leases import try_exclusive


@dataclass(frozen=True)
class Swept:
    """One worktree gc looked at: ``removed``, ``kept`` or ``in_use``, and why."""

    run_id: str
    path: str
    outcome: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "path": self.path,
            "outcome": self.outcome,
            "why": self.reason,
        }


async def sweep(
    home: Path, *, older_than: float, now: float, force: bool = False, dry_run: bool = False
) -> list[Swept]:
    """Remove the abandoned worktrees under ``home`` (see the module doc)."""
    root = home / worktrees.WORKTREES
    try:
        names = sorted(await off_loop(os.listdir, root))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        path = root / name
        if not is_run_id(name) or not await off_loop(path.is_dir):
            continue
        found.append(await _one(home, name, path, older_than, now, force, dry_run))
    return found


async def _one(
    home: Path, run_id: str, path: Path, older_than: float, now: float, force: bool, dry: bool
) -> Swept:
    record = await off_loop(worktrees.load, home, run_id)
    if record is None:
        if not force:
            return Swept(
                run_id, str(path), "kept", "no run folder describes it (--force removes it)"
            )
        if not dry:
            with contextlib.suppress(GitFailed):
                await command.git(["worktree", "remove", "--force", str(path)], path, check=False)
            await off_loop(shutil.rmtree, path, ignore_errors=True)
        return Swept(run_id, str(path), "removed", "no run folder described it")
    folder = RunFolder.of(home, run_id)
    session = await off_loop(read_document, folder.session) or {}
    if session.get("state") not in AT_REST:
        return Swept(
            run_id, str(path), "in_use", f"the run is {session.get('state') or 'starting'}"
        )
    last = parse_iso(str(session.get("last_active_at") or record.get("created_at") or "")) or None
    age = now - last.timestamp() if last is not None else older_than
    if age < older_than:
        days = age / 86400
        return Swept(run_id, str(path), "kept", f"active {days:.1f} days ago")
    hold = await off_loop(try_exclusive, folder.root / "landing.lock")
    if hold is None:
        return Swept(run_id, str(path), "in_use", "a Merge, Open PR or Discard is under way")
    try:
        return await _abandoned(home, run_id, path, record, force, dry, now)
    finally:
        hold.release()


async def _abandoned(
    home: Path,
    run_id: str,
    path: Path,
    record: dict[str, Any],
    force: bool,
    dry: bool,
    now: float,
) -> Swept:
    try:
        commits = await worktrees.unmerged(record)
        changed = await worktrees.dirty(path)
    except (GitFailed, ValueError) as exc:
        if not force:
            return Swept(run_id, str(path), "kept", f"git could not tell what it holds ({exc})")
        commits, changed = 0, False
    if (commits or changed) and not force:
        held = []
        if commits:
            held.append(f"{commits} commit{'s' if commits != 1 else ''} not merged")
        if changed:
            held.append("uncommitted changes")
        return Swept(run_id, str(path), "kept", f"{' and '.join(held)} (--force removes it)")
    if dry:
        return Swept(run_id, str(path), "removed", "abandoned (dry run: nothing removed)")
    left = await worktrees.remove(record, delete_branch=True)
    when = utc_iso(now)
    why = "abandoned" + (f" with {commits} unmerged commits, forced" if commits else "")
    record["landed"] = {"action": "discarded", "at": when, "by": "gc", "via": "gc", "url": None}
    if left:
        record["landed"]["kept"] = left
    else:
        record["removed_at"] = when
    actions = list(record.get("actions") or [])
    actions.append(
        {
            "action": "discard",
            "ok": left is None,
            "at": when,
            "by": "gc",
            "via": "gc",
            "message": why,
        }
    )
    record["actions"] = actions[-100:]
    with contextlib.suppress(DiscordMCPError, OSError):
        await off_loop(worktrees.save, home, record)
        await off_loop(sync_result, home, record)
    return Swept(run_id, str(path), "removed" if left is None else "kept", left or why)
