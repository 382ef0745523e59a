"""Routing by interest: a follower is woken by the events of the threads it waits on, and no
others.

Theory. When every follower read every spooled event, twenty sessions answered at once each woke
for every other session's card, reactions, reply and card edit: twenty times the work, on two
cores. Now a follower says which threads it waits on, and the gateway holder appends each event
only to the *mailboxes* of the followers that want its thread. It still appends every event to
the spool (:mod:`~.spool`), which ``discord-watch`` follows when it does not hold the gateway,
and after whose last event a successor resumes the gateway session.

The state, under ``gateway/``, is plain files, so a holder that takes over, or one that comes up
after a follower registered, finds it there:

* ``interest/<thread id>/<follower>``: an empty file: ``<follower>`` wants the events of that
  thread (the ``channel_id`` of a message or a reaction, the ``id`` of a thread event);
* ``mail/<follower>.ndjson``: that follower's mailbox, spool lines which the holder appends and
  which only that follower reads, from the top. Past :data:`MAIL_ROTATE_BYTES` the holder puts
  an empty one in its place; the follower's reader holds the old one open and finishes it
  first, as with the spool's rotation.

``<follower>`` is the name of the follower process's lease (``leases/<name>.lock``, locked for
as long as the process lives: :mod:`~discord_mcp.state.leases`). Before the holder appends to a
mailbox it asks whether that lease is still held. A follower that died, however it died, then
has its interest in that thread and its mailbox removed, and a holder that starts removes every
dead follower's files. A dead follower costs the holder nothing past the next event in one of
its threads.

No answer is missed because of the route:

* a follower registers a question's thread before the card is posted in it (see
  :class:`~discord_mcp.decisions.service.DecisionService`), so every event that can answer it
  finds the interest in place, whichever holder reads it, or comes up later;
* the holder looks the interest up for each event (one directory listing, which fails at once
  for a thread nobody waits on) instead of keeping a copy that could be stale;
* the holder appends to the mailboxes before the spool. A holder killed in between has the event
  replayed to its successor (which resumes after the last event the spool holds), so a follower
  may get an event twice, never zero times;
* what is lost anyway (a mailbox that could not be written, a session that could not be resumed)
  is found by the waiting call's safety poll.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path

from discord_mcp.errors import StateError
from discord_mcp.state.files import FILE_MODE, ensure_dir
from discord_mcp.state.leases import lease_alive

log = logging.getLogger(__name__)

INTERESTS = "interest"
MAILBOXES = "mail"
MAIL_ROTATE_BYTES = 1_000_000
"""A mailbox is started afresh past this size: about a hundred questions' events."""
_ENTER_ATTEMPTS = 5


def thread_key(thread_id: str) -> str | None:
    """The name a thread's interests are filed under: its id, if it is a snowflake."""
    if thread_id and len(thread_id) <= 24 and thread_id.isascii() and thread_id.isdigit():
        return thread_id
    return None


