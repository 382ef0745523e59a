"""Gateway intents: which dispatches a session receives, and what MESSAGE_CONTENT withholds.

A session receives a dispatch only if its IDENTIFY asked for the intent that gates it
(``INTERACTION_CREATE`` and the session's own READY/RESUMED need none). Messages, reactions
and typing in a direct message are gated by the DIRECT_MESSAGES, DIRECT_MESSAGE_REACTIONS and
DIRECT_MESSAGE_TYPING intents instead of their GUILD_ ones. MESSAGE_CONTENT gates no event,
only fields: without it, ``content``, ``embeds``, ``attachments``, ``components`` and ``poll``
of a guild message arrive empty, except on the bot's own messages, messages that mention the
bot, and DMs. REST message reads follow the same rule when the Developer Portal toggle is off,
whatever the gateway intents.
"""

from __future__ import annotations

from typing import Any

GUILDS = 1 << 0
GUILD_MEMBERS = 1 << 1
GUILD_PRESENCES = 1 << 8
GUILD_MESSAGES = 1 << 9
GUILD_MESSAGE_REACTIONS = 1 << 10
GUILD_MESSAGE_TYPING = 1 << 11
DIRECT_MESSAGES = 1 << 12
DIRECT_MESSAGE_REACTIONS = 1 << 13
DIRECT_MESSAGE_TYPING = 1 << 14
MESSAGE_CONTENT = 1 << 15

KNOWN_INTENTS = sum(1 << bit for bit in (*range(17), 20, 21, 24, 25))
"""Every intent bit Discord defines; any other bit in an IDENTIFY is closed with 4013."""

# Application flags (``application.flags`` in READY and on /applications/@me) saying
# which privileged intents are enabled in the portal, in their "limited" form (bots in fewer
# than 100 servers).
GATEWAY_PRESENCE_LIMITED = 1 << 13
GATEWAY_GUILD_MEMBERS_LIMITED = 1 << 15
GATEWAY_MESSAGE_CONTENT_LIMITED = 1 << 19

_EVENT_INTENTS = {
    "MESSAGE_CREATE": GUILD_MESSAGES,
    "MESSAGE_UPDATE": GUILD_MESSAGES,
    "MESSAGE_DELETE": GUILD_MESSAGES,
    "MESSAGE_DELETE_BULK": GUILD_MESSAGES,
    "MESSAGE_REACTION_ADD": GUILD_MESSAGE_REACTIONS,
    "MESSAGE_REACTION_REMOVE": GUILD_MESSAGE_REACTIONS,
    "MESSAGE_REACTION_REMOVE_ALL": GUILD_MESSAGE_REACTIONS,
    "MESSAGE_REACTION_REMOVE_EMOJI": GUILD_MESSAGE_REACTIONS,
    "TYPING_START": GUILD_MESSAGE_TYPING,
    "GUILD_CREATE": GUILDS,
    "GUILD_DELETE": GUILDS,
    "GUILD_ROLE_UPDATE": GUILDS,
    "GUILD_MEMBER_UPDATE": GUILD_MEMBERS,
    "CHANNEL_CREATE": GUILDS,
    "CHANNEL_UPDATE": GUILDS,
    "CHANNEL_DELETE": GUILDS,
    "THREAD_CREATE": GUILDS,
    "THREAD_UPDATE": GUILDS,
    "THREAD_DELETE": GUILDS,
    "THREAD_LIST_SYNC": GUILDS,
    "THREAD_MEMBER_UPDATE": GUILDS,
}

_DIRECT_INTENTS = {
    GUILD_MESSAGES: DIRECT_MESSAGES,
    GUILD_MESSAGE_REACTIONS: DIRECT_MESSAGE_REACTIONS,
    GUILD_MESSAGE_TYPING: DIRECT_MESSAGE_TYPING,
}

_CONTENT_EVENTS = frozenset({"MESSAGE_CREATE", "MESSAGE_UPDATE"})


def is_direct(event_type: str, data: dict[str, Any]) -> bool:
    """Whether a dispatch is about a direct message (a message, reaction or typing event
    without a guild)."""
    gated = _EVENT_INTENTS.get(event_type, 0)
    return gated in _DIRECT_INTENTS and not data.get("guild_id")


def required_intent(event_type: str, *, direct: bool = False) -> int:
    """The intent bit a dispatch needs (0: every session receives it); ``direct``: the event is
    about a direct message."""
    needed = _EVENT_INTENTS.get(event_type, 0)
    return _DIRECT_INTENTS.get(needed, needed) if direct else needed


def carries_content(event_type: str) -> bool:
    """Whether MESSAGE_CONTENT decides the fields of this dispatch."""
    return event_type in _CONTENT_EVENTS


def application_flags(message_content_enabled: bool) -> int:
    """The application's flags: presence and members intents on, message content as set."""
    flags = GATEWAY_PRESENCE_LIMITED | GATEWAY_GUILD_MEMBERS_LIMITED
    if message_content_enabled:
        flags |= GATEWAY_MESSAGE_CONTENT_LIMITED
    return flags


def withhold_content(message: dict[str, Any], bot_id: str) -> dict[str, Any]:
    """``message`` (Discord's JSON) as an app without MESSAGE_CONTENT sees it (a copy)."""
    author = message.get("author") or {}
    mentioned = any(user.get("id") == bot_id for user in message.get("mentions") or [])
    if author.get("id") == bot_id or mentioned:
        return message
    withheld = dict(message, content="", embeds=[], attachments=[], components=[])
    withheld.pop("poll", None)
    snapshots = message.get("message_snapshots")
    if isinstance(snapshots, list):  # a forward's copy is withheld like the message
        withheld["message_snapshots"] = [
            {"message": dict(s["message"], content="", embeds=[], attachments=[], components=[])}
            for s in snapshots
            if isinstance(s, dict) and isinstance(s.get("message"), dict)
        ]
    referenced = message.get("referenced_message")
    if isinstance(referenced, dict):
        withheld["referenced_message"] = withhold_content(referenced, bot_id)
    return withheld
