"""Decision files: ``<home>/decisions/<id>.json``, one per open question; done ones in
``decisions/done/`` (:mod:`discord_mcp.decisions.archive`).

Several processes share the directory (each agent session starts its own server; the watch
daemon too). Every change is a read-modify-write under the file's lock (:meth:`DecisionStore.
update`), and a resolution is a compare-and-set from ``pending``: exactly one process resolves a
decision, and nobody's answer is lost or overwritten.

Beside each ``<id>.json`` live two lock files that carry no data, only liveness:
``<id>.json.wait`` (held shared by every call waiting on the decision) and ``<id>.json.post``
(held while a process posts the decision's card, so nobody else posts it twice).
``.ask.lock`` serializes "is this question already pending? if not, create it" across processes,
so one question asked by several servers at once is one decision.

Open and done apart: :meth:`DecisionStore.open_decisions` reads only ``decisions/``, what is
open; :meth:`DecisionStore.retire` (called by :meth:`DecisionStore.sweep`, which ``discord-watch``
and a server run from time to time) moves what is done into the dated archive, and
:meth:`DecisionStore.in_thread` and its kin read a thread's (or a session's) decisions wherever
they are. :meth:`~DecisionStore.load` and :meth:`~DecisionStore.update` find a decision by id in
either place: a decision only ever moves from open to done, never back.

The synchronous methods lock and fsync: async code uses the ``a``-prefixed twins, which run them
off the event loop.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from discord_mcp.decisions import archive
from discord_mcp.decisions.archive import DONE, Keys, month_of
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

    def __init__(self, home: Path, *, durable: bool = True) -> None:
        self.home = home
        self.directory = home / "decisions"
        self.done = self.directory / DONE
        self.keys = Keys(self.done)
        self.durable = durable
        """False only where a bench builds a long history: writes skip their fsyncs."""
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

    def done_path(self, decision_id: str) -> Path:
        """Where a decision lives once it is done (:mod:`~discord_mcp.decisions.archive`)."""
        self.path(decision_id)  # the id's form is checked
        return self.done / month_of(decision_id) / f"{decision_id}.json"

    def where(self, decision_id: str) -> Path:
        """The decision's file now: open, else done, else (neither) where it would be open."""
        path = self.path(decision_id)
        if path.exists():
            return path
        done = self.done_path(decision_id)
        return done if done.exists() else path

    def create(self, decision: Decision) -> None:
        """Write a new decision's file."""
        ensure_dir(self.directory)
        path = self.path(decision.id)
        with locked(path):
            write_json(path, decision.to_json(), durable=self.durable)

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
        :meth:`open_decisions`).
        """
        ensure_dir(self.directory)
        with locked(self.directory / ".ask"):
            for existing in self.open_decisions(max_bytes=max_bytes, containing=containing):
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
        if document is None:  # done, or moved there since we looked (never the other way)
            path = self.done_path(decision_id)
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
        if path.exists():
            with locked(path):
                if path.exists():  # not retired while we waited for the lock
                    return self._change(path, change)
        done = self.done_path(decision_id)
        if not done.exists():
            raise DecisionNotFound(decision_id)
        with locked(done):
            return self._change(done, change)

    def _change(
        self, path: Path, change: Callable[[Decision], Decision | None]
    ) -> tuple[Decision, bool]:
        """:meth:`update`'s read-modify-write of the file at ``path``, under its lock."""
        document = read_json(path, max_version=FORMAT_VERSION)
        if document is None:
            raise DecisionNotFound(path.name[:-5])
        current = _decode(path, document)
        changed = change(current)
        if changed is None or changed == current:
            return current, False
        if current.status == "pending" and changed.status == "answered":
            # Who was waiting when the answer came: if the asker dies before its answer is
            # marked delivered, the next session is told it may have had it already.
            changed = changed.replace(asker_waiting=self._someone_waits(path))
        write_json(path, changed.to_json(), durable=self.durable)
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
        path = self.where(decision_id)
        return acquire_shared(path.with_name(path.name + ".wait"))

    def waited_on(self, decision_id: str) -> bool:
        """Whether a call is waiting on this decision right now."""
        path = self.where(decision_id)
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
        path = self.where(decision_id)
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

    async def aopen_decisions(self) -> list[Decision]:
        return await off_loop(self.open_decisions)

    async def ain_thread(self, thread_id: str) -> list[Decision]:
        return await off_loop(self.in_thread, thread_id)

    async def asweep(self) -> int:
        """:meth:`sweep` in a worker thread; a cancelled call stops the sweep at its next step."""
        ending = threading.Event()
        try:
            return await off_loop(self.sweep, stop=ending.is_set)
        finally:
            ending.set()

    # ---- reading ----------------------------------------------------------------------------

    def open_decisions(
        self, *, max_bytes: int | None = None, containing: bytes | None = None
    ) -> list[Decision]:
        """Every readable open decision (the hot paths' view: done ones are not read), oldest
        first. Unreadable files are moved aside and logged.

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
                decision = self._read_open(decision_id, stamp)
            except (StateCorrupt, StateError) as exc:
                log.error("%s", exc)
                continue
            except DecisionNotFound:
                continue  # removed or retired between listing and reading
            found.append(decision)
        return found

    def _read_open(self, decision_id: str, stamp: tuple[int, int, int] | None) -> Decision:
        """An open decision's file, parsed and remembered with its stamp."""
        decision = self.read_open(decision_id)
        if stamp is not None and self.stamp(decision_id) == stamp:
            self._decoded[decision_id] = (stamp, decision)
        return decision

    def read_open(self, decision_id: str) -> Decision:
        """Parse an open decision's file (not a done one: DecisionNotFound then)."""
        path = self.path(decision_id)
        document = read_json(path, max_version=FORMAT_VERSION)
        if document is None:
            raise DecisionNotFound(decision_id)
        return _decode(path, document)

    def cached(self, decision_id: str) -> Decision:
        """An open decision, parsed again only if its file changed."""
        stamp = self.stamp(decision_id)
        cached = self._decoded.get(decision_id)
        if cached is not None and stamp is not None and cached[0] == stamp:
            return cached[1]
        return self._read_open(decision_id, stamp)

    def in_thread(self, thread_id: str) -> list[Decision]:
        """Every decision asked in one thread (any status, open or done), oldest first."""
        if not thread_id:
            return []
        return self._related(archive.thread_key(thread_id), lambda d: d.thread_id == thread_id)

    def of_asker(self, session: str) -> list[Decision]:
        """Every decision a session (by its label) asked, open or done, oldest first."""
        if not session:
            return []
        return self._related(archive.asker_key(session), lambda d: d.session == session)

    def of_approval_session(
        self, client: str, session_id: str, *, max_bytes: int | None = None
    ) -> list[Decision]:
        """Every approval of one CLI session, open or done, oldest first (only files that name
        the session are parsed; ``max_bytes`` as in :meth:`open_decisions`)."""
        if not session_id:
            return []

        def mine(decision: Decision) -> bool:
            approval = decision.approval or {}
            return (
                decision.kind == "approval"
                and approval.get("client") == client
                and approval.get("session_id") == session_id
            )

        marker = json.dumps(session_id, ensure_ascii=False).encode("utf-8")
        key = archive.approval_key(client, session_id)
        return self._related(key, mine, max_bytes=max_bytes, containing=marker)

    def _related(
        self,
        key: str,
        belongs: Callable[[Decision], bool],
        *,
        max_bytes: int | None = None,
        containing: bytes | None = None,
    ) -> list[Decision]:
        """The open decisions ``belongs`` takes, and the done ones listed under ``key``."""
        found = {
            d.id: d
            for d in self.open_decisions(max_bytes=max_bytes, containing=containing)
            if belongs(d)
        }
        return archive.with_done(self, found, key, belongs, max_bytes=max_bytes)

    def history(self, *, since: datetime | None = None) -> Iterator[Decision]:
        """Every done decision (asked at ``since`` or later), oldest first: the one reader of
        the whole history (:func:`.archive.history`)."""
        return archive.history(self, since)

    def done_count(self) -> int:
        """How many decisions are done (names counted, nothing parsed)."""
        return archive.done_count(self.done)

    # ---- retiring what is done (discord_mcp.decisions.archive) ---------------------------

    def sweep(self, *, now: datetime | None = None, stop: Callable[[], bool] | None = None) -> int:
        """Retire every open decision that is done; how many (:func:`.archive.sweep`: also the
        migration of a state directory from before the archive)."""
        return archive.sweep(self, now or datetime.now(UTC), stop)

    def retire(self, decisions: Iterable[Decision], *, now: datetime | None = None) -> int:
        """Move these decisions to the archive if they are still done (:func:`.archive.retire`)."""
        return archive.retire(self, list(decisions), now or datetime.now(UTC))

    def forget(self, decision_id: str) -> None:
        """Drop a decision from the parse cache (it moved)."""
        self._decoded.pop(decision_id, None)

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
