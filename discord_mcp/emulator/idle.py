"""Threads archive themselves after a while without activity, and time can be moved forward.

Discord's rule (topics/threads): a thread is archived ``auto_archive_duration`` minutes (60,
1440, 4320 or 10080) after its last activity. Activity is a new message, the thread's creation
or its reopening; editing a message is not (a thread whose only life is an edited message
archives all the same). An archived thread stays readable, leaves ``GET
/guilds/{guild_id}/threads/active``, shows in ``GET /channels/{channel_id}/threads/archived/
public``, and reopens when someone writes in it (or, for a bot, by ``PATCH archived: false``).

Archiving happens when it is due and looked for: :func:`archive_idle` runs before every REST
request and control request that reads the world. Minutes are real minutes (rate-limit scaling
does not touch them); a test moves the emulator's clock forward instead (``POST
/_emulator/time``, :func:`advance`), which ages messages too (the old-message edit limit,
``ratelimit.py``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from discord_mcp.emulator.channel_kinds import GUILD_ANNOUNCEMENT
from discord_mcp.emulator.models import (
    ANNOUNCEMENT_THREAD,
    PUBLIC_THREAD,
    Channel,
    iso_timestamp,
)
from discord_mcp.emulator.store import Store

MAX_ADVANCE_S = 30 * 24 * 3600.0
"""The most one ``POST /_emulator/time`` moves the clock forward (a month)."""


def archive_idle(store: Store) -> int:
    """Archive every thread idle past its ``auto_archive_duration``; returns how many."""
    now = store.wall()
    archived = 0
    for thread in list(store.channels.values()):
        if not thread.is_thread or thread.archived or not thread.active_at:
            continue
        due = thread.active_at + thread.auto_archive_duration * 60.0
        if now < due:
            continue
        thread.archived = True
        thread.archive_timestamp = iso_timestamp(int(due * 1000))
        store.emit("THREAD_UPDATE", thread.to_json())
        archived += 1
    return archived


def advance(store: Store, seconds: float) -> float:
    """Move the emulator's clock ``seconds`` forward (never back); returns its offset."""
    if not 0 <= seconds <= MAX_ADVANCE_S:
        raise ValueError(f"seconds must be between 0 and {MAX_ADVANCE_S:g}")
    store.time_offset += seconds
    archive_idle(store)
    return store.time_offset


def archived_public_threads(
    store: Store, parent: Channel, *, before: str | None, limit: int
) -> dict[str, Any]:
    """``GET /channels/{channel_id}/threads/archived/public``'s answer: the channel's archived
    public (or, under an announcement channel, announcement) threads, by ``archive_timestamp``,
    newest first, before ``before`` (an ISO timestamp) when given."""
    kind = ANNOUNCEMENT_THREAD if parent.type == GUILD_ANNOUNCEMENT else PUBLIC_THREAD
    cutoff = _instant(before) if before else None
    found = [
        c
        for c in store.channels.values()
        if c.is_thread and c.archived and c.parent_id == parent.id and c.type == kind
    ]
    found.sort(key=lambda c: (_instant(c.archive_timestamp or ""), int(c.id)), reverse=True)
    if cutoff is not None:
        found = [c for c in found if _instant(c.archive_timestamp or "") < cutoff]
    page = found[:limit]
    members = [
        {
            "id": thread.id,
            "user_id": store.bot.id,
            "join_timestamp": thread.create_timestamp or store.now_iso(),
            "flags": 0,
        }
        for thread in page
        if store.bot.id in thread.member_ids
    ]
    return {
        "threads": [t.to_json() for t in page],
        "members": members,
        "has_more": len(found) > limit,
    }


def _instant(stamp: str) -> float:
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return 0.0
