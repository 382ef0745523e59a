"""Run folders do not pile up: which old ``runs/<run_id>/`` folders go, and which never do.

The policy is ``DISCORD_MCP_KEEP_RUNS``: a count, an age, or both (``500``, ``90d``,
``500,90d``; the default is ``500,90d``; ``all`` keeps every folder). Each part *keeps*
folders, and a folder stays while any part keeps it (as backup tools' keep rules add up): with
``500,90d``, the newest 500 runs and every run active in the last 90 days stay, and a folder
goes once it is neither. Newest means by run id (ids sort by when the run was made); active
means its ``session.json``'s ``last_active_at`` (else its ``created_at``, else the folder's own
time).

Whatever the policy, a folder is never removed while a *keeper* says why it must stay. The
keepers here: a run that is not at rest (its ``session.json`` says so, or the journal still has
a job of its session running or queued), a run just claimed that has no session yet, a landing
under way (``landing.lock`` held). The worktree side adds its own (a run whose worktree is still
there: :func:`discord_mcp.runs.git.worktrees.keeps_run_folder`); :func:`sweep_runs` takes the list,
and ``discord-watch gc`` and the daemon's own sweep pass the same one
(:data:`discord_mcp.watch.gc.RUN_KEEPERS`).

A removed folder is gone with its logs, transcript, patch and result; the journal still knows the
session (its thread, tool and CLI session), so the thread can go on, in a new folder, and the
engine's start-up never writes into a folder that was removed
(:meth:`~discord_mcp.runs.folders.recorder.RunRecorder.reconcile`). Blocking: call it off the event
loop."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.errors import ConfigError, DiscordMCPError
from discord_mcp.runs.folders.folders import AT_REST, RunFolder, is_run_id, read_document
from discord_mcp.runs.journal import journal
from discord_mcp.runs.journal.model import parse_iso
from discord_mcp.state.leases import try_exclusive

ENV = "DISCORD_MCP_KEEP_RUNS"
DEFAULT = "500,90d"
STARTING_S = 3600.0
"""A run whose request was claimed but has no session yet is young for this long: the daemon
may be about to start it (older ones are the leftovers of a crash, written off at start-up)."""
_AGE = re.compile(r"^(\d+)\s*([dhm])$")
_UNIT_S = {"d": 86400.0, "h": 3600.0, "m": 60.0}


@dataclass(frozen=True)
class KeepRuns:
    """What ``DISCORD_MCP_KEEP_RUNS`` keeps: the newest ``count`` runs and those active within
    ``age_s`` seconds (None: that rule is not set; both None: everything is kept)."""

    count: int | None = 500
    age_s: float | None = 90 * 86400.0

    @property
    def keeps_all(self) -> bool:
        return self.count is None and self.age_s is None

    @classmethod
    def parse(cls, text: str) -> KeepRuns:
        """``500``, ``90d``, ``500,90d`` (also ``36h``, ``90m``), or ``all``.

        Raises:
            ConfigError: anything else.
        """
        cleaned = text.strip().lower()
        if cleaned in ("all", "off"):
            return cls(None, None)
        count: int | None = None
        age: float | None = None
        parts = [p.strip() for p in re.split(r"[,\s]+", cleaned) if p.strip()]
        for part in parts:
            if part.isdigit() and count is None and int(part) > 0:
                count = int(part)
                continue
            matched = _AGE.match(part)
            if matched and age is None and int(matched[1]) > 0:
                age = int(matched[1]) * _UNIT_S[matched[2]]
                continue
            raise ConfigError(
                ENV,
                f"{text!r} is not a run count and/or an age",
                "Write how many runs to keep and/or for how long, e.g. 500, 90d or 500,90d "
                "(a folder stays while either keeps it); all keeps every run folder",
            )
        if count is None and age is None:
            return cls()
        return cls(count, age)


def keep_runs(environ: Mapping[str, str]) -> KeepRuns:
    """The policy from the environment (the default when unset).

    Raises:
        ConfigError: a value that is not a count and/or an age.
    """
    raw = environ.get(ENV, "").strip()
    return KeepRuns.parse(raw) if raw else KeepRuns()


Keeper = Callable[[Path, RunFolder], str | None]
"""``keeper(home, folder)``: why the folder must stay (a sentence), or None. Blocking."""


@dataclass(frozen=True)
class Swept:
    """A run folder the sweep removed, or would have removed but a keeper kept, and why."""

    run_id: str
    path: str
    outcome: str  # removed | kept
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "path": self.path,
            "outcome": self.outcome,
            "why": self.reason,
        }


def not_at_rest(home: Path, folder: RunFolder) -> str | None:
    """A run whose ``session.json`` says it is not at rest, or claimed and not started yet."""
    session = read_document(folder.session)
    if session is not None:
        state = session.get("state")
        return None if state in AT_REST else f"the run is {state or 'starting'}"
    if folder.result.exists():
        return None
    try:
        age = dt.datetime.now(dt.UTC).timestamp() - folder.root.stat().st_mtime
    except OSError:
        return None
    return "the run is starting" if age < STARTING_S else None


def landing(home: Path, folder: RunFolder) -> str | None:
    """A Merge, Open PR or Discard under way (its lock is held)."""
    lock = folder.root / "landing.lock"
    if not lock.exists():
        return None
    hold = try_exclusive(lock)
    if hold is None:
        return "a Merge, Open PR or Discard is under way"
    hold.release()
    return None


KEEPERS: tuple[Keeper, ...] = (not_at_rest, landing)
"""The keepers of this module (the worktree side adds its own: see the module doc)."""


def busy_runs(home: Path) -> set[str]:
    """Run ids whose session has a job running or queued in the journal (read-only; a journal
    that cannot be read keeps every run: nothing is removed on doubt).

    Raises:
        DiscordMCPError: the journal cannot be read.
    """
    state = journal.load(home / "runs").state
    busy = set()
    for session in state.sessions.values():
        if session.run_id and (session.running_job_id or session.queue):
            busy.add(session.run_id)
    return busy


def sweep_runs(
    home: Path,
    policy: KeepRuns,
    *,
    now: float,
    keepers: Sequence[Keeper] = KEEPERS,
    dry_run: bool = False,
    stop: Callable[[], bool] | None = None,
) -> list[Swept]:
    """Remove the run folders ``policy`` no longer keeps and no keeper holds (module doc).

    Returns each folder removed (or, with ``dry_run``, that would be) and each that the policy
    let go but a keeper kept. ``stop``: asked between folders; True ends the sweep there.
    """
    if policy.keeps_all:
        return []
    runs = home / "runs"
    try:
        names = sorted((n for n in os.listdir(runs) if is_run_id(n)), reverse=True)
    except FileNotFoundError:
        return []
    candidates = names[policy.count :] if policy.count is not None else names
    if not candidates:
        return []
    try:
        busy = busy_runs(home)
    except DiscordMCPError as exc:
        return [Swept("", str(runs), "kept", f"the run journal cannot be read ({exc})")]
    found = []
    for run_id in candidates:
        if stop is not None and stop():
            break
        folder = RunFolder.of(home, run_id)
        if not folder.root.is_dir():
            continue
        if policy.age_s is not None and now - _active_at(folder) < policy.age_s:
            continue
        reason = "its session has a job running or queued" if run_id in busy else None
        for keeper in keepers:
            if reason is not None:
                break
            reason = keeper(home, folder)
        if reason is not None:
            found.append(Swept(run_id, str(folder.root), "kept", reason))
            continue
        why = _why(policy) + (" (dry run: nothing removed)" if dry_run else "")
        if not dry_run:
            shutil.rmtree(folder.root, ignore_errors=True)
            if folder.root.exists():
                found.append(Swept(run_id, str(folder.root), "kept", "could not remove it all"))
                continue
        found.append(Swept(run_id, str(folder.root), "removed", why))
    return found


def _active_at(folder: RunFolder) -> float:
    """When the run was last active (epoch seconds; module doc)."""
    session = read_document(folder.session) or {}
    for field in ("last_active_at", "created_at"):
        moment = parse_iso(str(session.get(field) or ""))
        if moment is not None:
            return moment.timestamp()
    with contextlib.suppress(OSError):
        return folder.root.stat().st_mtime
    return 0.0


def _why(policy: KeepRuns) -> str:
    rules = []
    if policy.count is not None:
        rules.append(f"not among the newest {policy.count} runs")
    if policy.age_s is not None:
        rules.append(f"inactive for more than {_span(policy.age_s)}")
    return " and ".join(rules) + f" ({ENV})"


def _span(seconds: float) -> str:
    for unit, size in (("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds)} s"
