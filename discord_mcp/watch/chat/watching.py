"""What the watch daemon does for its chat channels beside its own channel: which it reads, and
which of their messages are the owner's commands."""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from discord_mcp.runs.journal.model import parse_iso
from discord_mcp.watch.chat.desk import ChatDesk
from discord_mcp.watch.commands import Command, parse_command
from discord_mcp.watch.cursors import Cursors
from discord_mcp.watch.recovery import snowflake_at

CLOCK_SKEW_S = 2.0


async def watch_chats(desk: ChatDesk, cursors: Cursors, main_channel: str, now: float) -> None:
    """Read the chat channels again; a new one is read from the time it was added (what was
    written before is its history, not messages to answer), a removed one no more."""
    chats = await desk.refresh()
    watched = cursors.channels()
    for channel_id, chat in chats.items():
        if channel_id not in watched and channel_id != main_channel:
            added = parse_iso(chat.created_at)
            since = added.timestamp() if added is not None else now
            cursors.watch(channel_id, start=snowflake_at(since - CLOCK_SKEW_S), revive=True)
    for channel_id, cursor in list(watched.items()):
        if cursor.parent_id is None and channel_id != main_channel and channel_id not in chats:
            cursors.retire(channel_id)
    await cursors.flush()


def owner_command(message: Mapping[str, Any], owners: Set[str]) -> Command | None:
    """An owner's ``!command`` in a chat channel (anyone else's ``!`` is just chat)."""
    author = message.get("author") or {}
    if author.get("bot") or str(author.get("id") or "") not in owners:
        return None
    return parse_command(str(message.get("content") or ""))
