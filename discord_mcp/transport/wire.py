"""Discord's JSON payloads as we read them (TypedDicts; fields we do not use are omitted).

Wire data is untrusted: code reads optional fields with ``.get`` and tolerates extra ones.
"""

from __future__ import annotations

from collections.abc import Mapping
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


FORWARD = 1
"""``message_reference.type`` of a forwarded message: its own content is empty, and the
forwarded message is in ``message_snapshots[].message``."""


def snapshots(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The messages a forwarded message carries (none for any other message)."""
    reference = message.get("message_reference")
    if not isinstance(reference, dict) or reference.get("type") != FORWARD:
        return []
    found = message.get("message_snapshots")
    if not isinstance(found, list):
        return []
    return [
        s["message"] for s in found if isinstance(s, dict) and isinstance(s.get("message"), dict)
    ]


def text_of(message: Mapping[str, Any]) -> str:
    """What a message says: its content, or a forwarded message's (read from its snapshot)."""
    content = str(message.get("content") or "")
    if content.strip():
        return content
    for forwarded in snapshots(message):
        text = str(forwarded.get("content") or "")
        if text.strip():
            return text
    return content


def _shows_something(message: Mapping[str, Any]) -> bool:
    return bool(
        str(message.get("content") or "").strip()
        or message.get("attachments")
        or message.get("embeds")
        or message.get("sticker_items")
        or message.get("components")
        or message.get("poll")
    )


def content_withheld(message: Mapping[str, Any]) -> bool:
    """Whether a person's message reached us with nothing in it: Discord withholds message text
    (and files, embeds) from a bot without the Message Content intent. A forward is judged by
    what it forwards."""
    if _shows_something(message):
        return False
    forwarded = snapshots(message)
    if forwarded:
        return not any(_shows_something(m) for m in forwarded)
    return True
