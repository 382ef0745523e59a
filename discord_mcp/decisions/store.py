"""Decision files: ``<home>/decisions/<id>.json``, one per question.

Several processes share the directory (each agent session starts its own server; the watch
daemon too). Every change is a read-modify-write under the file's lock (:meth:`DecisionStore.
update`), and a resolution is a compare-and-set from ``pending``: exactly one process resolves a
decision, and nobody's answer is lost or overwritten.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from pathlib import Path

from discord_mcp.decisions.model import FORMAT_VERSION, Decision
from discord_mcp.errors import DecisionNotFound, StateCorrupt, StateError
from discord_mcp.state.files import ensure_dir, locked, move_aside, read_json, write_json

log = logging.getLogger(__name__)

_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")


class DecisionStore:
    """The decision files under one state directory."""

    def __init__(self, home: Path) -> None:
        self.directory = home / "decisions"

    def path(self, decision_id: str) -> Path:
        """Where a decision's file lives.

        Raises:
            DecisionNotFound: the id is not of our form (so no path can escape the directory).
        """
        if not _ID.match(decision_id):
            raise DecisionNotFound(decision_id)
        return self.directory / f"{decision_id}.json"

    def create(self, decision: Decision) -> None:
        """Write a new decision's file."""
        ensure_dir(self.directory)
        path = self.path(decision.id)
        with locked(path):
            write_json(path, decision.to_json())

    def discard(self, decision_id: str) -> None:
        """Remove a decision whose card could not be posted (nobody can answer it)."""
        path = self.path(decision_id)
        with locked(path):
            path.unlink(missing_ok=True)
        path.with_name(path.name + ".lock").unlink(missing_ok=True)

    def load(self, decision_id: str) -> Decision:
        """Read a decision.

        Raises:
            DecisionNotFound: no such decision.
            StateCorrupt: its file is unreadable (it was moved aside).
        """
        path = self.path(decision_id)
        document = read_json(path, max_version=FORMAT_VERSION)
        if document is None:
            raise DecisionNotFound(decision_id)
        return _decode(path, document)

    def update(
        self, decision_id: str, change: Callable[[Decision], Decision | None]
    ) -> tuple[Decision, bool]:
        """Apply ``change`` to the current state under the lock.

        ``change`` gets the freshly read decision and returns the new one, or None to leave it
        as it is. Returns the decision as stored afterwards and whether it was written.
        """
        path = self.path(decision_id)
        with locked(path):
            current = self.load(decision_id)
            changed = change(current)
            if changed is None or changed == current:
                return current, False
            write_json(path, changed.to_json())
            return changed, True

    def finish(self, decision_id: str, **outcome: object) -> tuple[Decision, bool]:
        """Compare-and-set from ``pending`` to a final status.

        Returns the stored decision and True if this call made the move; (the decision as it
        already was, False) if it had been resolved before.
        """
        if outcome.get("status") not in ("answered", "cancelled", "expired"):
            raise ValueError("finish needs a final status")

        def resolve(current: Decision) -> Decision | None:
            return None if current.is_final else current.replace(**outcome)

        return self.update(decision_id, resolve)

    def all(self) -> list[Decision]:
        """Every readable decision, oldest first. Unreadable files are moved aside and logged."""
        if not self.directory.is_dir():
            return []
        found: list[Decision] = []
        for name in sorted(os.listdir(self.directory)):
            if not name.endswith(".json") or not _ID.match(name[:-5]):
                continue
            try:
                found.append(self.load(name[:-5]))
            except (StateCorrupt, StateError) as exc:
                log.error("%s", exc)
            except DecisionNotFound:
                continue  # removed between listing and reading
        return found

    def stamp(self, decision_id: str) -> tuple[int, int, int] | None:
        """A cheap fingerprint of the file; it changes whenever the file is rewritten.

        Every write renames a new file into place, so the inode changes even when two writes
        fall within one tick of the file system's clock.
        """
        try:
            info = os.stat(self.path(decision_id))
        except FileNotFoundError:
            return None
        return (info.st_ino, info.st_mtime_ns, info.st_size)


def _decode(path: Path, document: dict[str, object]) -> Decision:
    try:
        return Decision.from_json(dict(document))
    except (KeyError, TypeError, ValueError) as exc:
        raise StateCorrupt(str(path), f"bad decision: {exc}"[:200], move_aside(path)) from None
