"""Well-formed Discord bodies, as the spec describes them, for tests of the spec check itself:
change a field (``message(flags=2**31)``) or drop one (``message(author=...)``)."""

from __future__ import annotations

from typing import Any

CHANNEL = "1191168914227200004"


def user(**changes: Any) -> dict[str, Any]:
    """A bot's user object; a change to ``...`` drops that field."""
    body = {
        "id": "1191168914227200001",
        "username": "bot",
        "avatar": None,
        "discriminator": "0",
        "public_flags": 0,
        "flags": 0,
        "global_name": None,
        "primary_guild": None,
    }
    return {k: v for k, v in (body | changes).items() if v is not ...}


def message(**changes: Any) -> dict[str, Any]:
    """A plain message in :data:`CHANNEL`; a change to ``...`` drops that field."""
    body: dict[str, Any] = {
        "id": "1574098413731971072",
        "channel_id": CHANNEL,
        "author": user(),
        "content": "hi",
        "timestamp": "2026-11-22T16:25:07.168000+00:00",
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "pinned": False,
        "type": 0,
        "flags": 0,
        "components": [],
    }
    return {k: v for k, v in (body | changes).items() if v is not ...}
