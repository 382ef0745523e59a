"""The emulator's records (users, roles and members, channels and threads, messages,
reactions, attachments) and their ids.

Records are plain mutable dataclasses owned by :class:`~discord_mcp.emulator.state.State`; the
JSON Discord sends is built from them by the state, which can resolve references (authors,
threads). Snowflakes follow Discord: ``(ms since 2015-01-01 << 22) | increment``, as strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from discord_mcp.emulator.permissions import Overwrite

DISCORD_EPOCH_MS = 1_420_070_400_000

GUILD_TEXT = 0
DM = 1
ANNOUNCEMENT_THREAD = 10
PUBLIC_THREAD = 11
PRIVATE_THREAD = 12
THREAD_TYPES = frozenset({ANNOUNCEMENT_THREAD, PUBLIC_THREAD, PRIVATE_THREAD})

MESSAGE_DEFAULT = 0
MESSAGE_THREAD_CREATED = 18
MESSAGE_REPLY = 19
MESSAGE_CHAT_INPUT_COMMAND = 20

FLAG_EPHEMERAL = 1 << 6
FLAG_LOADING = 1 << 7
FLAG_IS_VOICE_MESSAGE = 1 << 13
FLAG_IS_COMPONENTS_V2 = 1 << 15

AUTO_ARCHIVE_DURATIONS = (60, 1440, 4320, 10080)


def snowflake_at(unix_ms: int, increment: int = 0) -> str:
    """The snowflake id of something created at ``unix_ms`` (worker and process 0)."""
    return str(((unix_ms - DISCORD_EPOCH_MS) << 22) | (increment & 0xFFF))


def snowflake_time_ms(snowflake: str) -> int:
    """Unix milliseconds encoded in a snowflake."""
    return (int(snowflake) >> 22) + DISCORD_EPOCH_MS


def iso_timestamp(unix_ms: int) -> str:
    """Discord's ISO 8601 form: ``2024-01-01T00:00:00.000000+00:00``."""
    return datetime.fromtimestamp(unix_ms / 1000, tz=UTC).isoformat(timespec="microseconds")


class SnowflakeGenerator:
    """Strictly increasing snowflakes from a wall clock in seconds."""

    def __init__(self) -> None:
        self._last = 0

    def next(self, now_s: float) -> str:
        candidate = int(snowflake_at(int(now_s * 1000)))
        # Same millisecond (or a clock that stepped back): keep ids increasing anyway.
        value = max(candidate, self._last + 1)
        self._last = value
        return str(value)


@dataclass
class User:
    id: str
    username: str
    bot: bool = False
    global_name: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Discord's user object (the spec's ``UserResponse``)."""
        data: dict[str, Any] = {
            "id": self.id,
            "username": self.username,
            "avatar": None,
            "discriminator": "0",
            "public_flags": 0,
            "flags": 0,
            "global_name": self.global_name,
            "primary_guild": None,
            "avatar_decoration_data": None,
            "collectibles": None,
            "banner": None,
            "accent_color": None,
        }
        if self.bot:
            data["bot"] = True
        return data


@dataclass
class Role:
    """A guild role; the ``@everyone`` role has the guild's id and position 0.

    ``bot_id`` marks the role Discord creates for a bot when it joins (managed, tagged).
    """

    id: str
    name: str
    permissions: int
    position: int = 0
    bot_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Discord's role object (the spec's ``GuildRoleResponse``)."""
        data: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "permissions": str(self.permissions),
            "position": self.position,
            "color": 0,
            "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
            "hoist": False,
            "managed": self.bot_id is not None,
            "mentionable": False,
            "icon": None,
            "unicode_emoji": None,
            "flags": 0,
        }
        if self.bot_id is not None:
            data["tags"] = {"bot_id": self.bot_id}
        return data


@dataclass
class Member:
    """A user's membership of the guild: the ids of their roles (never ``@everyone``'s)."""

    user_id: str
    role_ids: list[str] = field(default_factory=list)


