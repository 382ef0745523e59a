"""Waking up when a file changes, instead of looking at it over and over.

An idle session must cost nothing: a follower sleeps until the holder appends to the spool or
lets the gateway go, and a waiting call sleeps until its decision file is rewritten. On Linux one
inotify instance per process watches the few directories involved (``gateway/``,
``decisions/``) and wakes the subscribers whose file names changed. Elsewhere, or when the
kernel refuses an instance or a watch (``fs.inotify.max_user_instances``), a subscription says
it is not :attr:`~Subscription.notified` and its owner polls at its own fallback interval.

What counts as a change: a write (``IN_MODIFY``), a file opened for writing being closed
(``IN_CLOSE_WRITE``, also when its process dies), a file created, deleted or renamed into or
out of place. An overflow of the kernel's queue wakes every subscriber.

Files that are only ever replaced whole (written to a temporary file and renamed into place, as
every state file is: ``replaced=True``) are watched one by one instead: the watch is on the
file itself, which the kernel reports when a rename replaces it or it is removed, and is then
moved to the file now in its place. Twenty sessions answering at once each rewrite their own
decision three times; a watch of ``decisions/`` would wake every session for all of them, and
for every temporary and lock file besides, where a watch of the file wakes only its own. A file
that does not exist yet is watched through its directory (renames and deletions only) until it
does.

Files that are written in place (appended to by another process, or held open for writing by
it) can be watched one by one too (``writes=``: the in-place events wanted, such as
:data:`MODIFIED` or :data:`CLOSED`): a follower's mailbox, appended to by the gateway holder,
wakes its follower only, and the holder's presence file only when it is closed. Such a file that
does not exist yet is watched through its directory until it is created.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import struct
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

IN_MODIFY = 0x002
IN_CLOSE_WRITE = 0x008
IN_ATTRIB = 0x004
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_MASK_ADD = 0x20000000
REPLACED = IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE
"""The events of files that are only replaced whole (renamed into place) or removed."""
WRITTEN = REPLACED | IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE
"""The events of files that are also written in place (appended to, held open for writing)."""
MODIFIED = IN_MODIFY
"""``writes=``: wake when the file is written to (appended)."""
CLOSED = IN_CLOSE_WRITE
"""``writes=``: wake when a process that had the file open for writing closes it (or dies)."""
FILE = IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF
"""The events of a watched file that is replaced (its last link goes: ``IN_ATTRIB``), removed or
moved away."""
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)
_READ_BYTES = 64 * 1024


class Subscription:
    """Interest in some file names of one directory.

    ``event`` is set when one of them changes (and may be shared with other wakers); the names
    that changed since :meth:`take` accumulate in :attr:`changed`.
    """

    def __init__(
        self,
        owner: FileChanges,
        directory: Path,
        names: frozenset[str],
        event: asyncio.Event,
        notified: bool,
    ) -> None:
        self._owner = owner
        self.directory = directory
        self.names = names
        self.event = event
        self.notified = notified
        """Whether changes are reported; if not, the owner must poll."""
        self.changed: set[str] = set()

    def _fire(self, name: str | None) -> None:
        self.changed.update(self.names if name is None else {name})
        self.event.set()

    def take(self) -> set[str]:
        """The names that changed since the last call, and clear the event."""
        changed, self.changed = self.changed, set()
        self.event.clear()
        return changed

    async def wait(self, seconds: float) -> bool:
        """Sleep until a change is reported or ``seconds`` pass; whether it was a change."""
        return await _set_within(self.event, seconds)

    def close(self) -> None:
        self._owner._unsubscribe(self)


class FileChanges:
    """One process's change notifications (an inotify instance on Linux, nothing elsewhere).

    Created without a running loop; started by the first :meth:`subscribe` on the loop it is
    used from. :meth:`close` it when done (it holds a file descriptor).

    Args:
        enabled: False to never use notifications (tests of the polling fallback).
    """

    def __init__(self, *, enabled: bool = True) -> None:
        self._enabled = enabled and sys.platform.startswith("linux")
        self._fd: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wds: dict[Path, int] = {}
        """Directory -> its watch."""
        self._masks: dict[Path, int] = {}
        self._files: dict[int, Path] = {}
        """Watch -> the file it is on (the file's watches are not in ``_wds``)."""
        self._file_masks: dict[int, int] = {}
        """Watch of a file -> the events it reports."""
        self._subscriptions: dict[int, set[Subscription]] = {}
        """Watch (of a directory or a file) -> who is interested."""
        self._libc: Any = None
        self.wakeups = 0
        """How many times the kernel woke this process (tests count them)."""
        self.events = 0
        """How many events the kernel reported (tests count them)."""

    async def __aenter__(self) -> FileChanges:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def subscribe(
        self,
        directory: Path,
        names: Iterable[str],
        *,
        event: asyncio.Event | None = None,
        replaced: bool = False,
        writes: int = 0,
    ) -> Subscription:
        """Be told when any of ``names`` in ``directory`` changes (the directory must exist).

        ``replaced``: these files are only ever renamed into place or removed (atomic writes):
        each is watched itself (see the module), so other files of the directory never wake
        this process. ``writes`` (:data:`MODIFIED`, :data:`CLOSED` or both): these files are
        also written in place, and each is watched itself for those writes as well.
        """
        names = frozenset(names)
        subscription = Subscription(self, directory, names, event or asyncio.Event(), False)
        if (replaced or writes) and self._start():
            wds = [self._watch_file(directory / name, FILE | writes) for name in names]
            if all(wd is not None for wd in wds):
                for wd in wds:
                    self._subscriptions.setdefault(wd, set()).add(subscription)  # type: ignore[arg-type]
                subscription.notified = True
                return subscription
            self._forget_unwatched()
        wd = self._watch(directory, _absent(writes) if (replaced or writes) else WRITTEN)
        if wd is not None:
            self._subscriptions.setdefault(wd, set()).add(subscription)
            subscription.notified = True
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        for subscriptions in self._subscriptions.values():
            subscriptions.discard(subscription)
        self._forget_unwatched()

    def _forget_unwatched(self) -> None:
        """Remove the watches of files nobody is interested in any more."""
        for wd in [wd for wd in self._files if not self._subscriptions.get(wd)]:
            del self._files[wd]
            self._file_masks.pop(wd, None)
            self._subscriptions.pop(wd, None)
            if self._fd is not None:
                self._libc.inotify_rm_watch(self._fd, wd)  # its IN_IGNORED is then dropped

    def close(self) -> None:
        """Stop watching; every subscription falls back to polling and is woken once."""
        if self._fd is not None:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(self._fd)
            os.close(self._fd)
            self._fd = None
        self._enabled = False
        self._wds.clear()
        self._masks.clear()
        self._files.clear()
        self._file_masks.clear()
        for subscriptions in self._subscriptions.values():
            for subscription in subscriptions:
                subscription.notified = False
                subscription._fire(None)
        self._subscriptions.clear()

    # ---- the kernel side --------------------------------------------------------------------

    def _start(self) -> bool:
        if self._fd is not None:
            return True
        if not self._enabled:
            return False
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError) as exc:
            log.info("no file change notifications (%s); polling instead", exc)
            self._enabled = False
            return False
        if fd < 0:
            log.info(
                "no file change notifications (%s); polling instead",
                os.strerror(ctypes.get_errno()),
            )
            self._enabled = False
            return False
        self._libc, self._fd = libc, fd
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(fd, self._readable)
        return True

    def _watch(self, directory: Path, mask: int) -> int | None:
        """The watch of ``directory``, widened to ``mask`` if it reports less (one watch per
        directory: every subscription to it shares the union of their events)."""
        if not self._start():
            return None
        known = self._masks.get(directory, 0)
        if directory in self._wds and known | mask == known:
            return self._wds[directory]
        import ctypes

        wd = self._libc.inotify_add_watch(
            self._fd, os.fsencode(directory), mask | (IN_MASK_ADD if known else 0)
        )
        if wd < 0:
            log.info(
                "cannot watch %s (%s); polling it instead",
                directory,
                os.strerror(ctypes.get_errno()),
            )
            return None
        self._wds[directory] = wd
        self._masks[directory] = known | mask
        return int(wd)

    def _watch_file(self, path: Path, mask: int) -> int | None:
        """A watch on the file at ``path`` reporting ``mask`` (shared with other subscriptions
        to it, and then reporting what each of them wants); None if it does not exist or cannot
        be watched."""
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), mask | IN_MASK_ADD)
        if wd < 0:
            return None
        self._files[wd] = path
        self._file_masks[wd] = self._file_masks.get(wd, 0) | mask
        return int(wd)

    def _replaced(self, wd: int) -> None:
        """The file of watch ``wd`` was replaced, removed or moved away: wake its subscribers,
        then watch what is at its path now. That happens before any of them can read the file,
        so a change after their read is reported by the new watch."""
        path = self._files.pop(wd)
        mask = self._file_masks.pop(wd, FILE)
        subscriptions = self._subscriptions.pop(wd, set())
        for subscription in subscriptions:
            subscription._fire(path.name)
        new = self._watch_file(path, mask) if subscriptions else None
        if new != wd and self._fd is not None:
            # The old file's watch (it may live on while a reader holds the file open); its
            # IN_IGNORED then finds no watch here and is dropped.
            self._libc.inotify_rm_watch(self._fd, wd)
        if not subscriptions:
            return
        if new is None:  # gone: its directory tells when a file is put in its place
            new = self._watch(path.parent, _absent(mask & ~FILE))
        if new is None:
            for subscription in subscriptions:
                subscription.notified = False
            return
        self._subscriptions.setdefault(new, set()).update(subscriptions)

    def _readable(self) -> None:
        self.wakeups += 1
        assert self._fd is not None
        while True:
            try:
                data = os.read(self._fd, _READ_BYTES)
            except BlockingIOError:
                return
            except OSError as exc:
                log.warning("file change notifications failed (%s); polling instead", exc)
                self.close()
                return
            if not data:
                return
            self._dispatch(data)

    def _dispatch(self, data: bytes) -> None:
        offset = 0
        while offset + _HEADER.size <= len(data):
            wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
            raw = data[offset + _HEADER.size : offset + _HEADER.size + length]
            offset += _HEADER.size + length
            self.events += 1
            name = os.fsdecode(raw.rstrip(b"\0")) if length else ""
            if mask & IN_Q_OVERFLOW:
                # Events were lost: a watched file may have been replaced unseen, so watch
                # what is at each path now; wake everyone.
                for watched in list(self._files):
                    self._replaced(watched)
                for subscriptions in list(self._subscriptions.values()):
                    for subscription in subscriptions:
                        subscription._fire(None)
            elif wd in self._files:
                if mask & (FILE | IN_IGNORED):
                    self._replaced(wd)
                else:  # written in place
                    for subscription in self._subscriptions.get(wd, ()):
                        subscription._fire(self._files[wd].name)
            elif mask & IN_IGNORED:  # the directory is gone: its subscribers must poll
                for subscription in self._subscriptions.pop(wd, set()):
                    subscription.notified = False
                    subscription._fire(None)
                for directory, known in list(self._wds.items()):
                    if known == wd:
                        del self._wds[directory]
                        self._masks.pop(directory, None)
            else:
                for subscription in self._subscriptions.get(wd, ()):
                    if name in subscription.names:
                        subscription._fire(name)


