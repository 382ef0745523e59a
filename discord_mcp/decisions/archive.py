"""Done decisions: out of the hot paths' way, and still there to read.

A decision is *open* while something may still happen to it: it is pending, or it is final but
its answer was not handed to an agent yet, or its card does not show the outcome yet (and may
still be made to, :data:`RESHOW_FINAL_DAYS`). Once nothing is left to do it is *done*, and
:meth:`~discord_mcp.decisions.store.DecisionStore.retire` moves it out of ``decisions/``, where
every hot path looks (routing a message, a hook, ``check_pending``, reminders), into
``decisions/done/<YYYY-MM>/<id>.json`` (the month the question was asked, read from its id). So
what a hot path reads is what is open, whatever the history.

A few readers need done decisions by what they belong to, without reading them all: the
decisions of a thread (routing a note to its project, archiving a thread, a run's calls that
were not run), of an asking session (the threads a session's inbox notes come from), of an
approval's CLI session (its session rules). :class:`Keys` keeps one small file per such key,
``decisions/done/keys/<ab>/<hash>.json`` (``{"version": 1, "key", "ids"}``), written before the
decision is moved, so a key always lists every done decision of it (a crash in between leaves
an id that is still open, which readers take from where it is).

:meth:`~discord_mcp.decisions.store.DecisionStore.history` is the one reader of the whole
history; :meth:`~discord_mcp.decisions.store.DecisionStore.load` finds a decision by id wherever
it is.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

from discord_mcp.decisions.model import FORMAT_VERSION, Decision
from discord_mcp.errors import DecisionNotFound, StateCorrupt, StateError
from discord_mcp.state.files import ensure_dir, fsync_dir, locked, read_json, write_json
from discord_mcp.state.leases import try_exclusive

log = logging.getLogger(__name__)

DONE = "done"
KEYS = "keys"
KEYS_VERSION = 1
RESHOW_FINAL_DAYS = 7
"""A final decision whose card does not show its outcome yet is shown by the next recovery
within this many days of its answer (:meth:`DecisionService.recover`); after that, never."""
_MONTH = re.compile(r"^[0-9]{4}-[0-9]{2}$")
_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")
_ID_FILE = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}\.json$")
SWEEP_BATCH = 500
"""Decisions retired per step of a sweep (their keys written together, then moved)."""
_FEW = 32
"""A step retiring more than this many writes its keys without an fsync each, then syncs once."""


def month_of(decision_id: str) -> str:
    """``2026-11`` for ``20261122-161503-9f3a1c``: where the done decision is kept."""
    return f"{decision_id[:4]}-{decision_id[4:6]}"


def retirable(decision: Decision, now: datetime) -> bool:
    """Whether nothing is left to happen to ``decision`` (see the module doc).

    Kept open: pending; an answer no agent received (a question's, or an approval's Allow:
    ``check_pending``, a hook, a late answer that resumes a run, or the retry of a late Allow
    takes it); a card that does not show the outcome while recovery may still show it.
    """
    if not decision.is_final:
        return False
    if (
        decision.status == "answered"
        and not decision.delivered
        and (decision.kind == "question" or decision.answer == "allow")
    ):
        return False
    if decision.card_message_id and not decision.final_shown:
        answered = _parsed(decision.answered_at) or _parsed(decision.asked_at)
        if answered is None or now - answered < timedelta(days=RESHOW_FINAL_DAYS):
            return False
    return True


def _parsed(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def thread_key(thread_id: str) -> str:
    return f"thread:{thread_id}"


def asker_key(session: str) -> str:
    return f"asker:{session}"


def approval_key(client: str, session_id: str) -> str:
    return f"approval:{client}:{session_id}"


def keys_of(decision: Decision) -> list[str]:
    """The keys a done decision is found by."""
    found = []
    if decision.thread_id:
        found.append(thread_key(decision.thread_id))
    if decision.session:
        found.append(asker_key(decision.session))
    approval = decision.approval or {}
    if decision.kind == "approval" and approval.get("client") and approval.get("session_id"):
        found.append(approval_key(str(approval["client"]), str(approval["session_id"])))
    return found


class Keys:
    """``decisions/done/keys/``: the ids of done decisions by key (module doc)."""

    def __init__(self, done: Path) -> None:
        self.directory = done / KEYS

    def path(self, key: str) -> Path:
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        return self.directory / digest[:2] / f"{digest}.json"

    def ids(self, key: str) -> list[str]:
        """The done decisions listed under ``key`` (an unreadable file lists none: it was
        moved aside and reported)."""
        try:
            document = read_json(self.path(key), max_version=KEYS_VERSION)
        except (StateCorrupt, StateError):
            return []
        if document is None or document.get("key") != key:
            return []
        return [str(i) for i in document.get("ids") or []]

    def add(self, entries: Mapping[str, Iterable[str]], *, durable: bool = True) -> None:
        """List ``ids`` under each key (each file under its lock)."""
        for key, ids in entries.items():
            path = self.path(key)
            with locked(path):
                try:
                    document = read_json(path, max_version=KEYS_VERSION)
                except StateCorrupt:
                    document = None  # moved aside and reported; the new file starts again
                if document is not None and document.get("key") != key:
                    raise StateError(f"{path} holds another key than {key!r}")
                known = set((document or {}).get("ids") or [])
                wanted = known | set(ids)
                if wanted != known or document is None:
                    write_json(
                        path,
                        {"version": KEYS_VERSION, "key": key, "ids": sorted(wanted)},
                        durable=durable,
                    )


def months(done: Path) -> list[str]:
    """The months that hold done decisions, oldest first."""
    try:
        names = os.listdir(done)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if _MONTH.match(n))


# ---- moving done decisions out of the open directory ---------------------------------------


class ArchivedStore(Protocol):
    """What retiring and reading the archive use of the decision store (:class:`~.store.
    DecisionStore` has it): its open ``directory``, its ``done`` archive and the archive's
    ``keys``, and its files."""

    @property
    def directory(self) -> Path: ...

    @property
    def done(self) -> Path: ...

    @property
    def durable(self) -> bool: ...

    @property
    def keys(self) -> Keys: ...

    def path(self, decision_id: str) -> Path: ...

    def done_path(self, decision_id: str) -> Path: ...

    def cached(self, decision_id: str) -> Decision: ...

    def load(self, decision_id: str) -> Decision: ...

    def forget(self, decision_id: str) -> None: ...


def with_done(
    store: ArchivedStore,
    found: dict[str, Decision],
    key: str,
    belongs: Callable[[Decision], bool],
    *,
    max_bytes: int | None = None,
) -> list[Decision]:
    """``found`` (open decisions, by id) with the done ones listed under ``key`` that
    ``belongs`` takes, oldest first; files over ``max_bytes`` and unreadable ones are skipped."""
    for decision_id in store.keys.ids(key):
        if decision_id in found or not _ID.match(decision_id):
            continue
        done = store.done_path(decision_id)
        if max_bytes is not None and _size(done) > max_bytes:
            log.info("%s is larger than %d bytes: skipped", done, max_bytes)
            continue
        try:
            decision = store.load(decision_id)
        except DecisionNotFound:
            continue
        except (StateCorrupt, StateError) as exc:
            log.error("%s", exc)
            continue
        if belongs(decision):
            found[decision.id] = decision
    return [found[i] for i in sorted(found)]


def history(store: ArchivedStore, since: datetime | None) -> Iterator[Decision]:
    """Every done decision (asked at ``since`` or later), oldest first. Unreadable files are
    logged and skipped."""
    floor = since.astimezone(UTC).strftime("%Y%m%d-%H%M%S") if since is not None else ""
    for month in months(store.done):
        if floor and month.replace("-", "") < floor[:6]:
            continue
        try:
            names = sorted(os.listdir(store.done / month))
        except FileNotFoundError:
            continue
        for name in names:
            if not name.endswith(".json") or not _ID.match(name[:-5]) or name < floor:
                continue
            try:
                yield store.load(name[:-5])
            except DecisionNotFound:
                continue
            except (StateCorrupt, StateError) as exc:
                log.error("%s", exc)


def done_count(done: Path) -> int:
    """How many decisions are done (names counted, nothing parsed)."""
    count = 0
    for month in months(done):
        with contextlib.suppress(OSError):
            count += sum(1 for n in os.listdir(done / month) if n.endswith(".json"))
    return count


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def sweep(store: ArchivedStore, now: datetime, stop: Callable[[], bool] | None = None) -> int:
    """Retire every open decision that is done (:func:`retirable`); how many moved.

    This is also the migration of a state directory from before the archive existed: its done
    decisions are all in ``decisions/``, and each step moves some of them. A crash loses
    nothing (each decision moves in one rename, after its keys were written), and the next
    sweep goes on where this one stopped. One sweep at a time per state directory (with another
    one under way, this returns 0 at once). ``stop``: asked between steps; True ends the sweep
    there (a process that is ending).
    """
    if not store.directory.is_dir():
        return 0
    turn = try_exclusive(store.directory / ".sweep")
    if turn is None:
        return 0
    try:
        names = sorted(os.listdir(store.directory))
        ids = [n[:-5] for n in names if _ID_FILE.match(n)]
        moved = 0
        for start in range(0, len(ids), SWEEP_BATCH):
            if stop is not None and stop():
                return moved
            found = []
            for decision_id in ids[start : start + SWEEP_BATCH]:
                with contextlib.suppress(DecisionNotFound, StateCorrupt, StateError):
                    found.append(store.cached(decision_id))
            moved += retire(store, [d for d in found if retirable(d, now)], now, stop)
        _tidy(store.directory, names)
        return moved
    finally:
        turn.release()


def retire(
    store: ArchivedStore,
    chosen: list[Decision],
    now: datetime,
    stop: Callable[[], bool] | None = None,
) -> int:
    """Move ``chosen`` to the archive, each if it is still done when read again under its lock
    and nobody waits on it or posts its card; how many moved. Their keys are written first.
    ``stop``: asked before each move; True ends it there."""
    if not chosen:
        return 0
    entries: dict[str, set[str]] = {}
    for decision in chosen:
        for key in keys_of(decision):
            entries.setdefault(key, set()).add(decision.id)
    many = store.durable and len(chosen) > _FEW
    store.keys.add(entries, durable=store.durable and not many)
    if many:
        os.sync()  # the keys are on disk before any decision moves (module doc)
    moved, months = 0, set()
    for decision in chosen:
        if stop is not None and stop():
            break
        if _retire_one(store, decision.id, entries, now):
            moved += 1
            months.add(month_of(decision.id))
    if moved and store.durable:
        fsync_dir(store.directory)
        for month in months:
            fsync_dir(store.done / month)
    return moved


def _retire_one(
    store: ArchivedStore, decision_id: str, written: dict[str, set[str]], now: datetime
) -> bool:
    path = store.path(decision_id)
    with locked(path):
        try:
            document = read_json(path, max_version=FORMAT_VERSION)
        except (StateCorrupt, StateError) as exc:
            log.error("%s", exc)
            return False
        if document is None:
            return False  # retired by someone else, or discarded
        try:
            current = Decision.from_json(dict(document))
        except (KeyError, TypeError, ValueError):
            return False  # the next reader quarantines it
        if not retirable(current, now):
            return False
        missing = {
            k: {decision_id} for k in keys_of(current) if decision_id not in written.get(k, ())
        }
        if missing:
            store.keys.add(missing, durable=store.durable)
        probes = []
        try:
            for suffix in (".wait", ".post"):
                probe = try_exclusive(path.with_name(path.name + suffix))
                if probe is None:
                    return False  # someone waits on it, or posts its card: not now
                probes.append(probe)
            target = store.done_path(decision_id)
            ensure_dir(target.parent)
            os.replace(path, target)
            for suffix in (".wait", ".post", ".lock"):
                path.with_name(path.name + suffix).unlink(missing_ok=True)
        finally:
            for probe in probes:
                probe.release()
    store.forget(decision_id)
    return True


def _tidy(directory: Path, names: list[str]) -> None:
    """Lock files left in ``decisions/`` by decisions that are no longer there."""
    present = set(names)
    for name in names:
        for suffix in (".lock", ".wait", ".post"):
            owner = name[: -len(suffix)]
            if not name.endswith(suffix) or owner in present or not _ID_FILE.match(owner):
                continue
            target = directory / name
            probe = try_exclusive(target)
            if probe is None:
                continue  # held right now
            try:
                if not (directory / owner).exists():
                    with contextlib.suppress(OSError):
                        target.unlink()
            finally:
                probe.release()
