"""The owner's inbox: what the owner wrote to the agents, waiting to be read.

``discord-watch`` fills it (owner messages in the channel, and in decision threads after the
decision was answered); the MCP tools ``read_inbox`` and ``clear_inbox`` read, mark and prune it.
Every change is a read-modify-write of ``inbox/items.json`` under its lock, so nobody loses
another's changes. Items are deduplicated by message id, and a removed item's id is remembered,
so a message seen live, again on catch-up, or again in a recovery re-read is stored once and
never comes back after it was cleared.

Read marks and clears are per project, and a project is its identity (:class:`Reader`: its
resolved directory, or ``name:<PROJECT_NAME>`` when that is set; two projects that share a
name share nothing): a note for every agent (``project`` None, from the shared channel) that one
project read and cleared is still there, unread, for the others. A project's own notes (from
its threads) go when that project clears them. ``project=None`` acts on the inbox as a whole:
every item, read by anyone, and cleared for everyone.

A corrupt file is moved aside (:mod:`discord_mcp.state.quarantine`) and never read as empty in
silence: the new inbox records the quarantine, every project's next ``read_inbox`` carries a
warning about it, and ``discord-watch`` re-reads the recent history into the inbox
(:meth:`Inbox.needs_rebuild`).

The file (format version 3; versions 1 and 2 are read as they were and written as 3 on the
next change, losing nothing)::

    {"version": 3,
     "items": [{"message_id", "channel_id", "thread_id", "author_id", "author", "content",
                "timestamp", "project", "project_key", "read_by": [mark, ...],
                "cleared_by": [mark, ...]}],
     "removed": [message_id, ...],
     "quarantined": [{"original", "moved_to", "reason", "at", "told": [project, ...],
                      "rebuilt": false}]}

A mark is a project's key (``/home/me/app``, ``name:app``), or ``"*"`` for "read for every
project" (a mark made with ``project=None``, and every mark a version-1 file had). Version 2
marked by project name: such a mark ``app`` becomes ``was:app``, and still counts for a project
named ``app`` (which is what it meant; only new marks tell two such projects apart). An item's
``project_key`` is the project whose thread it came from (absent when unknown: ``project``, a
name, decides then).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.errors import StateCorrupt
from discord_mcp.state.files import locked, read_json, write_json
from discord_mcp.state.quarantine import QuarantineReport, remind

log = logging.getLogger(__name__)

FORMAT_VERSION = 3
MAX_ITEMS = 2000
"""Beyond this, items cleared by some project go first, then read ones, then the oldest unread."""
MAX_REMOVED = 5000
"""How many removed message ids are remembered (so a re-read never brings them back)."""
MAX_QUARANTINES = 20
EVERYONE = "*"
"""A read mark that counts for every project."""
WAS = "was:"
"""A version-2 mark, by project name."""


@dataclass(frozen=True, slots=True)
class Reader:
    """A project reading the inbox: its identity (:attr:`Settings.project_key
    <discord_mcp.config.Settings.project_key>`) and its name."""

    key: str
    name: str

    @classmethod
    def of(cls, settings: Any) -> Reader:
        """The reader a server's settings make (``project_key``, ``project_name``)."""
        return cls(str(settings.project_key), str(settings.project_name))


@dataclass(frozen=True, slots=True)
class InboxItem:
    """One owner message, as one reader sees it (``read``: read by that reader)."""

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
    project_key: str | None = None
    """The identity of the project whose thread it came from (absent in items written before
    version 3, and when the thread's decision had none: ``project`` decides then)."""


