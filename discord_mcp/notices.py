"""One-way messages to the owner: notifications (status cards are :mod:`discord_mcp.progress`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from discord_mcp.config import Settings
from discord_mcp.errors import DecisionError
from discord_mcp.transport.rest import RestClient, Upload

Level = Literal["info", "warning", "success", "error"]

LEVEL_ICONS: dict[str, str] = {
    "info": "\u2139\ufe0f",
    "warning": "\u26a0\ufe0f",
    "success": "\u2705",
    "error": "\u274c",
}


def mention_prefix(settings: Settings, mention: bool) -> tuple[str, dict[str, Any]]:
    if not mention:
        return "", {"parse": []}
    owners = sorted(settings.owner_ids)
    return " ".join(f"<@{uid}>" for uid in owners) + " ", {"users": owners}


async def notify(
    rest: RestClient,
    settings: Settings,
    message: str,
    *,
    level: Level = "info",
    thread_id: str | None = None,
    mention: bool = False,
    files: Sequence[Upload] = (),
) -> dict[str, Any]:
    """Post a notification (split over several messages if long, ``files`` on the last);
    returns where it went."""
    if level not in LEVEL_ICONS:
        raise DecisionError(f"level must be one of {', '.join(LEVEL_ICONS)}, not {level!r}")
    text = message.strip()
    if not text:
        raise DecisionError("message is empty: say what the owner should know")
    prefix, allowed = mention_prefix(settings, mention)
    target = thread_id or settings.thread_id or settings.channel_id
    sent = await rest.send_text(
        target, f"{LEVEL_ICONS[level]} {prefix}{text}", allowed_mentions=allowed, files=files
    )
    return {
        "ok": True,
        "channel_id": target,
        "message_ids": [m["id"] for m in sent],
        "parts": len(sent),
    }
