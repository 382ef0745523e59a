"""Forwarded messages: a message whose reference has type 1 carries a copy of another.

Discord's forward has no content, embeds, components or files of its own; its
``message_reference`` (type 1) names the original, which may be in any channel, and
``message_snapshots[0].message`` holds a copy of what the original showed when it was
forwarded (type, content, mentions, attachments, embeds, timestamps, flags, components).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from discord_mcp.emulator import errors
from discord_mcp.emulator.message_body import FORWARD, MessageFields
from discord_mcp.emulator.store import is_hidden

if TYPE_CHECKING:
    from discord_mcp.emulator.store import Store

SNAPSHOT_KEYS = (
    "type",
    "content",
    "mentions",
    "mention_roles",
    "attachments",
    "embeds",
    "timestamp",
    "edited_timestamp",
    "flags",
    "components",
)
"""What a forward's ``message_snapshots[].message`` keeps of the forwarded message."""


def forward_of(
    store: Store, fields: MessageFields, files: list[Any]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A forward's reference and snapshot (it carries nothing of its own), or None when the
    message is not a forward."""
    if fields.reference_type != FORWARD or fields.reference_message_id is None:
        return None
    if fields.content or fields.embeds or fields.components or files:
        raise errors.invalid_form(
            ("message_reference",),
            "MESSAGE_FORWARD_WITH_CONTENT",
            "A forwarded message cannot have content of its own",
        )
    target = store.messages.get(fields.reference_message_id)
    if target is None or is_hidden(target):
        raise errors.invalid_form(
            ("message_reference",), "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message"
        )
    reference = {
        "type": FORWARD,
        "channel_id": target.channel_id,
        "message_id": target.id,
        "guild_id": store.guild.id,
    }
    original = store.message_json(target, nested=True)
    return reference, {key: original[key] for key in SNAPSHOT_KEYS if key in original}
