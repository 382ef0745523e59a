"""Who a chat channel answers (pure: no side effects).

=================================  ==========================================================
a message in a chat channel        becomes
=================================  ==========================================================
a bot's (ours too), a webhook's    nothing
not a plain message or a reply     nothing (joins, pins, thread notices)
an owner's ``!command``            the command (the same dispatcher as everywhere)
an owner's                         a turn, as the owner's (every tool, approvals as set)
someone else's, ``--who everyone``  a restricted turn (:mod:`discord_mcp.runs.restricted`)
someone else's, ``--who ROLES``    a restricted turn when they hold one of the roles (asked
                                   of Discord; a failed look-up is a no)
anyone else's                      nothing (it is still part of the history the agent reads)
without text or files              nothing
=================================  ==========================================================

Threads of a chat channel and direct messages are not chat: they keep their own routing.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any, Literal

from discord_mcp.transport.wire import text_of
from discord_mcp.watch.chat.channels import ChatChannel

Speaker = Literal["ignore", "owner", "stranger", "ask_roles"]
SAYING_TYPES = (0, 19)


def speaker(message: Mapping[str, Any], chat: ChatChannel, *, owners: Set[str]) -> Speaker:
    """Whether ``message`` starts a turn, and as whose: ``owner``, ``stranger`` (restricted),
    ``ask_roles`` (a stranger who may hold one of the chat's roles), or ``ignore``."""
    author = message.get("author") or {}
    if author.get("bot") or message.get("webhook_id"):
        return "ignore"
    if message.get("type", 0) not in SAYING_TYPES:
        return "ignore"
    if not (text_of(dict(message)).strip() or message.get("attachments")):
        return "ignore"
    author_id = str(author.get("id") or "")
    if not author_id:
        return "ignore"
    if author_id in owners:
        return "owner"
    if chat.who == "everyone":
        return "stranger"
    if isinstance(chat.who, tuple) and chat.who:
        return "ask_roles"
    return "ignore"


def holds_role(member: Mapping[str, Any] | None, roles: tuple[str, ...]) -> bool:
    """Whether a guild member object holds one of ``roles`` (None: unknown, so no)."""
    if not member:
        return False
    held = {str(role) for role in member.get("roles") or []}
    return bool(held & set(roles))
