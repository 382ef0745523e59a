"""What the daemon has processed, per channel and thread, so catch-up handles each message once.

``watch/cursors.json``: for each watched channel or thread, ``cursor`` (every message up to it
was handled) and ``handled`` (messages after it handled live, from the gateway). Catch-up reads
Discord's history after the cursor, skips what was handled live, then moves the cursor; so a
message missed live (during a holder handover, say) is still processed, and none twice.
``retired`` lists threads that are gone (deleted, or the bot lost access): they are not read
again, unless a message from one arrives live.

A corrupt file is quarantined and reported (:mod:`discord_mcp.state.quarantine`), and
:attr:`Cursors.lost` says so: the daemon then re-reads from a safe point
(:mod:`discord_mcp.watch.recovery`) instead of starting from "now", which would skip everything
written while it was down. :meth:`Cursors.set_floor` makes every channel watched from then on
start no earlier than that point.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from discord_mcp.errors import StateCorrupt
from discord_mcp.state.files import off_loop, read_json, write_json

FORMAT_VERSION = 1


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


class Cursors:
    """``<home>/watch/cursors.json``; one writer (the daemon).

    Changes are made in memory and written by :meth:`flush` (off the event loop), which the
    daemon calls after each message it handled.
    """

    def __init__(self, home: Path) -> None:
        self.path = home / "watch" / "cursors.json"
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
                self._channels[str(channel_id)] = Cursor(
                    cursor=raw.get("cursor"),
                    handled=[str(m) for m in raw.get("handled") or []],
                    parent_id=raw.get("parent_id"),
                )
        self._retired = {str(c) for c in (document or {}).get("retired") or []}

    def _save(self) -> None:
        self._dirty = True

    async def flush(self) -> None:
        """Write the changes made since the last flush, off the event loop."""
        async with self._writing:
            await self._write()

    async def _write(self) -> None:
        if not self._dirty:
            return
        channels: dict[str, Any] = {
            cid: {"cursor": c.cursor, "handled": list(c.handled), "parent_id": c.parent_id}
            for cid, c in self._channels.items()
        }
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
        retired (unless ``revive``: a message from it proved it is back)."""
        if channel_id in self._channels:
            return False
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
