"""The owner's inbox: what the owner wrote to the agents, waiting to be read.

``discord-watch`` fills it (owner messages in the channel, and in decision threads after the
decision was answered); the MCP tools ``read_inbox`` and ``clear_inbox`` read, mark and prune it.
Both write ``inbox/items.json`` under its lock, so neither loses the other's changes. Items are
deduplicated by message id, so a message seen live and again on catch-up is stored once.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.errors import StateCorrupt
from discord_mcp.state.files import locked, read_json, write_json

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
MAX_ITEMS = 2000
"""Beyond this, the oldest read items go first, then the oldest unread."""


@dataclass(frozen=True, slots=True)
class InboxItem:
    """One owner message. The fields are the file format (version 1)."""

    message_id: str
    channel_id: str
    thread_id: str | None
    author_id: str
    author: str
    content: str
    timestamp: str
    project: str | None = None
    """Set for messages in a project's decision or run thread; None for the shared channel."""
    read: bool = False
    attachments: tuple[dict[str, Any], ...] = ()
    """The owner's files, kept locally (entries of :mod:`discord_mcp.files.store`); an
    optional field, absent in items written before it existed."""

    def to_json(self) -> dict[str, Any]:
        document = dataclasses.asdict(self)
        if not self.attachments:
            del document["attachments"]
        return document

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> InboxItem:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in document.items() if k in known}
        values["attachments"] = tuple(
            a for a in values.get("attachments") or () if isinstance(a, dict)
        )
        return cls(**values)


class Inbox:
    """``<home>/inbox/items.json``."""

    def __init__(self, home: Path) -> None:
        self.path = home / "inbox" / "items.json"

    def _read(self) -> list[InboxItem]:
        try:
            document = read_json(self.path, max_version=FORMAT_VERSION)
        except StateCorrupt as exc:
            log.error("%s; starting a new inbox", exc)
            return []
        items = []
        for raw in (document or {}).get("items", []):
            try:
                items.append(InboxItem.from_json(raw))
            except TypeError:
                continue
        return items

    def _write(self, items: list[InboxItem]) -> None:
        overflow = len(items) - MAX_ITEMS
        if overflow > 0:
            # Oldest read items go first, then the oldest unread ones.
            ordered = [i for i in items if i.read] + [i for i in items if not i.read]
            dropped = {i.message_id for i in ordered[:overflow]}
            items = [i for i in items if i.message_id not in dropped]
        write_json(
            self.path, {"version": FORMAT_VERSION, "items": [item.to_json() for item in items]}
        )

    def add(self, new: Iterable[InboxItem]) -> int:
        """Store new items (ignoring ones already there); returns how many were added."""
        with locked(self.path):
            items = self._read()
            seen = {item.message_id for item in items}
            added = [item for item in new if item.message_id not in seen]
            if added:
                self._write(items + added)
            return len(added)

    def read(
        self,
        *,
        project: str | None,
        unread_only: bool = True,
        mark_read: bool = False,
        limit: int | None = None,
    ) -> list[InboxItem]:
        """Items for ``project`` (and the shared channel), oldest first; optionally mark them.

        Reading alone takes no lock (files are replaced whole); marking does.
        """
        if not mark_read:
            return self._choose(self._read(), project, unread_only, limit)
        with locked(self.path):
            items = self._read()
            chosen = self._choose(items, project, unread_only, limit)
            if chosen:
                ids = {item.message_id for item in chosen}
                self._write(
                    [dataclasses.replace(i, read=True) if i.message_id in ids else i for i in items]
                )
            return chosen

    @staticmethod
    def _choose(
        items: list[InboxItem], project: str | None, unread_only: bool, limit: int | None
    ) -> list[InboxItem]:
        chosen = [
            item
            for item in items
            if _for_project(item, project) and not (unread_only and item.read)
        ]
        if limit is not None:
            chosen = chosen[-limit:] if limit > 0 else []
        return chosen

    # -- channel push (discord_mcp.chat.push) ---------------------------------------------------

    def claim(self, *, project: str | None, where: Callable[[InboxItem], bool]) -> list[InboxItem]:
        """Mark the unread items for ``project`` that ``where`` accepts as read, in one locked
        step, and return them (oldest first): each is handed out once."""
        with locked(self.path):
            items = self._read()
            chosen = [i for i in self._choose(items, project, True, None) if where(i)]
            if chosen:
                ids = {item.message_id for item in chosen}
                self._write(
                    [dataclasses.replace(i, read=True) if i.message_id in ids else i for i in items]
                )
            return chosen

    # ------------------------------------------------------------------------------------------

    def clear(self, *, project: str | None, read_only: bool = True) -> int:
        """Delete items (only read ones by default); returns how many went."""
        with locked(self.path):
            items = self._read()
            gone = [
                item
                for item in items
                if _for_project(item, project) and (item.read or not read_only)
            ]
            if gone:
                ids = {item.message_id for item in gone}
                self._write([item for item in items if item.message_id not in ids])
            return len(gone)

    def unread_count(self, project: str | None = None) -> int:
        return len(self.read(project=project))


def _for_project(item: InboxItem, project: str | None) -> bool:
    """Shared-channel items are everyone's; a project's items are that project's (None: all)."""
    return item.project is None or project is None or item.project == project