def _follower_of(file_name: str) -> str | None:
    """The follower a file of ``mail/`` belongs to (a mailbox, or a rotation's leftover)."""
    name = file_name.lstrip(".")
    for suffix in (".ndjson.tmp", ".ndjson"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            return name or None
    return None


def _leave(interests: Path, key: str, name: str) -> None:
    """Remove ``name``'s interest in thread ``key``, and the thread's folder once empty."""
    with contextlib.suppress(FileNotFoundError):
        (interests / key / name).unlink()
    with contextlib.suppress(OSError):  # not empty: others want it too
        (interests / key).rmdir()


class Interests:
    """One follower's side: the threads it wants, and the mailbox the holder fills for it.

    Args:
        home: the state directory.
        name: the follower process's lease name (:class:`~discord_mcp.state.leases.ProcessLease`),
            which must stay held while this is open.
    """

    def __init__(self, home: Path, name: str) -> None:
        if not name or "/" in name or name.startswith("."):
            raise ValueError(f"not a lease name: {name!r}")
        gateway = home / "gateway"
        self.name = name
        self._interests = gateway / INTERESTS
        self.mailbox = gateway / MAILBOXES / f"{name}.ndjson"
        """The file the holder appends this follower's events to (:class:`~.spool.SpoolReader`
        it with ``at_end=False``)."""
        self._counts: dict[str, int] = {}
        ensure_dir(self._interests)
        ensure_dir(self.mailbox.parent)
        os.close(os.open(self.mailbox, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, FILE_MODE))

    def threads(self) -> set[str]:
        """The threads wanted now."""
        return set(self._counts)

    def want(self, thread_id: str) -> bool:
        """Ask for the events of ``thread_id`` (counted: each :meth:`want` needs a
        :meth:`drop`). False if the interest could not be recorded: the caller must then look
        for its news by itself (poll)."""
        key = thread_key(thread_id)
        if key is None:
            return False
        count = self._counts.get(key, 0)
        if not count:
            try:
                self._enter(key)
            except (OSError, StateError) as exc:
                log.warning("cannot ask for the events of thread %s (%s); polling it", key, exc)
                return False
        self._counts[key] = count + 1
        return True

    def _enter(self, key: str) -> None:
        entry = self._interests / key / self.name
        for _ in range(_ENTER_ATTEMPTS):
            ensure_dir(entry.parent)
            try:
                fd = os.open(entry, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
            except FileNotFoundError:
                continue  # the folder was emptied and removed meanwhile: make it again
            os.close(fd)
            return
        raise OSError(f"{entry.parent} keeps disappearing")

    def drop(self, thread_id: str) -> None:
        """No longer want the events of ``thread_id`` (once every :meth:`want` is dropped)."""
        key = thread_key(thread_id)
        if key is None or key not in self._counts:
            return
        self._counts[key] -= 1
        if self._counts[key] <= 0:
            del self._counts[key]
            _leave(self._interests, key, self.name)

    def close(self) -> None:
        """Want nothing any more, and remove the mailbox."""
        for key in self._counts:
            _leave(self._interests, key, self.name)
        self._counts.clear()
        with contextlib.suppress(FileNotFoundError):
            self.mailbox.unlink()


class Router:
    """The holder's side: hands each event to the followers that want its thread.

    Args:
        home: the state directory.
        own: this process's own follower name (its events reach it directly while it holds).
        alive: whether a follower's lease is still held (default: its lock, by
            :func:`~discord_mcp.state.leases.lease_alive`).
        rotate_bytes: a mailbox's size past which an empty one replaces it.
    """

    def __init__(
        self,
        home: Path,
        *,
        own: str | None = None,
        alive: Callable[[str], bool] | None = None,
        rotate_bytes: int = MAIL_ROTATE_BYTES,
    ) -> None:
        gateway = home / "gateway"
        self._interests = gateway / INTERESTS
        self._mail = gateway / MAILBOXES
        self._own = own
        self._alive = alive or (lambda name: lease_alive(home, name))
        self._rotate_bytes = rotate_bytes
        self.routed = 0
        """Events appended to a mailbox, counted per mailbox (tests read it)."""

    def route(self, thread_id: str, line: bytes) -> list[str]:
        """Append ``line`` (an :func:`~.spool.encode`-d event of that thread) to the mailbox of
        every live follower that wants ``thread_id``; returns their names. Never raises: a
        mailbox that cannot be written is logged and left to its follower's safety poll."""
        key = thread_key(thread_id)
        if key is None:
            return []
        try:
            names = os.listdir(self._interests / key)
        except OSError:  # nobody wants this thread (the usual case), or no folder yet
            return []
        sent = []
        for name in names:
            if name == self._own or name.startswith("."):
                continue
            try:
                if not self._alive(name):
                    self._forget(name, key)
                elif self._append(name, line):
                    sent.append(name)
            except OSError as exc:  # its lease or files cannot be looked at: skip it this time
                log.warning("cannot hand an event to follower %s: %s", name, exc)
        return sent

    def _append(self, name: str, line: bytes) -> bool:
        path = self._mail / f"{name}.ndjson"
        try:
            # Never created here: a follower that removed its mailbox is closing down.
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        except OSError as exc:
            log.warning("cannot hand an event to follower %s: %s", name, exc)
            return False
        try:
            os.write(fd, line)
            size = os.fstat(fd).st_size
        except OSError as exc:
            log.warning("cannot hand an event to follower %s: %s", name, exc)
            return False
        finally:
            os.close(fd)
        self.routed += 1
        if size >= self._rotate_bytes:
            self._rotate(path)
        return True

    def _rotate(self, path: Path) -> None:
        """An empty mailbox in place of a full one (its reader finishes the old one first)."""
        fresh = path.with_name(f".{path.name}.tmp")
        try:
            os.close(
                os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
            )
            os.replace(fresh, path)
        except OSError as exc:
            log.warning("cannot start a new mailbox in place of %s: %s", path.name, exc)

    def _forget(self, name: str, key: str) -> None:
        """A dead follower: its interest in this thread and its mailbox go."""
        log.info("follower %s is gone; removing its interest in thread %s", name, key)
        _leave(self._interests, key, name)
        with contextlib.suppress(FileNotFoundError):
            (self._mail / f"{name}.ndjson").unlink()

    def sweep(self) -> int:
        """Remove every dead follower's interests and mailbox (a holder starting); returns how
        many files went. Blocking file work: run it off the event loop."""
        verdicts: dict[str, bool] = {}

        def alive(name: str) -> bool:
            if name not in verdicts:
                verdicts[name] = self._alive(name)
            return verdicts[name]

        removed = 0
        with contextlib.suppress(FileNotFoundError):
            for folder in self._interests.iterdir():
                with contextlib.suppress(OSError):
                    for entry in folder.iterdir():
                        if entry.name.startswith(".") or not alive(entry.name):
                            with contextlib.suppress(FileNotFoundError):
                                entry.unlink()
                                removed += 1
                    with contextlib.suppress(OSError):
                        folder.rmdir()
        with contextlib.suppress(FileNotFoundError):
            for mailbox in self._mail.iterdir():
                name = _follower_of(mailbox.name)
                if name is None or not alive(name):
                    with contextlib.suppress(FileNotFoundError):
                        mailbox.unlink()
                        removed += 1
        return removed
