"""The emulated world's records: one guild with its roles and members, its channels and
threads, users, messages.

:class:`Store` keeps the records, finds them (raising Discord's 10003/10004/10007/10008/10011/
10013), computes a member's permissions in a channel (``permissions.py``), renders records as
Discord's JSON and feeds :class:`Event` listeners. Changes are made only through
:class:`~discord_mcp.emulator.state.State`, which builds on it.

The startup world: the guild is owned by the ``owner`` user (the person the bot works for,
who as owner has every permission); its roles are ``@everyone`` (id = the guild's id) and the
bot's managed role, which grants exactly what discord-mcp needs; the bot and the owner are
members (the bot with its role, the owner with none); the text channel has no overwrites.

A store is used from one event loop and is not thread-safe. Its clocks are injectable:
``wall`` (Unix seconds, for ids and timestamps) and ``clock`` (monotonic seconds, for nonces
and interaction deadlines).

Attachments live on their message (``Message.attachments``) and are indexed by id in
``files`` (with a command option's files, which no message holds), so their bytes can be
served (``media.py``); attachment URLs start with ``media_base``, the emulator's own address,
which the server sets once it knows its port.
"""

from __future__ import annotations

import bisect
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from discord_mcp.emulator import errors
from discord_mcp.emulator.attachments import attachment_json
from discord_mcp.emulator.models import (
    DM,
    FLAG_EPHEMERAL,
    GUILD_TEXT,
    MESSAGE_REPLY,
    PRIVATE_THREAD,
    Attachment,
    Channel,
    Member,
    Message,
    Role,
    SnowflakeGenerator,
    User,
    iso_timestamp,
    snowflake_at,
    snowflake_time_ms,
)
from discord_mcp.emulator.permissions import (
    BOT_ROLE_PERMISSIONS,
    DM_PERMISSIONS,
    EVERYONE_PERMISSIONS,
    MANAGE_THREADS,
    apply_overwrites,
    base_permissions,
    implicit,
)

# Startup records get fixed ids (2024-01-01T00:00:00Z) so a person running the emulator keeps
# the same DISCORD_CHANNEL_ID across restarts; everything created later has newer ids.
_STARTUP_MS = 1_704_067_200_000


@dataclass(frozen=True)
class Event:
    """A change in the world, named like its gateway dispatch; ``data`` is the dispatch body."""

    type: str
    data: dict[str, Any]


Listener = Callable[[Event], None]


@dataclass
class Guild:
    id: str
    name: str
    owner_id: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "owner_id": self.owner_id}


