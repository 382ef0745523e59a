"""The bot's effective permissions in a channel, computed as Discord documents it.

(https://discord.com/developers/docs/topics/permissions#permission-overwrites)

1. Base: the ``@everyone`` role (its id is the guild's id) OR every role of the member. The
   guild's owner, or ADMINISTRATOR in the base, has everything.
2. Overwrites of the channel (for a thread: of its parent), in order: ``@everyone``'s deny then
   allow; the member's roles' denies together, then their allows together; the member's own
   deny then allow.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

ADMINISTRATOR = 1 << 3
ALL = (1 << 53) - 1

NEEDED: dict[str, int] = {
    "View Channel": 1 << 10,
    "Send Messages": 1 << 11,
    "Read Message History": 1 << 16,
    "Create Public Threads": 1 << 35,
    "Send Messages in Threads": 1 << 38,
    "Manage Threads": 1 << 34,
    "Add Reactions": 1 << 6,
    "Embed Links": 1 << 14,
    "Attach Files": 1 << 15,
}
"""What discord-mcp does in its channel, and the permission each needs."""
INVITE_PERMISSIONS = sum(NEEDED.values())


def invite_url(application_id: str) -> str:
    """The OAuth2 URL that adds the bot to a server with exactly the permissions it needs."""
    return (
        "https://discord.com/oauth2/authorize"
        f"?client_id={application_id}&permissions={INVITE_PERMISSIONS}"
        "&scope=bot%20applications.commands"
    )


def _bits(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def effective_permissions(
    *,
    guild_id: str,
    guild_owner_id: str | None,
    roles: Iterable[Mapping[str, Any]],
    member_id: str,
    member_role_ids: Sequence[str],
    overwrites: Iterable[Mapping[str, Any]],
) -> int:
    """The permission bits the member has in the channel with these overwrites."""
    if guild_owner_id == member_id:
        return ALL
    by_id = {str(role.get("id")): _bits(role.get("permissions")) for role in roles}
    base = by_id.get(guild_id, 0)
    for role_id in member_role_ids:
        base |= by_id.get(str(role_id), 0)
    if base & ADMINISTRATOR:
        return ALL
    listed = {str(o.get("id")): o for o in overwrites}
    permissions = base
    everyone = listed.get(guild_id)
    if everyone is not None:
        permissions &= ~_bits(everyone.get("deny"))
        permissions |= _bits(everyone.get("allow"))
    deny = allow = 0
    for role_id in member_role_ids:
        overwrite = listed.get(str(role_id))
        if overwrite is not None:
            deny |= _bits(overwrite.get("deny"))
            allow |= _bits(overwrite.get("allow"))
    permissions = (permissions & ~deny) | allow
    own = listed.get(member_id)
    if own is not None:
        permissions &= ~_bits(own.get("deny"))
        permissions |= _bits(own.get("allow"))
    return permissions


def missing(permissions: int) -> list[str]:
    """The needed permissions the bits lack, by name."""
    return [name for name, bit in NEEDED.items() if not permissions & bit]
