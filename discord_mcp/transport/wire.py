"""Discord's JSON payloads as we read them (TypedDicts; fields we do not use are omitted).

Wire data is untrusted: code reads optional fields with ``.get`` and tolerates extra ones.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class User(TypedDict):
    id: str
    username: str
    global_name: NotRequired[str | None]
    bot: NotRequired[bool]


class Emoji(TypedDict):
    id: str | None
    name: str | None


class Reaction(TypedDict):
    emoji: Emoji
    count: int
    me: bool


class MessageReference(TypedDict, total=False):
    message_id: str
    channel_id: str
    guild_id: str


class Attachment(TypedDict):
    id: str
    filename: str
    size: int
    url: str
    proxy_url: NotRequired[str]
    content_type: NotRequired[str]
    duration_secs: NotRequired[float]


class Message(TypedDict):
    id: str
    channel_id: str
    author: User
    content: str
    timestamp: str
    edited_timestamp: NotRequired[str | None]
    type: NotRequired[int]
    components: NotRequired[list[dict[str, Any]]]
    embeds: NotRequired[list[dict[str, Any]]]
    reactions: NotRequired[list[Reaction]]
    message_reference: NotRequired[MessageReference]
    webhook_id: NotRequired[str]
    attachments: NotRequired[list[Attachment]]
    flags: NotRequired[int]


class ThreadMetadata(TypedDict, total=False):
    archived: bool
    locked: bool
    auto_archive_duration: int
    archive_timestamp: str


class Channel(TypedDict):
    id: str
    type: int
    name: NotRequired[str | None]
    guild_id: NotRequired[str]
    parent_id: NotRequired[str | None]
    thread_metadata: NotRequired[ThreadMetadata]
    last_message_id: NotRequired[str | None]


class SessionStartLimit(TypedDict):
    total: int
    remaining: int
    reset_after: int
    max_concurrency: int


class GatewayBot(TypedDict):
    url: str
    shards: int
    session_start_limit: SessionStartLimit
