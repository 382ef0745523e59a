"""What the daemon has processed, per channel and thread, so catch-up handles each message once.

``watch/cursors.json``: for each watched channel or thread, ``cursor`` (every message up to it
was handled) and ``handled`` (messages after it handled live, from the gateway). Catch-up reads
Discord's history after the cursor, skips what was handled live, then moves the cursor; so a
message missed live (during a holder handover, say) is still processed, and none twice.
``retired`` lists threads that are gone (deleted, or the bot lost access): they are not read
again, unless a message from one arrives live.

Resting threads (issue 38). A thread Discord no longer lists among the guild's active ones
(archived: a question's thread once it is done, any thread after its auto-archive time), with no
message for :data:`QUIET_S`, *rests*; so does any thread with no message for
:data:`REST_AFTER_S` (a week: archived by then, whatever its setting) when the active list could
not be had. A resting thread moves to ``watch/resting.json`` (``{"version": 1, "threads": {id:
{"cursor", "handled", "parent_id"}}}``) and is not read on every pass any more: a pass reads it
again when Discord lists it as active (a message in an archived thread unarchives it), or when
the daemon was down long enough for one to be written in and archived again meanwhile (every
resting thread, then). A message that arrives live wakes it with its cursor. A thread resting
for :data:`FORGET_AFTER_S` since its last message is forgotten; a live message in it watches it
again from that message. So a pass reads what may have news, and ``cursors.json``, written
after every message, holds what is active, whatever the history.

A corrupt file is quarantined and reported (:mod:`discord_mcp.state.quarantine`), and
:attr:`Cursors.lost` says so: the daemon then re-reads from a safe point
(:mod:`discord_mcp.watch.recovery`) instead of starting from "now", which would skip everything
written while it was down. :meth:`Cursors.set_floor` makes every channel watched from then on
start no earlier than that point.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from discord_mcp.errors import StateCorrupt
from discord_mcp.state.files import off_loop, read_json, write_json

FORMAT_VERSION = 1
QUIET_S = 3600.0
REST_AFTER_S = 7 * 86400.0
FORGET_AFTER_S = 90 * 86400.0
_DISCORD_EPOCH_MS = 1_420_070_400_000


def snowflake_seconds(snowflake: str) -> float:
    """When a Discord id was made (wall-clock seconds)."""
    return ((int(snowflake) >> 22) + _DISCORD_EPOCH_MS) / 1000.0


@dataclass(slots=True)
class Cursor:
    cursor: str | None = None
    handled: list[str] = field(default_factory=list)
    parent_id: str | None = None
    """For a thread: its channel."""

    def seen(self, message_id: str) -> bool:
        return (
            self.cursor is not None and int(message_id) <= int(self.cursor)
        ) or message_id in self.handled

    def last_activity(self, channel_id: str) -> float:
        """When the newest message handled here was written (or the thread made)."""
        ids = [channel_id, *self.handled] + ([self.cursor] if self.cursor else [])
        return max(snowflake_seconds(i) for i in ids if i.isdigit())

    def to_json(self) -> dict[str, Any]:
        return {"cursor": self.cursor, "handled": list(self.handled), "parent_id": self.parent_id}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Cursor:
        return cls(
            cursor=raw.get("cursor"),
            handled=[str(m) for m in raw.get("handled") or []],
            parent_id=raw.get("parent_id"),
        )


class Cursors:
    """``<home>/watch/cursors.json``; one writer (the daemon).

    Changes are made in memory and written by :meth:`flush` (off the event loop), which the
    daemon calls after each message it handled.
    """

    def __init__(self, home: Path) -> None:
        self.path = home / "watch" / "cursors.json"
        self.resting_path = home / "watch" / "resting.json"
        self._resting: dict[str, dict[str, Any]] | None = None
        """Resting threads (module doc), once :meth:`load_resting` read them: as stored, made
        a :class:`Cursor` only when one wakes (a year of them costs a start one JSON read)."""
        self._resting_dirty = False
        self._forgot_at = 0.0
        """When resting threads were last looked over for forgetting (at most hourly)."""
        self._channels: dict[str, Cursor] = {}
        self._retired: set[str] = set()
        self._floor: str | None = None
        self._dirty = False
        self._writing = asyncio.Lock()
        """Channels are handled side by side: one write at a time, the newest state last."""
        self.lost: StateCorrupt | None = None
        """Set when the file was corrupt (and quarantined): nothing is known of what was read."""
        self._load()

    def _load(self) -> None:
        try:
            document = read_json(self.path, max_version=FORMAT_VERSION)
        except StateCorrupt as exc:
            self.lost = exc
            document = None
        for channel_id, raw in ((document or {}).get("channels") or {}).items():
            if isinstance(raw, dict):
                self._channels[str(channel_id)] = Cursor.from_json(raw)
        self._retired = {str(c) for c in (document or {}).get("retired") or []}

    def _save(self) -> None:
        self._dirty = True

    async def flush(self) -> None:
        """Write the changes made since the last flush, off the event loop."""
        async with self._writing:
            await self._write()

    async def _write(self) -> None:
        # cursors.json first: a thread moving to rest or waking is in one file or both, never
        # in neither (in both, the active copy wins).
        if self._dirty:
            channels: dict[str, Any] = {cid: c.to_json() for cid, c in self._channels.items()}
            document = {
                "version": FORMAT_VERSION,
                "channels": channels,
                "retired": sorted(self._retired),
            }
            self._dirty = False
            try:
                await off_loop(write_json, self.path, document)
            except BaseException:
                self._dirty = True
                raise
        if self._resting_dirty and self._resting is not None:
            resting = dict(self._resting)
            self._resting_dirty = False
            try:
                await off_loop(
                    write_json, self.resting_path, {"version": FORMAT_VERSION, "threads": resting}
                )
            except BaseException:
                self._resting_dirty = True
                raise

    def channels(self) -> dict[str, Cursor]:
        """Every watched channel and thread."""
        return dict(self._channels)

    def set_floor(self, floor: str) -> None:
        """From now on, channels start being watched no earlier than message id ``floor``."""
        self._floor = floor

    def watch(
        self,
        channel_id: str,
        *,
        parent_id: str | None = None,
        start: str | None,
        revive: bool = False,
    ) -> bool:
        """Start watching a channel or thread from ``start`` (exclusive); False if known, or
        retired or resting (unless ``revive``: a message from it proved it is back; a resting
        one wakes with its cursor)."""
        if channel_id in self._channels:
            return False
        if self._resting is not None and channel_id in self._resting:
            return revive and self.wake(channel_id)
        if channel_id in self._retired:
            if not revive:
                return False
            self._retired.discard(channel_id)
        floor = self._floor
        if floor is not None and (start is None or int(start) < int(floor)):
            start = floor
        self._channels[channel_id] = Cursor(cursor=start, parent_id=parent_id)
        self._save()
        return True

    def retire(self, channel_id: str) -> bool:
        """Stop watching a thread that is gone; False if it was not watched."""
        if self._channels.pop(channel_id, None) is None:
            return False
        self._retired.add(channel_id)
        self._save()
        return True

    def seen(self, channel_id: str, message_id: str) -> bool:
        cursor = self._channels.get(channel_id)
        return cursor is not None and cursor.seen(message_id)

    def handled_live(self, channel_id: str, message_id: str) -> None:
        cursor = self._channels.setdefault(channel_id, Cursor())
        if not cursor.seen(message_id):
            cursor.handled.append(message_id)
            self._save()

    def advance(self, channel_id: str, message_id: str) -> None:
        """Everything up to ``message_id`` in this channel is handled."""
        cursor = self._channels.setdefault(channel_id, Cursor())
        if cursor.cursor is None or int(message_id) > int(cursor.cursor):
            cursor.cursor = message_id
            cursor.handled = [m for m in cursor.handled if int(m) > int(message_id)]
            self._save()

    # ---- resting threads (module doc) -----------------------------------------------------

    async def load_resting(self) -> dict[str, dict[str, Any]]:
        """The resting threads, read once (off the event loop)."""
        if self._resting is None:
            try:
                document = await off_loop(read_json, self.resting_path, max_version=FORMAT_VERSION)
            except StateCorrupt:
                document = None  # quarantined and reported: those threads wake when written in
            threads = (document or {}).get("threads") or {}
            loaded = {str(k): v for k, v in threads.items() if isinstance(v, dict)}
            if self._resting is None:
                self._resting = loaded
        return self._resting

    def wake(self, channel_id: str) -> bool:
        """Watch a resting thread again, from its cursor; False if it is not resting (or the
        resting threads were not read yet)."""
        if self._resting is None or channel_id not in self._resting:
            return False
        self._channels.setdefault(channel_id, Cursor.from_json(self._resting.pop(channel_id)))
        self._resting_dirty = True
        self._save()
        return True

    def wake_all(self) -> int:
        """Watch every resting thread again (after a long downtime); how many."""
        woken = list(self._resting or ())
        for channel_id in woken:
            self.wake(channel_id)
        return len(woken)

    def rest(self, now: float, *, active: Set[str] | None, keep: Callable[[str], bool]) -> int:
        """Move the threads that may rest to rest (module doc; ``active``: the threads Discord
        lists as active, None when unknown; ``keep``: threads that must not rest), and forget
        those resting for :data:`FORGET_AFTER_S`; how many moved. Call it after
        :meth:`load_resting` (it does nothing before)."""
        if self._resting is None:
            return 0
        moved = 0
        for channel_id, cursor in list(self._channels.items()):
            if cursor.parent_id is None or keep(channel_id):
                continue  # channels (the main one, chats) never rest
            idle = now - cursor.last_activity(channel_id)
            if (active is None and idle >= REST_AFTER_S) or (
                active is not None and channel_id not in active and idle >= QUIET_S
            ):
                self._resting[channel_id] = self._channels.pop(channel_id).to_json()
                moved += 1
        forgotten = []
        if now - self._forgot_at >= QUIET_S or now < self._forgot_at:
            self._forgot_at = now
            forgotten = [
                cid
                for cid, raw in self._resting.items()
                if now - Cursor.from_json(raw).last_activity(cid) >= FORGET_AFTER_S
            ]
        for channel_id in forgotten:
            del self._resting[channel_id]
        if moved or forgotten:
            self._resting_dirty = True
            self._save()
        return moved
