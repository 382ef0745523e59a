"""What a message points at, as Discord works it out when the message is sent or edited: the
message it replies to (its ``message_reference``) and whom it mentions (``mentions``,
``mention_everyone``), within what ``allowed_mentions`` permits."""

from __future__ import annotations

import re
from typing import Any

from discord_mcp.emulator import errors
from discord_mcp.emulator.direct import DirectState
from discord_mcp.emulator.message_body import FORWARD, MessageFields
from discord_mcp.emulator.models import Channel, Message
from discord_mcp.emulator.permissions import MENTION_EVERYONE
from discord_mcp.emulator.store import is_hidden

USER_MENTION = re.compile(r"<@!?(\d+)>")


def reference_of(
    state: DirectState, channel: Channel, fields: MessageFields
) -> dict[str, Any] | None:
    """The ``message_reference`` of a reply in ``channel`` (None: not a reply, or a reply to a
    message that is gone and ``fail_if_not_exists`` is false); 50035 for a reply to a message
    that is not there."""
    if fields.reference_message_id is None or fields.reference_type == FORWARD:
        return None
    target = state.messages.get(fields.reference_message_id)
    if target is None or target.channel_id != channel.id or is_hidden(target):
        if not fields.fail_if_not_exists:
            return None
        raise errors.invalid_form(
            ("message_reference",), "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message"
        )
    return {
        "type": 0,
        "channel_id": channel.id,
        "message_id": target.id,
        "guild_id": state.guild.id,
    }


def apply_mentions(
    state: DirectState,
    message: Message,
    fields: MessageFields,
    *,
    reply_to: dict[str, Any] | None,
) -> None:
    """Set whom ``message`` mentions: the users its text names (as ``allowed_mentions``
    permits), the author of the message it replies to (unless ``replied_user`` is false), and
    everyone, if its author may mention everyone in the channel."""
    allowed = fields.allowed_mentions
    parse = set(allowed.get("parse") or []) if allowed is not None else None
    mentioned = [m for m in USER_MENTION.findall(message.content) if m in state.users]
    if parse is not None and "users" not in parse:
        permitted = {str(u) for u in (allowed or {}).get("users") or []}
        mentioned = [m for m in mentioned if m in permitted]
    if reply_to is not None:
        replied = allowed is None or bool(allowed.get("replied_user"))
        target = state.messages[reply_to["message_id"]]
        if replied and target.author_id not in mentioned:
            mentioned.append(target.author_id)
    message.mention_ids = list(dict.fromkeys(mentioned))
    everyone = "@everyone" in message.content or "@here" in message.content
    # Only an author with MENTION_EVERYONE in the channel can ping everyone.
    allowed_to = bool(
        state.permissions_for(message.author_id, state.channels[message.channel_id])
        & MENTION_EVERYONE
    )
    message.mention_everyone = everyone and allowed_to and (parse is None or "everyone" in parse)
