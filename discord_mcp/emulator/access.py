"""What the bot may do over REST: the permission checks the routes in ``rest.py`` make.

Only the bot's own REST calls are checked; the control API acts as people without checks, and
interaction callbacks and webhook followups authenticate with their token, not permissions.
The bot's permissions in a channel come from
:meth:`~discord_mcp.emulator.store.Store.permissions_for` (overwrites and implicit rules in
``permissions.py``). Checks run after the channel (10003) is found and before the body is
validated or the message (10008) looked up, except where the rule depends on the message.

=========================================  ======================================================
route                                      needs (403 ``code``)
=========================================  ======================================================
any channel or thread route                the bot in the guild and VIEW_CHANNEL (else 50001
                                           Missing Access); a private thread also membership
                                           or MANAGE_THREADS (50001)
GET    .../messages                        READ_MESSAGE_HISTORY, else an empty list (the docs:
                                           "no messages will be returned")
GET    .../messages/{id}, .../reactions/*  READ_MESSAGE_HISTORY (50001)
POST   .../messages, POST .../typing       SEND_MESSAGES, in a thread SEND_MESSAGES_IN_THREADS
                                           (50013); a reply also READ_MESSAGE_HISTORY (50013);
                                           files also ATTACH_FILES (50013); a locked thread
                                           MANAGE_THREADS (160005); in a DM, a recipient who
                                           accepts the bot's messages (50007)
PATCH  .../messages/{id}                   a locked, active thread: MANAGE_THREADS (160005);
                                           new files ATTACH_FILES (50013)
DELETE .../messages/{id}                   someone else's message: MANAGE_MESSAGES (50013)
PUT    .../reactions/{emoji}/@me           READ_MESSAGE_HISTORY, and ADD_REACTIONS unless
                                           someone already reacted with that emoji (50013)
POST   .../messages/{id}/threads           CREATE_PUBLIC_THREADS (50013)
POST   /channels/{id}/threads              CREATE_PUBLIC_THREADS for type 11,
                                           CREATE_PRIVATE_THREADS for 12 (the default) (50013)
PATCH  /channels/{thread_id}               ``locked``, ``rate_limit_per_user``: MANAGE_THREADS;
                                           ``name``, ``auto_archive_duration``, ``invitable``,
                                           ``archived: true``: MANAGE_THREADS or the creator;
                                           ``archived: false``: MANAGE_THREADS, the creator, or
                                           a thread member with SEND_MESSAGES_IN_THREADS, and
                                           on a locked thread MANAGE_THREADS only (50013)
POST   /users/@me/channels                 nothing (a known user other than the bot, else
                                           50033)
GET    /guilds/{guild_id}/...              the bot in the guild (50001); another id is 10004
/applications/{id}/guilds/{guild_id}/...   the same (application commands, ``rest_commands.py``)
=========================================  ======================================================

Not enforced (Discord requires them, but the startup bot role does not grant them and the
emulator's own tests rely on the calls): MANAGE_CHANNELS for editing a text channel,
SEND_TTS_MESSAGES for ``tts`` and EMBED_LINKS for embeds.
"""

from __future__ import annotations

from typing import Any

from discord_mcp.emulator import errors
from discord_mcp.emulator.models import Channel, Message
from discord_mcp.emulator.permissions import (
    ADD_REACTIONS,
    ATTACH_FILES,
    CREATE_PRIVATE_THREADS,
    CREATE_PUBLIC_THREADS,
    MANAGE_MESSAGES,
    MANAGE_THREADS,
    READ_MESSAGE_HISTORY,
    SEND_MESSAGES_IN_THREADS,
    VIEW_CHANNEL,
    sending_permission,
)
from discord_mcp.emulator.store import Guild, Store