@dataclass(slots=True)
class _Stored:
    item: InboxItem
    read_by: list[str]
    cleared_by: list[str]

    @classmethod
    def new(cls, item: InboxItem) -> _Stored:
        return cls(dataclasses.replace(item, read=False), [EVERYONE] if item.read else [], [])

    def to_json(self) -> dict[str, Any]:
        document = dataclasses.asdict(self.item)
        del document["read"]
        if self.item.attachments:
            document["attachments"] = [dict(a) for a in self.item.attachments]
        else:
            del document["attachments"]  # an optional field: absent when there are none
        if self.item.project_key is None:
            del document["project_key"]
        return {**document, "read_by": list(self.read_by), "cleared_by": list(self.cleared_by)}

    @classmethod
    def from_json(cls, raw: dict[str, Any], version: int) -> _Stored:
        known = {f.name for f in dataclasses.fields(InboxItem)} - {"read"}
        values = {k: v for k, v in raw.items() if k in known}
        values["attachments"] = tuple(
            a for a in values.get("attachments") or () if isinstance(a, dict)
        )
        item = InboxItem(**values)
        if version == 1:  # one read mark for everybody, nothing cleared per project
            return cls(item, [EVERYONE] if raw.get("read") else [], [])
        read_by = [str(r) for r in raw.get("read_by") or []]
        cleared_by = [str(c) for c in raw.get("cleared_by") or []]
        if version == 2:  # marks by project name (module doc)
            read_by = [r if r == EVERYONE else WAS + r for r in read_by]
            cleared_by = [WAS + c for c in cleared_by]
        return cls(item, read_by, cleared_by)

    def visible_to(self, project: Reader | None) -> bool:
        if project is None:
            return True
        if self.item.project_key is not None:
            if self.item.project_key != project.key:
                return False
        elif self.item.project not in (None, project.name):
            return False
        return not _marked(self.cleared_by, project)

    def read_for(self, project: Reader | None) -> bool:
        if project is None:
            return bool(self.read_by)
        return EVERYONE in self.read_by or _marked(self.read_by, project)

    def view(self, project: Reader | None) -> InboxItem:
        return dataclasses.replace(self.item, read=self.read_for(project))


def _marked(marks: list[str], project: Reader) -> bool:
    return project.key in marks or WAS + project.name in marks


@dataclass(slots=True)
class _Document:
    items: list[_Stored]
    removed: list[str]
    quarantined: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "items": [stored.to_json() for stored in self.items],
            "removed": self.removed[-MAX_REMOVED:],
            "quarantined": self.quarantined[-MAX_QUARANTINES:],
        }