@dataclass
class Channel:
    """A guild text channel, a thread when ``type`` is 10, 11 or 12, or the bot's direct
    message channel with one user when ``type`` is 1 (``DM``: no guild, no name)."""

    id: str
    type: int
    name: str
    guild_id: str
    parent_id: str | None = None
    topic: str | None = None
    position: int = 0
    last_message_id: str | None = None
    rate_limit_per_user: int = 0
    # Text channels only (a thread is governed by its parent's).
    overwrites: list[Overwrite] = field(default_factory=list)
    # Thread-only fields.
    owner_id: str | None = None
    archived: bool = False
    locked: bool = False
    invitable: bool = True
    auto_archive_duration: int = 1440
    archive_timestamp: str | None = None
    create_timestamp: str | None = None
    message_count: int = 0
    total_message_sent: int = 0
    member_ids: list[str] = field(default_factory=list)
    # Wall seconds of the thread's last activity (made, reopened, a new message): it archives
    # itself ``auto_archive_duration`` minutes later (``idle.py``).
    active_at: float = 0.0
    # DM-only: the other user (Discord lists the recipients, never the bot itself).
    recipients: list[User] = field(default_factory=list)

    @property
    def is_thread(self) -> bool:
        return self.type in THREAD_TYPES

    @property
    def is_dm(self) -> bool:
        return self.type == DM

    def to_json(self) -> dict[str, Any]:
        """``GuildChannelResponse`` for a text channel, ``ThreadResponse`` for a thread,
        ``PrivateChannelResponse`` for a DM."""
        if self.is_dm:
            return {
                "id": self.id,
                "type": DM,
                "flags": 0,
                "last_message_id": self.last_message_id,
                "recipients": [user.to_json() for user in self.recipients],
            }
        data: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "flags": 0,
            "guild_id": self.guild_id,
            "name": self.name,
            "parent_id": self.parent_id,
            "last_message_id": self.last_message_id,
            "rate_limit_per_user": self.rate_limit_per_user,
        }
        if not self.is_thread:
            data.update(
                position=self.position,
                topic=self.topic,
                nsfw=False,
                permission_overwrites=[o.to_json() for o in self.overwrites],
                default_auto_archive_duration=1440,
            )
            return data
        metadata: dict[str, Any] = {
            "archived": self.archived,
            "archive_timestamp": self.archive_timestamp,
            "auto_archive_duration": self.auto_archive_duration,
            "locked": self.locked,
        }
        if self.create_timestamp is not None:
            metadata["create_timestamp"] = self.create_timestamp
        if self.type == PRIVATE_THREAD:
            metadata["invitable"] = self.invitable
        data.update(
            owner_id=self.owner_id,
            thread_metadata=metadata,
            message_count=self.message_count,
            # Discord stops counting members at 50.
            member_count=min(len(self.member_ids), 50),
            total_message_sent=self.total_message_sent,
        )
        return data


@dataclass
class Reaction:
    """One emoji on a message and who added it, in the order they did."""

    emoji: str
    user_ids: list[str] = field(default_factory=list)

    def emoji_json(self) -> dict[str, Any]:
        name, _, emoji_id = self.emoji.partition(":")
        return {"id": emoji_id or None, "name": name}


@dataclass
class Attachment:
    """A file on a message (or given as a command option), with its bytes.

    ``channel_id`` is where its URL points; ``message_id`` is None for a command option's file,
    which no message holds. ``flags`` are attachment flags (IS_SPOILER is ``1 << 3``).
    """

    id: str
    channel_id: str
    filename: str
    data: bytes
    content_type: str | None = None
    description: str | None = None
    title: str | None = None
    duration_secs: float | None = None
    waveform: str | None = None
    flags: int = 0
    message_id: str | None = None
    ephemeral: bool = False

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass
class Message:
    id: str
    channel_id: str
    author_id: str
    content: str = ""
    type: int = MESSAGE_DEFAULT
    timestamp: str = ""
    edited_timestamp: str | None = None
    tts: bool = False
    flags: int = 0
    pinned: bool = False
    mention_everyone: bool = False
    mention_ids: list[str] = field(default_factory=list)
    embeds: list[dict[str, Any]] = field(default_factory=list)
    components: list[dict[str, Any]] = field(default_factory=list)
    reactions: list[Reaction] = field(default_factory=list)
    # message_reference as Discord returns it: {"type", "channel_id", "message_id", "guild_id"}.
    reference: dict[str, Any] | None = None
    # A forward's copy of the forwarded message (message_snapshots[0].message), fixed when sent.
    snapshot: dict[str, Any] | None = None
    thread_id: str | None = None
    nonce: int | str | None = None
    webhook_id: str | None = None
    application_id: str | None = None
    attachments: list[Attachment] = field(default_factory=list)
    # An ephemeral message exists only for this user (the one who used the interaction).
    visible_to: str | None = None
    # interaction_metadata for a response to an application command, as Discord sends it.
    interaction: dict[str, Any] | None = None


@dataclass(frozen=True)
class Origin:
    """The interaction a bot's response message answers: the user it was for, the
    ``interaction_metadata`` of an application command, and whether the message is the
    command's original response (type 20 CHAT_INPUT_COMMAND) rather than a followup."""

    user_id: str
    interaction: dict[str, Any] | None = None
    original: bool = False

    def mark(self, message: Message) -> None:
        if message.flags & FLAG_EPHEMERAL:
            message.visible_to = self.user_id
        if self.interaction is not None:
            message.interaction = self.interaction
            if self.original:
                message.type = MESSAGE_CHAT_INPUT_COMMAND