class Store:
    """The records, their lookups and JSON, and the event feed. :class:`State` adds the changes.

    After construction ``guild``, ``channel`` (the text channel), ``bot``, ``owner``,
    ``everyone`` and ``bot_role`` (the two startup roles) are set.
    """

    def __init__(
        self,
        *,
        wall: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._wall = wall
        self.time_offset = 0.0
        """Seconds the emulator's world is ahead of the real wall clock (``POST
        /_emulator/time``): messages and threads age without a test waiting an hour."""
        self.clock = clock
        self._ids = SnowflakeGenerator()
        self._listeners: list[Listener] = []
        self.bot = User(snowflake_at(_STARTUP_MS, 1), "discord-mcp-emulator", bot=True)
        self.owner = User(snowflake_at(_STARTUP_MS, 2), "owner", global_name="Owner")
        self.guild = Guild(snowflake_at(_STARTUP_MS, 3), "discord-mcp emulator", self.owner.id)
        self.channel = Channel(snowflake_at(_STARTUP_MS, 4), GUILD_TEXT, "agents", self.guild.id)
        self.everyone = Role(self.guild.id, "@everyone", EVERYONE_PERMISSIONS)
        self.bot_role = Role(
            snowflake_at(_STARTUP_MS, 5),
            self.bot.username,
            BOT_ROLE_PERMISSIONS,
            position=1,
            bot_id=self.bot.id,
        )
        self.roles: dict[str, Role] = {r.id: r for r in (self.everyone, self.bot_role)}
        self.members: dict[str, Member] = {
            self.bot.id: Member(self.bot.id, [self.bot_role.id]),
            self.owner.id: Member(self.owner.id),
        }
        self.users: dict[str, User] = {u.id: u for u in (self.bot, self.owner)}
        self.channels: dict[str, Channel] = {self.channel.id: self.channel}
        self.messages: dict[str, Message] = {}
        # Per channel, message ids as ints in ascending order (ids only ever increase).
        self._history: dict[str, list[int]] = {self.channel.id: []}
        self.files: dict[str, Attachment] = {}
        # Direct messages: each user's DM channel with the bot, and who accepts none.
        self.dm_channels: dict[str, str] = {}
        self.refusing_dms: set[str] = set()
        self.media_base = "http://127.0.0.1"
        self.media_secret = secrets.token_bytes(16)

    # -- events ------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every :class:`Event`; returns a function that unsubscribes."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, type_: str, data: dict[str, Any]) -> None:
        event = Event(type_, data)
        for listener in list(self._listeners):
            listener(event)

    # -- lookups and JSON ----------------------------------------------------------------------

    def wall(self) -> float:
        """The emulator's wall clock: real time plus :attr:`time_offset`."""
        return self._wall() + self.time_offset

    def new_id(self) -> str:
        return self._ids.next(self.wall())

    def now_iso(self) -> str:
        return iso_timestamp(int(self.wall() * 1000))

    def get_channel(self, channel_id: str) -> Channel:
        channel = self.channels.get(channel_id)
        if channel is None:
            raise errors.unknown_channel()
        return channel

    def get_user(self, user_id: str) -> User:
        user = self.users.get(user_id)
        if user is None:
            raise errors.unknown_user()
        return user

    def get_guild(self, guild_id: str) -> Guild:
        if guild_id != self.guild.id:
            raise errors.unknown_guild()
        return self.guild

    def get_role(self, role_id: str) -> Role:
        role = self.roles.get(role_id)
        if role is None:
            raise errors.unknown_role()
        return role

    def get_member(self, user_id: str) -> Member:
        member = self.members.get(user_id)
        if member is None:
            raise errors.unknown_member()
        return member

    @property
    def bot_in_guild(self) -> bool:
        """Whether the bot is a member of the guild (the control API can remove it)."""
        return self.bot.id in self.members

    def permissions_for(self, user_id: str, channel: Channel) -> int:
        """``user_id``'s effective permissions in ``channel`` as Discord enforces them.

        0 for someone outside the guild. A thread takes its parent's overwrites; a private
        thread shows nothing to a non-member without MANAGE_THREADS. In a DM both sides hold
        :data:`DM_PERMISSIONS`, and nobody else anything.
        """
        if channel.type == DM:
            inside = user_id == self.bot.id or any(u.id == user_id for u in channel.recipients)
            return DM_PERMISSIONS if inside else 0
        member = self.members.get(user_id)
        if member is None:
            return 0
        source = channel
        if channel.is_thread and channel.parent_id in self.channels:
            source = self.channels[channel.parent_id]
        base = base_permissions(
            guild_id=self.guild.id,
            owner_id=self.guild.owner_id,
            role_permissions={role.id: role.permissions for role in self.roles.values()},
            member_id=user_id,
            member_roles=member.role_ids,
        )
        permissions = apply_overwrites(
            base,
            guild_id=self.guild.id,
            member_id=user_id,
            member_roles=member.role_ids,
            overwrites=source.overwrites,
        )
        permissions = implicit(permissions, thread=channel.is_thread)
        hidden = channel.type == PRIVATE_THREAD and user_id not in channel.member_ids
        if hidden and not permissions & MANAGE_THREADS:
            return 0
        return permissions

    def get_message(self, channel_id: str, message_id: str) -> Message:
        self.get_channel(channel_id)
        message = self.messages.get(message_id)
        if message is None or message.channel_id != channel_id or is_hidden(message):
            raise errors.unknown_message()
        return message

    def message_json(
        self, message: Message, *, viewer_id: str | None = None, nested: bool = False
    ) -> dict[str, Any]:
        """Discord's message object; ``me`` on reactions is relative to ``viewer_id`` (the bot)."""
        viewer = viewer_id or self.bot.id
        data: dict[str, Any] = {
            "id": message.id,
            "channel_id": message.channel_id,
            "author": self.users[message.author_id].to_json(),
            "content": message.content,
            "timestamp": message.timestamp,
            "edited_timestamp": message.edited_timestamp,
            "tts": message.tts,
            "mention_everyone": message.mention_everyone,
            "mentions": [self.users[u].to_json() for u in message.mention_ids if u in self.users],
            "mention_roles": [],
            "attachments": [self.attachment_json(a) for a in message.attachments],
            "embeds": message.embeds,
            "pinned": message.pinned,
            "type": message.type,
            "flags": message.flags,
            "components": message.components,
        }
        if message.reactions:
            data["reactions"] = [
                {
                    "emoji": reaction.emoji_json(),
                    "count": len(reaction.user_ids),
                    "count_details": {"burst": 0, "normal": len(reaction.user_ids)},
                    "burst_colors": [],
                    "me_burst": False,
                    "me": viewer in reaction.user_ids,
                }
                for reaction in message.reactions
            ]
        if message.snapshot is not None:
            data["message_snapshots"] = [{"message": message.snapshot}]
        if message.reference is not None:
            data["message_reference"] = message.reference
            if not nested and message.type == MESSAGE_REPLY:
                target = self.messages.get(message.reference.get("message_id", ""))
                data["referenced_message"] = (
                    None if target is None else self.message_json(target, nested=True)
                )
        if message.thread_id is not None and message.thread_id in self.channels:
            data["thread"] = self.channels[message.thread_id].to_json()
        if message.webhook_id is not None:
            data["webhook_id"] = message.webhook_id
        if message.application_id is not None:
            data["application_id"] = message.application_id
        if message.interaction is not None:
            data["interaction_metadata"] = message.interaction
        return data

    def attachment_json(self, attachment: Attachment) -> dict[str, Any]:
        """Discord's attachment object, its URLs signed now and pointing at ``media_base``."""
        return attachment_json(attachment, self.media_base, self.media_secret, self.wall())

    def keep_files(self, attachments: list[Attachment]) -> None:
        """Index attachments by id so their bytes can be served."""
        for attachment in attachments:
            self.files[attachment.id] = attachment

    def drop_files(self, attachments: list[Attachment]) -> None:
        for attachment in attachments:
            self.files.pop(attachment.id, None)

    def member_json(self, user_id: str, *, with_user: bool = True) -> dict[str, Any]:
        """A user's guild member object (the spec's ``GuildMemberResponse``).

        Gateway message events carry it without ``user`` (the author is beside it). A user
        outside the guild is shown with no roles.
        """
        user = self.get_user(user_id)
        member = self.members.get(user_id)
        data: dict[str, Any] = {
            "roles": list(member.role_ids) if member is not None else [],
            "joined_at": iso_timestamp(snowflake_time_ms(user.id)),
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "nick": None,
            "avatar": None,
            "banner": None,
            "premium_since": None,
            "communication_disabled_until": None,
        }
        if with_user:
            data["user"] = user.to_json()
        return data

    def is_direct(self, channel_id: str) -> bool:
        """Whether ``channel_id`` is a DM channel (its events carry no guild)."""
        channel = self.channels.get(channel_id)
        return channel is not None and channel.type == DM

    def _event_message(self, message: Message) -> dict[str, Any]:
        """A message as MESSAGE_CREATE/UPDATE carry it: with ``guild_id`` and the author's
        ``member`` (none for webhook and interaction-response messages, nor in a DM)."""
        if self.is_direct(message.channel_id):
            return self.message_json(message)
        data = self.message_json(message) | {"guild_id": self.guild.id}
        if message.webhook_id is None:
            data["member"] = self.member_json(message.author_id, with_user=False)
        return data

    def list_messages(
        self,
        channel_id: str,
        *,
        limit: int,
        before: int | None = None,
        after: int | None = None,
        around: int | None = None,
    ) -> list[Message]:
        """Discord's history page, newest first (at most one of before/after/around).

        ``after`` is the ``limit`` messages right after it; ``around`` is ``limit // 2``
        messages on each side and the message itself, so an even limit can give ``limit + 1``
        (discord.py documents this, and asks for 100 to get 101).
        """
        self.get_channel(channel_id)
        ids = self._history.get(channel_id, [])
        if after is not None:
            start = bisect.bisect_right(ids, after)
            page = ids[start : start + limit]
        elif around is not None:
            low = bisect.bisect_left(ids, around)
            high = bisect.bisect_right(ids, around)
            side = limit // 2
            page = ids[max(0, low - side) : low] + ids[low:high] + ids[high : high + side]
        else:
            end = len(ids) if before is None else bisect.bisect_left(ids, before)
            page = ids[max(0, end - limit) : end]
        return [self.messages[str(i)] for i in reversed(page)]

    def history(self, channel_id: str) -> list[Message]:
        """Every message of a channel or thread, oldest first."""
        self.get_channel(channel_id)
        return [self.messages[str(i)] for i in self._history.get(channel_id, [])]

    def _store(self, channel: Channel, message: Message) -> None:
        """Keep a new message in its channel's history and announce it (for :class:`State`)."""
        self.messages[message.id] = message
        if message.flags & FLAG_EPHEMERAL:
            # Ephemeral messages reach only the clicking user: never in the channel's history.
            self.emit("MESSAGE_CREATE", self._event_message(message))
            return
        self._history.setdefault(channel.id, []).append(int(message.id))
        channel.last_message_id = message.id
        if channel.is_thread:
            channel.active_at = self.wall()  # a new message is activity; an edit is not
            channel.message_count += 1
            channel.total_message_sent += 1
            if message.author_id not in channel.member_ids:
                channel.member_ids.append(message.author_id)
        self.emit("MESSAGE_CREATE", self._event_message(message))


def is_hidden(message: Message) -> bool:
    """Ephemeral messages exist only for the user who clicked; no channel lists them."""
    return bool(message.flags & FLAG_EPHEMERAL)