def visible_channel(store: Store, channel_id: str, *, read: int = 0) -> tuple[Channel, int]:
    """The channel and the bot's permissions in it; 50001 unless the bot sees it (and holds
    ``read``)."""
    channel = store.get_channel(channel_id)
    permissions = store.permissions_for(store.bot.id, channel)
    if not permissions & VIEW_CHANNEL or permissions & read != read:
        raise errors.missing_access()
    return channel, permissions


def require(permissions: int, needed: int) -> None:
    """50013 unless ``permissions`` hold every bit of ``needed``."""
    if permissions & needed != needed:
        raise errors.missing_permissions()


def check_send(
    store: Store, channel: Channel, permissions: int, body: Any, *, files: bool = False
) -> None:
    """May the bot post ``body`` (with files, if ``files``) in ``channel``."""
    require(permissions, sending_permission(channel.is_thread))
    if channel.is_dm and any(u.id in store.refusing_dms for u in channel.recipients):
        raise errors.cannot_message_user()
    if files:
        require(permissions, ATTACH_FILES)
    if isinstance(body, dict) and body.get("message_reference") is not None:
        require(permissions, READ_MESSAGE_HISTORY)
    if channel.is_thread and channel.locked and not permissions & MANAGE_THREADS:
        raise errors.thread_locked()


def check_typing(channel: Channel, permissions: int) -> None:
    require(permissions, sending_permission(channel.is_thread))


def check_edit(channel: Channel, permissions: int, *, files: bool = False) -> None:
    """Messages in a locked thread stay as they are, unless the bot has MANAGE_THREADS; new
    files need ATTACH_FILES."""
    locked = channel.is_thread and channel.locked and not channel.archived
    if locked and not permissions & MANAGE_THREADS:
        raise errors.thread_locked()
    if files:
        require(permissions, ATTACH_FILES)


def check_delete(store: Store, message: Message, permissions: int) -> None:
    if message.author_id != store.bot.id:
        require(permissions, MANAGE_MESSAGES)


def check_reaction(message: Message, emoji: str, permissions: int) -> None:
    """READ_MESSAGE_HISTORY, and ADD_REACTIONS for an emoji nobody has used on it yet."""
    require(permissions, READ_MESSAGE_HISTORY)
    if not any(r.emoji == emoji and r.user_ids for r in message.reactions):
        require(permissions, ADD_REACTIONS)


def thread_creation_permission(body: Any) -> int:
    """The permission a ``POST /channels/{id}/threads`` body needs (0 for a bad ``type``,
    which the body's validation then refuses)."""
    kind = body.get("type") if isinstance(body, dict) else None
    if kind is None or kind == 12:
        return CREATE_PRIVATE_THREADS
    if kind in (10, 11) and not isinstance(kind, bool):
        return CREATE_PUBLIC_THREADS
    return 0


def check_thread_edit(store: Store, thread: Channel, permissions: int, body: Any) -> None:
    """May the bot apply this ``PATCH /channels/{thread_id}`` body (see the module table)."""
    if not isinstance(body, dict) or permissions & MANAGE_THREADS:
        return
    given = {key for key, value in body.items() if value is not None}
    if given & {"locked", "rate_limit_per_user"}:
        raise errors.missing_permissions()
    creator = thread.owner_id == store.bot.id
    if body.get("archived") is False:
        if thread.locked:
            raise errors.missing_permissions()
        member = store.bot.id in thread.member_ids
        if not creator and not (member and permissions & SEND_MESSAGES_IN_THREADS):
            raise errors.missing_permissions()
    creator_only = given & {"name", "auto_archive_duration", "invitable"}
    if (creator_only or body.get("archived") is True) and not creator:
        raise errors.missing_permissions()


def guild_for_bot(store: Store, guild_id: str) -> Guild:
    """The guild, if the bot is in it (10004 for another id, 50001 once the bot left)."""
    if not guild_id.isdigit():
        raise errors.unknown_guild()
    guild = store.get_guild(guild_id)
    if not store.bot_in_guild:
        raise errors.missing_access()
    return guild
