"""What the daemon has processed, per channel and thread, so catch-up handles each message once.

``watch/cursors.json``: for each watched channel or thread, ``cursor`` (every message up to it
was handled) and ``handled`` (messages after it handled live, from the gateway). Catch-up reads
Discord's history after the cursor, skips what was handled live, then moves the cursor; so a
message missed live (during a holder handover, say) is still processed, and none twice.
"""

from __future__ import annotations

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
        self._dirty = False
        self._load()

    def _load(self) -> None:
        try:
            document = read_json(self.path, max_version=FORMAT_VERSION)
        except StateCorrupt:
            document = None
        for channel_id, raw in ((document or {}).get("channels") or {}).items():
            if isinstance(raw, dict):
                self._channels[str(channel_id)] = Cursor(
                    cursor=raw.get("cursor"),
                    handled=[str(m) for m in raw.get("handled") or []],
                    parent_id=raw.get("parent_id"),
                )

    def _save(self) -> None:
        self._dirty = True

    async def flush(self) -> None:
        """Write the changes made since the last flush, off the event loop."""
        if not self._dirty:
            return
        channels: dict[str, Any] = {
            cid: {"cursor": c.cursor, "handled": list(c.handled), "parent_id": c.parent_id}
            for cid, c in self._channels.items()
        }
        self._dirty = False
        try:
            await off_loop(write_json, self.path, {"version": FORMAT_VERSION, "channels": channels})
        except BaseException:
            self._dirty = True
            raise

    def channels(self) -> dict[str, Cursor]:
        """Every watched channel and thread."""
        return dict(self._channels)

    def watch(self, channel_id: str, *, parent_id: str | None = None, start: str | None) -> bool:
        """Start watching a channel or thread from ``start`` (exclusive); False if known."""
        if channel_id in self._channels:
            return False
        self._channels[channel_id] = Cursor(cursor=start, parent_id=parent_id)
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
