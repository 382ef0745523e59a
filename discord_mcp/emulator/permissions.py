"""Discord's permission bits and how a member's permissions in a channel are computed.

Theory
------
A permission set is an integer of bits, sent as a decimal string. A member's **base**
permissions in the guild are those of the ``@everyone`` role (whose id is the guild's id)
OR-ed with those of each of their roles; the guild's owner, and anyone whose base holds
ADMINISTRATOR, has every permission and is never limited by a channel. A channel then applies
its **overwrites** in a fixed order: ``@everyone``'s deny then allow; the denies of all the
member's roles together, then their allows together; the member's own deny then allow.
A thread has no overwrites of its own: it is computed with its parent's.

On top of that arithmetic Discord applies **implicit** rules, which the emulator enforces too:
without VIEW_CHANNEL a channel grants nothing at all; in a text channel, without SEND_MESSAGES
the permissions that only make sense when sending (MENTION_EVERYONE, SEND_TTS_MESSAGES,
ATTACH_FILES, EMBED_LINKS) are void. In threads SEND_MESSAGES means nothing and
SEND_MESSAGES_IN_THREADS is what sending needs; a private thread is visible only to its
members and to holders of MANAGE_THREADS.

(https://discord.com/developers/docs/topics/permissions, "Permission Overwrites", "Implicit
Permissions", "Inherited Permissions (Threads)"; ``threads.mdx`` "Permissions".)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

# The bits of Discord's permission table, by their documented names.
PERMISSION_BITS: dict[str, int] = {
    name: 1 << bit
    for name, bit in (
        ("CREATE_INSTANT_INVITE", 0),
        ("KICK_MEMBERS", 1),
        ("BAN_MEMBERS", 2),
        ("ADMINISTRATOR", 3),
        ("MANAGE_CHANNELS", 4),
        ("MANAGE_GUILD", 5),
        ("ADD_REACTIONS", 6),
        ("VIEW_AUDIT_LOG", 7),
        ("PRIORITY_SPEAKER", 8),
        ("STREAM", 9),
        ("VIEW_CHANNEL", 10),
        ("SEND_MESSAGES", 11),
        ("SEND_TTS_MESSAGES", 12),
        ("MANAGE_MESSAGES", 13),
        ("EMBED_LINKS", 14),
        ("ATTACH_FILES", 15),
        ("READ_MESSAGE_HISTORY", 16),
        ("MENTION_EVERYONE", 17),
        ("USE_EXTERNAL_EMOJIS", 18),
        ("VIEW_GUILD_INSIGHTS", 19),
        ("CONNECT", 20),
        ("SPEAK", 21),
        ("MUTE_MEMBERS", 22),
        ("DEAFEN_MEMBERS", 23),
        ("MOVE_MEMBERS", 24),
        ("USE_VAD", 25),
        ("CHANGE_NICKNAME", 26),
        ("MANAGE_NICKNAMES", 27),
        ("MANAGE_ROLES", 28),
        ("MANAGE_WEBHOOKS", 29),
        ("MANAGE_GUILD_EXPRESSIONS", 30),
        ("USE_APPLICATION_COMMANDS", 31),
        ("REQUEST_TO_SPEAK", 32),
        ("MANAGE_EVENTS", 33),
        ("MANAGE_THREADS", 34),
        ("CREATE_PUBLIC_THREADS", 35),
        ("CREATE_PRIVATE_THREADS", 36),
        ("USE_EXTERNAL_STICKERS", 37),
        ("SEND_MESSAGES_IN_THREADS", 38),
        ("USE_EMBEDDED_ACTIVITIES", 39),
        ("MODERATE_MEMBERS", 40),
        ("VIEW_CREATOR_MONETIZATION_ANALYTICS", 41),
        ("USE_SOUNDBOARD", 42),
        ("CREATE_GUILD_EXPRESSIONS", 43),
        ("CREATE_EVENTS", 44),
        ("USE_EXTERNAL_SOUNDS", 45),
        ("SEND_VOICE_MESSAGES", 46),
        ("SET_VOICE_CHANNEL_STATUS", 48),
        ("SEND_POLLS", 49),
        ("USE_EXTERNAL_APPS", 50),
        ("PIN_MESSAGES", 51),
        ("BYPASS_SLOWMODE", 52),
    )
}

ALL_PERMISSIONS = sum(PERMISSION_BITS.values())
"""Every defined bit: what the guild's owner and ADMINISTRATOR holders have."""

ADD_REACTIONS = PERMISSION_BITS["ADD_REACTIONS"]
ADMINISTRATOR = PERMISSION_BITS["ADMINISTRATOR"]
ATTACH_FILES = PERMISSION_BITS["ATTACH_FILES"]
CREATE_PRIVATE_THREADS = PERMISSION_BITS["CREATE_PRIVATE_THREADS"]
CREATE_PUBLIC_THREADS = PERMISSION_BITS["CREATE_PUBLIC_THREADS"]
EMBED_LINKS = PERMISSION_BITS["EMBED_LINKS"]
MANAGE_CHANNELS = PERMISSION_BITS["MANAGE_CHANNELS"]
MANAGE_MESSAGES = PERMISSION_BITS["MANAGE_MESSAGES"]
MANAGE_THREADS = PERMISSION_BITS["MANAGE_THREADS"]
MENTION_EVERYONE = PERMISSION_BITS["MENTION_EVERYONE"]
READ_MESSAGE_HISTORY = PERMISSION_BITS["READ_MESSAGE_HISTORY"]
SEND_MESSAGES = PERMISSION_BITS["SEND_MESSAGES"]
SEND_MESSAGES_IN_THREADS = PERMISSION_BITS["SEND_MESSAGES_IN_THREADS"]
SEND_TTS_MESSAGES = PERMISSION_BITS["SEND_TTS_MESSAGES"]
VIEW_CHANNEL = PERMISSION_BITS["VIEW_CHANNEL"]