def _absent(writes: int) -> int:
    """What a directory reports of a watched file that is not there: renamed into place, and
    for a file written in place, also created."""
    return REPLACED | (IN_CREATE if writes else 0)


@contextlib.contextmanager
def subscribed(
    changes: FileChanges | None,
    directory: Path,
    names: Iterable[str],
    *,
    event: asyncio.Event | None = None,
    replaced: bool = False,
    writes: int = 0,
) -> Iterator[Subscription]:
    """A subscription for the duration of a block (an unnotified one without ``changes``)."""
    if changes is None:
        changes = _NEVER
    subscription = changes.subscribe(
        directory, names, event=event, replaced=replaced, writes=writes
    )
    try:
        yield subscription
    finally:
        subscription.close()


class Watches:
    """Several subscriptions (files watched in different ways) that wake one sleeper.

    Reads like one :class:`Subscription`: :meth:`take`, :meth:`wait`, :attr:`notified`.
    """

    def __init__(self, changes: FileChanges | None) -> None:
        self._changes = changes or _NEVER
        self.event = asyncio.Event()
        self._subscriptions: list[Subscription] = []

    def add(
        self, directory: Path, names: Iterable[str], *, replaced: bool = False, writes: int = 0
    ) -> None:
        self._subscriptions.append(
            self._changes.subscribe(
                directory, names, event=self.event, replaced=replaced, writes=writes
            )
        )

    @property
    def notified(self) -> bool:
        """Whether every change is reported; if not, the owner must poll."""
        return bool(self._subscriptions) and all(s.notified for s in self._subscriptions)

    def take(self) -> set[str]:
        """The names that changed since the last call, and clear the event."""
        changed: set[str] = set()
        for subscription in self._subscriptions:
            changed |= subscription.take()
        self.event.clear()
        return changed

    async def wait(self, seconds: float) -> bool:
        """Sleep until a change is reported or ``seconds`` pass; whether it was a change."""
        return await _set_within(self.event, seconds)

    def close(self) -> None:
        for subscription in self._subscriptions:
            subscription.close()
        self._subscriptions.clear()


_NEVER = FileChanges(enabled=False)


async def _set_within(event: asyncio.Event, seconds: float) -> bool:
    """Whether ``event`` is set now or within ``seconds``."""
    if event.is_set():
        return True
    try:
        async with asyncio.timeout(max(seconds, 0.0)):
            await event.wait()
    except TimeoutError:
        return False
    return True
