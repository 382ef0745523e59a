"""Decision files: ``<home>/decisions/<id>.json``, one per question.

Several processes share the directory (each agent session starts its own server; the watch
daemon too). Every change is a read-modify-write under the file's lock (:meth:`DecisionStore.
update`), and a resolution is a compare-and-set from ``pending``: exactly one process resolves a
decision, and nobody's answer is lost or overwritten.

Beside each ``<id>.json`` live two lock files that carry no data, only liveness:
``<id>.json.wait`` (held shared by every call waiting on the decision) and ``<id>.json.post``
(held while a process posts the decision's card, so nobody else posts it twice).
``.ask.lock`` serializes "is this question already pending? if not, create it" across processes,
so one question asked by several servers at once is one decision.

The synchronous methods lock and fsync: async code uses the ``a``-prefixed twins, which run them
off the event loop.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from pathlib import Path

from discord_mcp.decisions.model import FORMAT_VERSION, Decision
from discord_mcp.errors import DecisionNotFound, StateCorrupt, StateError
from discord_mcp.state.files import (
    ensure_dir,
    locked,
    move_aside,
    off_loop,
    read_json,
    write_json,
)
from discord_mcp.state.leases import Hold, acquire_shared, lease_alive, try_exclusive

log = logging.getLogger(__name__)

_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")


class DecisionStore:
    """The decision files under one state directory."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.directory = home / "decisions"
        self._decoded: dict[str, tuple[tuple[int, int, int], Decision]] = {}
        """Decisions read by :meth:`all`, by id, with the stamp of the file they came from: an
        unchanged file is not parsed again (a decision is read often, written rarely)."""

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

    def create_unless_pending(
        self,
        draft: Decision,
        same: Callable[[Decision], bool],
        *,
        max_bytes: int | None = None,
        containing: bytes | None = None,
    ) -> Decision | None:
        """Create ``draft`` unless a pending decision for which ``same`` holds exists already.

        Returns that existing decision, or None when ``draft`` was created. Atomic across
        processes: of several processes asking the same question at once, one creates it and
        the others get it back. ``max_bytes`` and ``containing`` narrow the files read (see
        :meth:`all`).
        """
        ensure_dir(self.directory)
        with locked(self.directory / ".ask"):
            for existing in self.all(max_bytes=max_bytes, containing=containing):
                if existing.status == "pending" and same(existing):
                    return existing
            self.create(draft)
            return None

    def discard(self, decision_id: str) -> None:
        """Remove a decision whose card could not be posted (nobody can answer it)."""
        path = self.path(decision_id)
        with locked(path):
            path.unlink(missing_ok=True)
        for suffix in (".lock", ".wait", ".post"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)

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
            if current.status == "pending" and changed.status == "answered":
                # Who was waiting when the answer came: if the asker dies before its answer is
                # marked delivered, the next session is told it may have had it already.
                changed = changed.replace(asker_waiting=self._someone_waits(path))
            write_json(path, changed.to_json())
            return changed, True

    def _someone_waits(self, path: Path) -> bool:
        probe = try_exclusive(path.with_name(path.name + ".wait"))
        if probe is None:
            return True
        probe.release()
        return False

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

    # ---- liveness (lock files with no data) ------------------------------------------------

    def hold_waiting(self, decision_id: str) -> Hold:
        """Say "a call is waiting on this decision" until the hold is released. Blocks briefly."""
        path = self.path(decision_id)
        return acquire_shared(path.with_name(path.name + ".wait"))

    def waited_on(self, decision_id: str) -> bool:
        """Whether a call is waiting on this decision right now."""
        path = self.path(decision_id)
        probe = try_exclusive(path.with_name(path.name + ".wait"))
        if probe is None:
            return True
        probe.release()
        return False

    def try_posting(self, decision_id: str) -> Hold | None:
        """Claim the posting of this decision's card; None while another process posts it."""
        path = self.path(decision_id)
        return try_exclusive(path.with_name(path.name + ".post"))

    def deliver_if_away(self, decision_id: str, *, adopt: str | None = None) -> Decision | None:
        """Hand a final, undelivered answer to a session other than the one that asked.

        Only when its answer "arrived while away": the asking process is gone and no call is
        waiting on it. Marks it delivered in the same step, so it reaches exactly one session;
        or, with ``adopt`` (the taking process's lease), makes that process its asker instead,
        which keeps every other session off it while that process lives: it marks it
        delivered once the answer has really left (a kill before that frees it again).
        Returns the decision if this call took it, else None.
        """

        def deliver(current: Decision) -> Decision | None:
            if not current.is_final or current.delivered:
                return None
            if adopt is not None:
                return current.replace(asker_lease=adopt)
            return current.replace(delivered=True)

        return self.update_if_away(decision_id, deliver)

    def update_if_away(
        self, decision_id: str, change: Callable[[Decision], Decision | None]
    ) -> Decision | None:
        """Apply ``change`` (as :meth:`update` does) only while the asking process is gone and
        no call waits on the decision; the decision if it was written, else None.

        What :meth:`deliver_if_away` and a run's late answer
        (:func:`discord_mcp.decisions.late.claim`) share: both hand an answer to someone other
        than the call that asked, so both must find nobody listening for it.
        """
        path = self.path(decision_id)
        probe = try_exclusive(path.with_name(path.name + ".wait"))
        if probe is None:
            return None  # someone is waiting on it right now: it is theirs
        try:

            def guarded(current: Decision) -> Decision | None:
                if lease_alive(self.home, current.asker_lease):
                    return None
                return change(current)

            stored, written = self.update(decision_id, guarded)
            return stored if written else None
        finally:
            probe.release()

    # ---- async twins (off the event loop) ---------------------------------------------------

    async def acreate(self, decision: Decision) -> None:
        await off_loop(self.create, decision)

    async def acreate_unless_pending(
        self,
        draft: Decision,
        same: Callable[[Decision], bool],
        *,
        max_bytes: int | None = None,
        containing: bytes | None = None,
    ) -> Decision | None:
        return await off_loop(
            self.create_unless_pending, draft, same, max_bytes=max_bytes, containing=containing
        )

    async def adiscard(self, decision_id: str) -> None:
        await off_loop(self.discard, decision_id)

    async def aupdate(
        self, decision_id: str, change: Callable[[Decision], Decision | None]
    ) -> tuple[Decision, bool]:
        return await off_loop(self.update, decision_id, change)

    async def afinish(self, decision_id: str, **outcome: object) -> tuple[Decision, bool]:
        return await off_loop(self.finish, decision_id, **outcome)

    async def ahold_waiting(self, decision_id: str) -> Hold:
        return await off_loop(self.hold_waiting, decision_id)

    async def adeliver_if_away(
        self, decision_id: str, *, adopt: str | None = None
    ) -> Decision | None:
        return await off_loop(self.deliver_if_away, decision_id, adopt=adopt)

    async def aall(self) -> list[Decision]:
        return await off_loop(self.all)

    async def ain_thread(self, thread_id: str) -> list[Decision]:
        return await off_loop(self.in_thread, thread_id)

    # ---- reading ----------------------------------------------------------------------------

    def all(
        self, *, max_bytes: int | None = None, containing: bytes | None = None
    ) -> list[Decision]:
        """Every readable decision, oldest first. Unreadable files are moved aside and logged.

        ``max_bytes``: skip files larger than this (left alone). ``containing``: files whose
        text lacks these bytes may be left out without being parsed (a cheap filter before
        JSON, such as a session id; callers still check what they read).
        """
        if not self.directory.is_dir():
            return []
        found: list[Decision] = []
        for name in sorted(os.listdir(self.directory)):
            if not name.endswith(".json") or not _ID.match(name[:-5]):
                continue
            decision_id = name[:-5]
            stamp = self.stamp(decision_id)
            if stamp is not None and max_bytes is not None and stamp[2] > max_bytes:
                log.info("%s is larger than %d bytes: skipped", name, max_bytes)
                continue
            cached = self._decoded.get(decision_id)
            if cached is not None and stamp is not None and cached[0] == stamp:
                found.append(cached[1])
                continue
            if containing is not None and not self._contains(decision_id, containing):
                continue
            try:
                decision = self.load(decision_id)
            except (StateCorrupt, StateError) as exc:
                log.error("%s", exc)
                continue
            except DecisionNotFound:
                continue  # removed between listing and reading
            if stamp is not None and self.stamp(decision_id) == stamp:
                self._decoded[decision_id] = (stamp, decision)
            found.append(decision)
        return found

    def in_thread(self, thread_id: str) -> list[Decision]:
        """Every decision asked in one thread (any status), oldest first."""
        return [d for d in self.all() if thread_id and d.thread_id == thread_id]

    def _contains(self, decision_id: str, marker: bytes) -> bool:
        try:
            return marker in self.path(decision_id).read_bytes()
        except FileNotFoundError:
            return False

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
        reason = f"bad decision: {exc}"[:200]
        raise StateCorrupt(str(path), reason, move_aside(path, reason)) from None
