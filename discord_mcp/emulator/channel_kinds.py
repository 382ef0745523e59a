"""Which threads and messages each kind of guild channel takes, as Discord rules them.

* A text channel (0) holds messages and public (11) or private (12) threads; a thread made
  from a message is public.
* An announcement channel (5) holds messages, and its threads are announcement threads (10):
  asking it for a public or private thread is 50024, and a thread made from one of its
  messages is an announcement thread.
* However many channels, a guild has at most its limit of active (unarchived) threads, 1000
  on Discord; creating or reopening one past it is 160006.
* A forum (15) or media (16) channel holds only *posts*: a public thread created together with
  its first message (``POST /channels/{id}/threads`` with a ``message``; without one it is
  50035). A plain message posted to it is 50008.

``State`` asks these before it changes anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from discord_mcp.emulator import errors
from discord_mcp.emulator.models import (
    ANNOUNCEMENT_THREAD,
    GUILD_TEXT,
    PRIVATE_THREAD,
    PUBLIC_THREAD,
    Channel,
)

GUILD_ANNOUNCEMENT = 5
GUILD_FORUM = 15
GUILD_MEDIA = 16
POSTS_ONLY = frozenset({GUILD_FORUM, GUILD_MEDIA})
CREATABLE = frozenset({GUILD_TEXT, GUILD_ANNOUNCEMENT, GUILD_FORUM, GUILD_MEDIA})
"""The kinds of channel the control API can add to the guild."""


def non_text_channel() -> errors.DiscordError:
    return errors.DiscordError(400, 50008, "Cannot send messages in a non-text channel")


def check_plain_message(channel: Channel) -> None:
    """50008 for a message posted to a forum or media channel itself (not one of its posts)."""
    if channel.type in POSTS_ONLY:
        raise non_text_channel()


def thread_kind(parent: Channel, requested: int | None, body: Any) -> int:
    """The type of a thread created without a message under ``parent`` (or the error)."""
    if parent.type in POSTS_ONLY:
        if not isinstance(body, dict) or not isinstance(body.get("message"), dict):
            problems = errors.FormErrors()
            problems.add(("message",), "BASE_TYPE_REQUIRED", "This field is required")
            raise problems.error()
        return PUBLIC_THREAD
    if parent.type == GUILD_ANNOUNCEMENT:
        if requested != ANNOUNCEMENT_THREAD:
            raise errors.wrong_channel_type()
        return ANNOUNCEMENT_THREAD
    kind = PRIVATE_THREAD if requested is None else requested
    if kind not in (PUBLIC_THREAD, PRIVATE_THREAD):
        # Announcement threads (10) only exist under announcement channels.
        raise errors.wrong_channel_type()
    return kind


def thread_from_message_kind(parent: Channel) -> int:
    """The type of a thread made from a message of ``parent``."""
    if parent.type in POSTS_ONLY:
        raise errors.wrong_channel_type()
    return ANNOUNCEMENT_THREAD if parent.type == GUILD_ANNOUNCEMENT else PUBLIC_THREAD


def check_thread_room(channels: Iterable[Channel], limit: int) -> None:
    """160006 when the guild already has ``limit`` active threads (archived ones, which Discord
    keeps out of the count, do not count)."""
    if sum(1 for c in channels if c.is_thread and not c.archived) >= limit:
        raise errors.max_active_threads()