class Inbox:
    """``<home>/inbox/items.json``. Every method is blocking: call it through ``off_loop``."""

    def __init__(self, home: Path) -> None:
        self.path = home / "inbox" / "items.json"

    # ---- the file ---------------------------------------------------------------------------

    def _load(self, reader: Reader | None = None) -> _Document:
        """The document (under the lock). A corrupt file is quarantined (and reported by this
        process, to ``reader``), and the quarantine is recorded in a new inbox, written at once.
        """
        try:
            document = read_json(self.path, max_version=FORMAT_VERSION)
        except StateCorrupt as exc:
            log.error("%s; a new inbox records it, and discord-watch re-reads the history", exc)
            fresh = _Document([], [], [_quarantine_record(exc, reader)])
            write_json(self.path, fresh.to_json())
            return fresh
        if document is None:
            return _Document([], [], [])
        version = int(document["version"])
        items = []
        for raw in document.get("items") or []:
            try:
                items.append(_Stored.from_json(raw, version))
            except (TypeError, AttributeError):
                continue
        quarantined = [q for q in document.get("quarantined") or [] if isinstance(q, dict)]
        if version < 3:  # who was told, by project name
            for record in quarantined:
                record["told"] = [WAS + str(t) for t in record.get("told") or []]
        return _Document(items, [str(m) for m in document.get("removed") or []], quarantined)

    def _save(self, document: _Document) -> None:
        overflow = len(document.items) - MAX_ITEMS
        if overflow > 0:
            ranked = sorted(
                range(len(document.items)),
                key=lambda i: (_keep_rank(document.items[i]), i),
            )
            dropped = {document.items[i].item.message_id for i in ranked[:overflow]}
            document.items = [s for s in document.items if s.item.message_id not in dropped]
            document.removed.extend(sorted(dropped))
        write_json(self.path, document.to_json())

    # ---- operations -------------------------------------------------------------------------

    def add(self, new: Iterable[InboxItem]) -> int:
        """Store new items (ignoring ones there now or removed before); how many were added."""
        with locked(self.path):
            document = self._load()
            seen = {s.item.message_id for s in document.items} | set(document.removed)
            added = []
            for item in new:
                if item.message_id not in seen:
                    seen.add(item.message_id)
                    added.append(_Stored.new(item))
            if added:
                document.items.extend(added)
                self._save(document)
            return len(added)

    def read(
        self,
        *,
        project: Reader | None,
        unread_only: bool = True,
        mark_read: bool = False,
        limit: int | None = None,
    ) -> list[InboxItem]:
        """Items for ``project`` (and the shared channel), oldest first; optionally mark them
        read for ``project``. A quarantine of the inbox not yet told to ``project`` is reported
        to this process's next tool result (:func:`~discord_mcp.state.quarantine.take_reports`).
        """
        with locked(self.path):
            document = self._load(project)
            chosen = [
                s
                for s in document.items
                if s.visible_to(project) and not (unread_only and s.read_for(project))
            ]
            if limit is not None:
                chosen = chosen[-limit:] if limit > 0 else []
            views = [s.view(project) for s in chosen]
            changed = self._tell(document, project)
            if mark_read:
                reader = project.key if project is not None else EVERYONE
                for stored in chosen:
                    if reader not in stored.read_by:
                        stored.read_by.append(reader)
                        changed = True
            if changed:
                self._save(document)
            return views

    # -- channel push (discord_mcp.chat.push) ---------------------------------------------------

    def claim(
        self, *, project: Reader | None, where: Callable[[InboxItem], bool]
    ) -> list[InboxItem]:
        """Mark the unread items for ``project`` that ``where`` accepts as read, in one locked
        step, and return them (oldest first): each is handed out once."""
        with locked(self.path):
            document = self._load(project)
            reader = project.key if project is not None else EVERYONE
            chosen = [
                s
                for s in document.items
                if s.visible_to(project) and not s.read_for(project) and where(s.view(project))
            ]
            for stored in chosen:
                stored.read_by.append(reader)
            if chosen:
                self._save(document)
            return [s.view(project) for s in chosen]

    # ------------------------------------------------------------------------------------------

    def clear(self, *, project: Reader | None, read_only: bool = True) -> int:
        """Clear ``project``'s items (only those it read, by default); how many went.

        Its own items are deleted; shared ones are hidden from it and stay for the others.
        ``project=None`` deletes for everyone.
        """
        with locked(self.path):
            document = self._load()
            gone = [
                s
                for s in document.items
                if s.visible_to(project) and (s.read_for(project) or not read_only)
            ]
            if not gone:
                return 0
            deleted = set()
            for stored in gone:
                if project is None or _own(stored.item, project):
                    deleted.add(stored.item.message_id)
                else:
                    stored.cleared_by.append(project.key)
            document.items = [s for s in document.items if s.item.message_id not in deleted]
            document.removed.extend(sorted(deleted))
            self._save(document)
            return len(gone)

    def unread_count(self, project: Reader | None = None) -> int:
        return len(self.read(project=project))

    # ---- after a quarantine -----------------------------------------------------------------

    def needs_rebuild(self) -> list[str]:
        """Where quarantined inboxes went that nobody has re-read the history for yet."""
        with locked(self.path):
            document = self._load()
        return [str(q.get("moved_to")) for q in document.quarantined if not q.get("rebuilt")]

    def rebuilt(self, moved_to: Iterable[str]) -> None:
        """Record that the history was re-read for these quarantines."""
        done = set(moved_to)
        with locked(self.path):
            document = self._load()
            for record in document.quarantined:
                if str(record.get("moved_to")) in done:
                    record["rebuilt"] = True
            self._save(document)

    @staticmethod
    def _tell(document: _Document, project: Reader | None) -> bool:
        """Report the quarantines ``project`` has not heard of; True if any."""
        if project is None:
            return False
        told = False
        for record in document.quarantined:
            listeners = record.setdefault("told", [])
            if _marked(listeners, project):
                continue
            listeners.append(project.key)
            told = True
            remind(
                QuarantineReport(
                    original=str(record.get("original")),
                    moved_to=str(record.get("moved_to")),
                    reason=f"{record.get('reason')}; messages may be missing until discord-watch "
                    "has re-read the recent history",
                )
            )
        return told


def _own(item: InboxItem, project: Reader) -> bool:
    """Whether ``item`` came from one of ``project``'s own threads (not the shared channel)."""
    if item.project_key is not None:
        return item.project_key == project.key
    return item.project is not None and item.project == project.name


def _quarantine_record(exc: StateCorrupt, reader: Reader | None) -> dict[str, Any]:
    return {
        "original": exc.path,
        "moved_to": exc.moved_to,
        "reason": exc.reason,
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "told": [reader.key] if reader is not None else [],
        "rebuilt": False,
    }


def _keep_rank(stored: _Stored) -> int:
    """Lower goes first when the inbox overflows."""
    if stored.cleared_by:
        return 0
    if stored.read_by:
        return 1
    return 2
