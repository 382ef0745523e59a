"""Every change to the emulated world, made as Discord makes it.

Each :class:`State` method validates as Discord does (raising
:class:`~discord_mcp.emulator.errors.DiscordError`), applies the change, and emits an
:class:`~discord_mcp.emulator.store.Event` named like the gateway dispatch it corresponds to
(``MESSAGE_CREATE``, ``MESSAGE_UPDATE``, ``MESSAGE_DELETE``, ``MESSAGE_REACTION_ADD``,
``MESSAGE_REACTION_REMOVE``, ``THREAD_CREATE``, ``THREAD_UPDATE``, ``THREAD_DELETE``,
``CHANNEL_CREATE`` (a DM channel opened; the gateway keeps it from bots, as Discord does),
``CHANNEL_UPDATE``, ``CHANNEL_DELETE``,
``TYPING_START``, ``GUILD_ROLE_UPDATE``, ``GUILD_MEMBER_UPDATE``, ``GUILD_DELETE`` and
``GUILD_CREATE`` when the bot leaves and rejoins; interactions add ``INTERACTION_CREATE``).
Permission checks are not made here: the REST routes check what the bot may do
(``rest.py``), and the control API acts as people without them. The REST routes and the control
API go through it, and the gateway (``sessions.py``) listens to its events. Like its
:class:`~discord_mcp.emulator.store.Store`, a state belongs to one event loop.

Reactions are in ``reactions.py``, a message's mentions and reply reference in
``mentions.py``, direct messages in ``direct.py`` and the guild's roles and members in
``guild.py`` (the classes this one builds on); messages carry their files
(``attachments.py``); ``commands`` is the application's registered commands (``commands.py``),
which emit no events.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable
from typing import Any

from discord_mcp.emulator import channel_kinds as kinds
from discord_mcp.emulator import errors
from discord_mcp.emulator.attachments import assemble, check_voice_message
from discord_mcp.emulator.commands import CommandRegistry
from discord_mcp.emulator.direct import DirectState
from discord_mcp.emulator.forwards import forward_of
from discord_mcp.emulator.mentions import apply_mentions, reference_of
from discord_mcp.emulator.message_body import MessageFields, parse_message
from discord_mcp.emulator.models import (
    FLAG_IS_VOICE_MESSAGE,
    FLAG_LOADING,
    MESSAGE_REPLY,
    MESSAGE_THREAD_CREATED,
    PRIVATE_THREAD,
    PUBLIC_THREAD,
    Channel,
    Member,
    Message,
    Origin,
    User,
    iso_timestamp,
    snowflake_time_ms,
)
from discord_mcp.emulator.reactions import normalise_emoji
from discord_mcp.emulator.store import Event, Listener
from discord_mcp.emulator.uploads import Upload
from discord_mcp.emulator.validation import parse_thread

__all__ = ["NONCE_WINDOW_SECONDS", "Event", "Listener", "State", "normalise_emoji"]

NONCE_WINDOW_SECONDS = 300.0
"""How long ``enforce_nonce`` remembers a nonce ("the past few minutes" in Discord's docs)."""


class State(DirectState):
    """The emulated world and the only way to change it.

    ``strict_archived_threads`` makes sending to an archived, unlocked thread fail with 50083
    instead of unarchiving it; ``message_content_intent_enabled`` is the portal's
    MESSAGE_CONTENT toggle; ``active_thread_limit`` is the guild's cap on active (unarchived)
    threads, past which creating or reopening one is 160006 (all settable at run time).
    """

    def __init__(
        self,
        *,
        strict_archived_threads: bool = False,
        message_content_intent_enabled: bool = True,
        active_thread_limit: int = 1000,
        wall: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(wall=wall, clock=clock)
        self.strict_archived_threads = strict_archived_threads
        self.message_content_intent_enabled = message_content_intent_enabled
        self.active_thread_limit = active_thread_limit
        self.interactions_endpoint_url: str | None = None
        """The portal's Interactions Endpoint URL: while set, interactions are not dispatched
        over the gateway (Discord sends them to that URL instead)."""
        self._nonces: dict[tuple[str, str, str], tuple[str, float]] = {}
        self.commands = CommandRegistry(self.bot.id, self.new_id)

    # -- users ------------------------------------------------------------------------------

    def create_user(self, username: str) -> User:
        """A new human member of the guild."""
        user = User(self.new_id(), username, global_name=username)
        self.users[user.id] = user
        self.members[user.id] = Member(user.id)
        return user

    # -- messages -------------------------------------------------------------------------------

    def create_message(
        self,
        channel_id: str,
        author_id: str,
        body: Any,
        *,
        webhook_id: str | None = None,
        uploads: list[Upload] | None = None,
        origin: Origin | None = None,
    ) -> tuple[Message, bool]:
        """Post a message as ``author_id``, with ``uploads`` as its files; returns it and
        whether it is new. ``origin`` marks an interaction's response (``interactions.py``).

        An archived, unlocked thread is unarchived first (or 50083 in strict mode); a locked,
        archived thread refuses with 160005. With ``enforce_nonce`` a nonce the same author used
        in this channel within :data:`NONCE_WINDOW_SECONDS` returns that earlier message.
        """
        channel = self.get_channel(channel_id)
        self.get_user(author_id)
        if channel.is_dm and not self.permissions_for(author_id, channel):
            raise errors.missing_access()  # only its two sides write in a DM
        kinds.check_plain_message(channel)
        self._check_thread_accepts_messages(channel)
        fields = parse_message(body, create=True)
        files = assemble(self.new_id, channel_id, uploads or [], fields.attachments)
        if fields.is_empty() and not files:
            raise errors.empty_message()
        if fields.flags & FLAG_IS_VOICE_MESSAGE:
            other = bool(fields.content or fields.embeds or fields.components)
            check_voice_message(files, other or fields.has_other_content)
        nonce_key = None
        if fields.enforce_nonce and fields.nonce is not None:
            nonce_key = (channel_id, author_id, str(fields.nonce))
            earlier = self._nonces.get(nonce_key)
            if earlier is not None and self.clock() - earlier[1] < NONCE_WINDOW_SECONDS:
                existing = self.messages.get(earlier[0])
                if existing is not None:
                    return existing, False
        reference = reference_of(self, channel, fields)
        snapshot = forward_of(self, fields, files)
        if channel.is_thread and channel.archived:
            self._set_archived(channel, False)  # 160006 when the guild has no room for it
            self.emit("THREAD_UPDATE", channel.to_json())
        message = Message(
            id=self.new_id(),
            channel_id=channel_id,
            author_id=author_id,
            content=fields.content,
            tts=fields.tts,
            flags=fields.flags,
            embeds=fields.embeds,
            components=fields.components,
            nonce=fields.nonce,
            webhook_id=webhook_id,
            application_id=webhook_id,
            attachments=files,
        )
        message.timestamp = iso_timestamp(snowflake_time_ms(message.id))
        if snapshot is not None:
            message.reference, message.snapshot = snapshot
        elif reference is not None:
            message.type = MESSAGE_REPLY
            message.reference = reference
        if origin is not None:
            origin.mark(message)
        for attachment in files:
            attachment.message_id = message.id
        self.keep_files(files)
        apply_mentions(self, message, fields, reply_to=reference)
        self._store(channel, message)
        if nonce_key is not None:
            self._nonces[nonce_key] = (message.id, self.clock())
        return message, True

    def create_loading_message(
        self,
        channel_id: str,
        author_id: str,
        *,
        flags: int,
        application_id: str,
        origin: Origin | None = None,
    ) -> Message:
        """The "is thinking..." message a deferred interaction response (type 5) shows."""
        channel = self.get_channel(channel_id)
        message = Message(
            id=self.new_id(),
            channel_id=channel_id,
            author_id=author_id,
            flags=flags | FLAG_LOADING,
            webhook_id=application_id,
            application_id=application_id,
        )
        message.timestamp = iso_timestamp(snowflake_time_ms(message.id))
        if origin is not None:
            origin.mark(message)
        self._store(channel, message)
        return message

    def _check_thread_accepts_messages(self, channel: Channel) -> None:
        if channel.is_thread and channel.archived:
            if channel.locked:
                raise errors.thread_locked()
            if self.strict_archived_threads:
                raise errors.thread_archived()

    def edit_message(
        self,
        channel_id: str,
        message_id: str,
        editor_id: str,
        body: Any,
        uploads: list[Upload] | None = None,
    ) -> Message:
        """Edit content, embeds, components, flags and files; only the author may (50005
        otherwise)."""
        channel = self.get_channel(channel_id)
        message = self.get_message(channel_id, message_id)
        if channel.is_thread and channel.archived:
            raise errors.thread_archived()
        if message.author_id != editor_id:
            raise errors.cannot_edit_other_users_message()
        fields = parse_message(body, create=False)
        self.apply_edit(message, fields, uploads)
        return message

    def apply_edit(
        self, message: Message, fields: MessageFields, uploads: list[Upload] | None = None
    ) -> None:
        """Apply a validated edit (also used by interaction responses) and emit the update."""
        files = message.attachments
        if uploads or fields.attachments is not None:
            files = assemble(
                self.new_id, message.channel_id, uploads or [], fields.attachments, files
            )
        before = (message.content, message.embeds, message.components, message.flags)
        if "content" in fields.given:
            message.content = fields.content
        if "embeds" in fields.given:
            message.embeds = fields.embeds
        if "components" in fields.given:
            message.components = fields.components
        if "flags" in fields.given:
            message.flags = fields.flags
        if not (message.content.strip() or message.embeds or message.components or files):
            message.content, message.embeds, message.components, message.flags = before
            raise errors.empty_message()
        if files is not message.attachments:
            kept = {attachment.id for attachment in files}
            self.drop_files([a for a in message.attachments if a.id not in kept])
            for attachment in files:
                attachment.message_id = message.id
            message.attachments = files
            self.keep_files(files)
        if "content" in fields.given or "allowed_mentions" in fields.given:
            reply_to = message.reference if message.type == MESSAGE_REPLY else None
            if reply_to is not None and reply_to.get("message_id") not in self.messages:
                reply_to = None
            apply_mentions(self, message, fields, reply_to=reply_to)
        message.edited_timestamp = self.now_iso()
        self.emit("MESSAGE_UPDATE", self._event_message(message))

    def delete_message(self, channel_id: str, message_id: str) -> None:
        """Delete a message (allowed in archived threads, as on Discord)."""
        message = self.get_message(channel_id, message_id)
        self.drop_files(message.attachments)
        del self.messages[message_id]
        history = self._history.get(channel_id, [])
        index = bisect.bisect_left(history, int(message_id))
        if index < len(history) and history[index] == int(message_id):
            history.pop(index)
        event = {"id": message_id, "channel_id": channel_id}
        if not self.is_direct(channel_id):
            event["guild_id"] = self.guild.id
        self.emit("MESSAGE_DELETE", event)

    # -- threads and channels --------------------------------------------------------------

    def create_thread_from_message(
        self, channel_id: str, message_id: str, owner_id: str, body: Any
    ) -> Channel:
        """A public thread whose id is the message's id (160004 if it already has one)."""
        parent = self.get_channel(channel_id)
        if parent.is_thread or parent.is_dm:
            raise errors.wrong_channel_type()
        message = self.get_message(channel_id, message_id)
        if message.thread_id is not None or message.id in self.channels:
            raise errors.thread_already_exists()
        fields = parse_thread(body, create=True)
        kind = kinds.thread_from_message_kind(parent)
        self._check_thread_room()
        thread = self._new_thread(parent, message.id, kind, owner_id, fields.name or "")
        if fields.auto_archive_duration is not None:
            thread.auto_archive_duration = fields.auto_archive_duration
        thread.rate_limit_per_user = fields.rate_limit_per_user or 0
        message.thread_id = thread.id
        self.emit("THREAD_CREATE", thread.to_json() | {"newly_created": True})
        self.emit("MESSAGE_UPDATE", self._event_message(message))
        return thread

    def create_thread(self, channel_id: str, owner_id: str, body: Any) -> Channel:
        """A thread without a starter message (``type`` defaults to 12, private), or a forum's
        post with its first message (``channel_kinds.py``)."""
        parent = self.get_channel(channel_id)
        if parent.is_thread or parent.is_dm:
            raise errors.wrong_channel_type()
        fields = parse_thread(body, create=True)
        kind = kinds.thread_kind(parent, fields.type, body)
        first = body["message"] if parent.type in kinds.POSTS_ONLY else None
        if first is not None:
            parse_message(first, create=True)  # a bad first message refuses the whole post
        self._check_thread_room()
        thread = self._new_thread(parent, self.new_id(), kind, owner_id, fields.name or "")
        if fields.auto_archive_duration is not None:
            thread.auto_archive_duration = fields.auto_archive_duration
        thread.rate_limit_per_user = fields.rate_limit_per_user or 0
        if fields.invitable is not None:
            thread.invitable = fields.invitable
        self.emit("THREAD_CREATE", thread.to_json() | {"newly_created": True})
        if first is not None:
            self.create_message(thread.id, owner_id, first)
            return thread
        if kind == PUBLIC_THREAD:
            # Discord announces a public thread started without a message in its parent.
            notice = Message(
                id=self.new_id(),
                channel_id=parent.id,
                author_id=owner_id,
                content=thread.name,
                type=MESSAGE_THREAD_CREATED,
                reference={"type": 0, "channel_id": thread.id, "guild_id": self.guild.id},
            )
            notice.timestamp = iso_timestamp(snowflake_time_ms(notice.id))
            self._store(parent, notice)
        return thread

    def create_channel(self, name: str, kind: int, *, topic: str | None = None) -> Channel:
        """A new channel of the guild (text, announcement, forum or media), with no
        permission overwrites."""
        if kind not in kinds.CREATABLE:
            raise ValueError(f"type must be one of {sorted(kinds.CREATABLE)}")
        position = 1 + max(
            (c.position for c in self.channels.values() if not c.is_thread), default=0
        )
        channel = Channel(self.new_id(), kind, name, self.guild.id, position=position, topic=topic)
        self.channels[channel.id] = channel
        self._history[channel.id] = []
        self.emit("CHANNEL_CREATE", channel.to_json())
        return channel

    def _new_thread(
        self, parent: Channel, thread_id: str, kind: int, owner_id: str, name: str
    ) -> Channel:
        self.get_user(owner_id)
        now = self.now_iso()
        thread = Channel(
            id=thread_id,
            type=kind,
            name=name,
            guild_id=self.guild.id,
            parent_id=parent.id,
            owner_id=owner_id,
            archive_timestamp=now,
            create_timestamp=now,
            member_ids=[owner_id],
            active_at=self.wall(),
        )
        self.channels[thread.id] = thread
        self._history[thread.id] = []
        return thread

    def update_channel(self, channel_id: str, body: Any) -> Channel:
        """Edit a channel or thread; an archived thread accepts only edits that unarchive it."""
        channel = self.get_channel(channel_id)
        if channel.is_dm:
            raise errors.wrong_channel_type()
        fields = parse_thread(body, create=False, thread=channel.is_thread)
        if not channel.is_thread:
            if fields.name is not None:
                channel.name = fields.name
            if fields.topic_given:
                channel.topic = fields.topic
            if fields.rate_limit_per_user is not None:
                channel.rate_limit_per_user = fields.rate_limit_per_user
            self.emit("CHANNEL_UPDATE", channel.to_json())
            return channel
        if channel.archived and fields.archived is not False:
            raise errors.thread_archived()
        if fields.archived is not None and fields.archived != channel.archived:
            self._set_archived(channel, fields.archived)
        if fields.name is not None:
            channel.name = fields.name
        if fields.locked is not None:
            channel.locked = fields.locked
        if fields.invitable is not None and channel.type == PRIVATE_THREAD:
            channel.invitable = fields.invitable
        if fields.rate_limit_per_user is not None:
            channel.rate_limit_per_user = fields.rate_limit_per_user
        if fields.auto_archive_duration is not None:
            if fields.auto_archive_duration != channel.auto_archive_duration:
                channel.archive_timestamp = self.now_iso()
                channel.active_at = self.wall()
            channel.auto_archive_duration = fields.auto_archive_duration
        self.emit("THREAD_UPDATE", channel.to_json())
        return channel

    def delete_channel(self, channel_id: str) -> Channel:
        """Delete a channel or thread with its messages (a channel's threads go too); it is
        10003 Unknown Channel from then on."""
        channel = self.get_channel(channel_id)
        doomed = [channel.id]
        if not channel.is_thread:
            doomed += [c.id for c in self.channels.values() if c.parent_id == channel.id]
        for gone in reversed(doomed):
            for message_id in self._history.pop(gone, []):
                self.messages.pop(str(message_id), None)
            thread = self.channels.pop(gone)
            if thread.is_thread:
                starter = self.messages.get(thread.id)
                if starter is not None and starter.thread_id == thread.id:
                    starter.thread_id = None
                self.emit(
                    "THREAD_DELETE",
                    {
                        "id": thread.id,
                        "guild_id": thread.guild_id,
                        "parent_id": thread.parent_id,
                        "type": thread.type,
                    },
                )
            else:
                self.emit("CHANNEL_DELETE", thread.to_json())
        return channel

    def _check_thread_room(self) -> None:
        kinds.check_thread_room(self.channels.values(), self.active_thread_limit)

    def _set_archived(self, thread: Channel, archived: bool) -> None:
        if thread.archived and not archived:
            self._check_thread_room()
        thread.archived = archived
        thread.archive_timestamp = self.now_iso()
        if not archived:
            thread.active_at = self.wall()

    def typing(self, channel_id: str, user_id: str) -> None:
        channel = self.get_channel(channel_id)
        event: dict[str, Any] = {
            "channel_id": channel_id,
            "user_id": user_id,
            "timestamp": int(self.wall()),
        }
        if not channel.is_dm:
            event.update(guild_id=self.guild.id, member=self.member_json(user_id))
        self.emit("TYPING_START", event)