BOT_ROLE_PERMISSIONS = (
    VIEW_CHANNEL
    | SEND_MESSAGES
    | READ_MESSAGE_HISTORY
    | CREATE_PUBLIC_THREADS
    | SEND_MESSAGES_IN_THREADS
    | MANAGE_THREADS
    | ADD_REACTIONS
    | EMBED_LINKS
    | ATTACH_FILES
)
"""The bot's role at startup: exactly what discord-mcp needs in its channel."""

DISCORD_DEFAULT_EVERYONE = sum(
    PERMISSION_BITS[name]
    for name in (
        "CREATE_INSTANT_INVITE",
        "ADD_REACTIONS",
        "STREAM",
        "VIEW_CHANNEL",
        "SEND_MESSAGES",
        "EMBED_LINKS",
        "ATTACH_FILES",
        "READ_MESSAGE_HISTORY",
        "MENTION_EVERYONE",
        "USE_EXTERNAL_EMOJIS",
        "CONNECT",
        "SPEAK",
        "USE_VAD",
        "CHANGE_NICKNAME",
        "USE_APPLICATION_COMMANDS",
        "REQUEST_TO_SPEAK",
        "CREATE_PUBLIC_THREADS",
        "CREATE_PRIVATE_THREADS",
        "USE_EXTERNAL_STICKERS",
        "SEND_MESSAGES_IN_THREADS",
        "USE_EMBEDDED_ACTIVITIES",
        "USE_SOUNDBOARD",
        "CREATE_GUILD_EXPRESSIONS",
        "CREATE_EVENTS",
        "USE_EXTERNAL_SOUNDS",
        "SEND_VOICE_MESSAGES",
        "SET_VOICE_CHANNEL_STATUS",
        "SEND_POLLS",
        "USE_EXTERNAL_APPS",
    )
)
"""What Discord gives ``@everyone`` in a new server (what the emulator gave every member
before it modelled roles, less a retired bit 47 the docs no longer list)."""

EVERYONE_PERMISSIONS = DISCORD_DEFAULT_EVERYONE & ~BOT_ROLE_PERMISSIONS
"""``@everyone`` at startup: Discord's default minus the bot role's permissions, so that the
bot role alone decides whether the bot can work (take a bit from it and the bot lacks it)."""

_NEEDS_SENDING = MENTION_EVERYONE | SEND_TTS_MESSAGES | ATTACH_FILES | EMBED_LINKS


@dataclass
class Overwrite:
    """One entry of a channel's ``permission_overwrites``: type 0 is a role, 1 a member."""

    id: str
    type: int
    allow: int = 0
    deny: int = 0

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "type": self.type, "allow": str(self.allow), "deny": str(self.deny)}


def base_permissions(
    *,
    guild_id: str,
    owner_id: str,
    role_permissions: Mapping[str, int],
    member_id: str,
    member_roles: Sequence[str],
) -> int:
    """The member's guild-wide permissions (every bit for the owner and administrators)."""
    if member_id == owner_id:
        return ALL_PERMISSIONS
    permissions = role_permissions.get(guild_id, 0)
    for role_id in member_roles:
        permissions |= role_permissions.get(role_id, 0)
    if permissions & ADMINISTRATOR:
        return ALL_PERMISSIONS
    return permissions


def apply_overwrites(
    base: int,
    *,
    guild_id: str,
    member_id: str,
    member_roles: Sequence[str],
    overwrites: Iterable[Overwrite],
) -> int:
    """``base`` after a channel's overwrites, in Discord's order (administrators are exempt)."""
    if base & ADMINISTRATOR:
        return ALL_PERMISSIONS
    by_id = {overwrite.id: overwrite for overwrite in overwrites}
    permissions = base
    everyone = by_id.get(guild_id)
    if everyone is not None:
        permissions = (permissions & ~everyone.deny) | everyone.allow
    allow = deny = 0
    for role_id in member_roles:
        overwrite = by_id.get(role_id)
        if overwrite is not None and overwrite.type == 0:
            allow |= overwrite.allow
            deny |= overwrite.deny
    permissions = (permissions & ~deny) | allow
    own = by_id.get(member_id)
    if own is not None and own.type == 1:
        permissions = (permissions & ~own.deny) | own.allow
    return permissions


def implicit(permissions: int, *, thread: bool) -> int:
    """What of ``permissions`` takes effect in a channel (or a thread) after Discord's implicit
    rules: nothing without VIEW_CHANNEL; in a channel, no sending extras without SEND_MESSAGES.
    """
    if permissions == ALL_PERMISSIONS:
        return permissions
    if not permissions & VIEW_CHANNEL:
        return 0
    if not thread and not permissions & SEND_MESSAGES:
        permissions &= ~_NEEDS_SENDING
    return permissions


def sending_permission(thread: bool) -> int:
    """The bit that sending a message needs: SEND_MESSAGES, or SEND_MESSAGES_IN_THREADS."""
    return SEND_MESSAGES_IN_THREADS if thread else SEND_MESSAGES


def names(permissions: int) -> list[str]:
    """The documented names of the bits set in ``permissions``."""
    return [name for name, bit in PERMISSION_BITS.items() if permissions & bit]
