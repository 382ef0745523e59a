"""The rate-limit ledger every process of one state directory shares, in a small file.

``<home>/ratelimits/<token id>.json`` holds one bot token's :class:`LedgerState` (the token id
is the first 16 hex digits of the token's SHA-256, so two bots in one state directory never
share counts, and the token itself is written nowhere). Each operation is one read-modify-write
under the file's OS lock (:func:`~discord_mcp.state.files.locked`), in a worker thread
(:func:`~discord_mcp.state.files.off_loop`), held for the few hundred microseconds of the change
and never across a request: :mod:`~discord_mcp.transport.ledger` explains why reservations,
not locks, keep the processes apart.

The file is a cache of what Discord's headers said, not a record: it is replaced without fsync
(a crash may lose it; the next responses rebuild it), a file that cannot be read is replaced
rather than quarantined, and a clock that went backwards (the machine restarted: the ledger
counts on ``time.monotonic``) forgets every window but keeps the hashes and limits. If the file
cannot be used at all (its lock stays taken for :data:`LOCK_WAIT_S`, the disk is full or
read-only), the process counts alone in memory, says so in the log, and tries the file again
every :data:`ALONE_S` (not at every request, which would each wait for the stuck lock).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from discord_mcp.config import Secret
from discord_mcp.errors import StateError
from discord_mcp.state.files import locked, off_loop, write_json
from discord_mcp.transport.ledger import LedgerState, forget
from discord_mcp.transport.ratelimit import RateLimiter
from discord_mcp.transport.waits import cap_waits

log = logging.getLogger(__name__)

DIRECTORY = "ratelimits"
POLL_S = 0.05
"""How often a request waiting for another process's response looks at the ledger again: a
fraction of a Discord round trip, and only while a window turns over or a limit is unknown."""
LOCK_WAIT_S = 2.0
"""The longest the ledger's lock is waited for. A change takes well under a millisecond, so a
lock held this long belongs to a stuck process; counting alone beats stalling the request."""
ALONE_S = 10.0
"""How long a process that could not use the file counts alone before it tries the file again:
a stuck lock then costs one request in a while :data:`LOCK_WAIT_S`, not every request."""

_T = TypeVar("_T")


def ledger_path(home: Path, token: Secret) -> Path:
    """Where the ledger of ``token`` lives in the state directory ``home``."""
    token_id = hashlib.sha256(token.reveal().encode("utf-8")).hexdigest()[:16]
    return home / DIRECTORY / f"{token_id}.json"


def shared_limiter(home: Path, token: Secret) -> RateLimiter:
    """The rate limiter of a server or daemon: its counts shared with every process of ``home``."""
    return RateLimiter(ledger=FileLedger.for_token(home, token))


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (ours always does; another user's counts as alive)."""
    if pid == os.getpid():
        return True
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class FileLedger:
    """The ledger in ``path``, shared by every process that opens the same file.

    Args:
        path: the ledger file (see :func:`ledger_path`).
        clock: monotonic seconds, the same for every process of the machine.
        alive: whether a process id still runs (injectable for tests).
        lock_wait: how long the file's lock is waited for before counting alone.
    """

    poll_interval: float | None = POLL_S

    def __init__(
        self,
        path: Path,
        *,
        clock: Callable[[], float] = time.monotonic,
        alive: Callable[[int], bool] = process_alive,
        lock_wait: float = LOCK_WAIT_S,
    ) -> None:
        self.path = path
        self._clock = clock
        self._alive = alive
        self._lock_wait = lock_wait
        self._alone: LedgerState | None = None
        """This process's own counts while the file cannot be used."""
        self._alone_until = 0.0
        """Ledger time before which the file is not tried again."""
        self._alone_lock = threading.Lock()
        """Requests run their operations in several worker threads; one at a time here."""

    @classmethod
    def for_token(cls, home: Path, token: Secret) -> FileLedger:
        """The shared ledger of ``token`` in the state directory ``home``."""
        return cls(ledger_path(home, token))

    async def apply(self, operation: Callable[[LedgerState, float], _T]) -> _T:
        return await off_loop(self._apply, operation)

    def _apply(self, operation: Callable[[LedgerState, float], _T]) -> _T:
        alone = self._alone  # read once: another worker thread may change it
        if alone is not None and self._clock() < self._alone_until:
            return self._apply_alone(alone, operation)
        try:
            with locked(self.path, wait=self._lock_wait):
                now = self._clock()
                state, written = self._read(now)
                cut = cap_waits(state, now)
                forget(state, now, alive=self._alive)
                before = state.to_json()
                result = operation(state, now)
                after = state.to_json()
                if cut or after != before or written is None or written > now:
                    write_json(self.path, {**after, "written": now}, durable=False)
            if self._alone is not None:
                log.warning("the rate-limit ledger %s is usable again", self.path)
                self._alone = None
            return result
        except StateError as exc:
            alone = self._alone
            if alone is None:
                log.warning(
                    "the rate-limit ledger cannot be used (%s); this process counts its own "
                    "requests until it can",
                    exc,
                )
                alone = self._alone = LedgerState()
            self._alone_until = self._clock() + ALONE_S
            return self._apply_alone(alone, operation)

    def _apply_alone(self, state: LedgerState, operation: Callable[[LedgerState, float], _T]) -> _T:
        with self._alone_lock:
            now = self._clock()
            forget(state, now, alive=self._alive)
            return operation(state, now)

    def _read(self, now: float) -> tuple[LedgerState, float | None]:
        """The stored state and when it was written; an empty state if there is none usable."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return LedgerState(), None
        except OSError as exc:
            log.warning(
                "cannot read the rate-limit ledger %s (%s); starting afresh", self.path, exc
            )
            return LedgerState(), None
        try:
            document = json.loads(raw)
            state = LedgerState.from_json(document)
            written = float(document["written"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning(
                "the rate-limit ledger %s is unreadable (%s); starting afresh", self.path, exc
            )
            return LedgerState(), None
        if written > now:
            # The monotonic clock went backwards: the machine restarted since this was written.
            state.forget_windows()
        return state, written
