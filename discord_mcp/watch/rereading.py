"""Reading channels again: a thread that can no longer be read, and a lost inbox put back.

Both are the watch daemon's (:mod:`discord_mcp.watch.daemon`), kept here so the daemon stays
readable: a channel that fails is logged and tried again (a thread that is gone is retired), and
an inbox lost to a corrupt file is rebuilt from the channel's and its threads' recent history
(:mod:`discord_mcp.watch.recovery`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DiscordError, DiscordHTTPError, NotFound
from discord_mcp.inbox import Inbox
from discord_mcp.state.files import off_loop
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.cursors import Cursors
from discord_mcp.watch.recovery import INBOX_WINDOW_S
from discord_mcp.watch.routing import Route, history, inbox_item

log = logging.getLogger(__name__)

UNKNOWN_CHANNEL = 10003
MISSING_ACCESS = 50001
"""For a thread while the channel is readable: the bot was removed from it."""


async def unreadable(
    cursors: Cursors, channel_id: str, exc: DiscordError, channel_readable: bool, *, main: str
) -> bool:
    """Log a channel that could not be read; retire it if it is a thread that is gone.
    Returns True when nothing is left to read there (it was retired).

    Missing Access retires a thread only while the channel itself can be read: then the
    bot was removed from that thread, rather than losing access to the whole channel.
    """
    code = exc.code if isinstance(exc, DiscordHTTPError) else 0
    gone = (
        isinstance(exc, NotFound)
        or code == UNKNOWN_CHANNEL
        or (code == MISSING_ACCESS and channel_readable)
    )
    if gone and channel_id != main:
        cursors.retire(channel_id)
        await cursors.flush()
        log.warning("thread %s is gone (%s): no longer watching it", channel_id, exc)
        return True
    log.warning(
        "reading channel %s failed (%s); the others were read, it is tried again next pass",
        channel_id,
        exc,
    )
    return False


async def rebuild_inbox(
    inbox: Inbox,
    *,
    channels: Sequence[str],
    runs: Callable[[str], object | None],
    chats: Callable[[str], bool],
    store: DecisionStore,
    rest: RestClient,
    route: Callable[[dict[str, Any], str, list[Decision]], Route],
    channel: str,
    since: str,
) -> None:
    """After the inbox was lost to a corrupt file: put the owner's notes since ``since`` back
    (``runs``: the run session of a thread, whose messages are jobs, not notes; ``chats``:
    whether a channel is a chat channel, whose messages are its conversation)."""
    lost = await off_loop(inbox.needs_rebuild)
    if not lost:
        return
    added, failed = 0, []
    for channel_id in channels:
        if runs(channel_id) is not None:
            continue  # a run thread's messages are jobs, not notes
        if chats(channel_id):
            continue  # a chat channel's messages are its conversation
        try:
            messages = await history(rest, channel_id, since)
        except DiscordError as exc:
            failed.append(channel_id)
            log.warning("re-reading channel %s for the inbox failed: %s", channel_id, exc)
            continue
        decisions = [] if channel_id == channel else await store.ain_thread(channel_id)
        notes = [
            inbox_item(message, found.project, channel=channel, project_key=found.project_key)
            for message in messages
            if (found := route(message, channel_id, decisions)).kind == "inbox"
        ]
        added += await off_loop(inbox.add, notes)
    await off_loop(inbox.rebuilt, lost)
    log.warning(
        "the inbox was corrupt (moved to %s): re-read the last %d days of the channel and "
        "its threads and put %d notes back, unread%s",
        ", ".join(lost),
        int(INBOX_WINDOW_S // 86400),
        added,
        f" (could not read {', '.join(failed)})" if failed else "",
    )
