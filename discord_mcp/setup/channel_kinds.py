"""Which kinds of Discord channel discord-mcp can work in, and what to say about the others.

A text channel (0) or an announcement channel (5: its threads are announcement threads) works.
A forum (15) or media (16) channel holds only posts, while discord-mcp writes in the channel
itself (notifications, status cards, replies to ``!`` commands) and reads the owner's notes
there: ``doctor`` fails it and ``setup`` asks for another, with the same sentence.
"""

from __future__ import annotations

from typing import Any

from discord_mcp.setup.checks import Check

USABLE = {0: "text", 5: "announcement"}
POSTS_ONLY = {15: "forum", 16: "media"}
CATEGORY = 4


def posts_only_reason(kind: str) -> str:
    """Why a forum or media channel cannot be the channel."""
    return (
        f"a {kind} channel holds only posts, while discord-mcp writes in the channel itself "
        "(notifications, status cards, replies to your ! commands) and reads your notes there"
    )


def channel_problem(channel: dict[str, Any]) -> Check | None:
    """``doctor``'s failing line for a channel of a kind we cannot use, or None."""
    kind = int(channel.get("type", -1))
    name = f"#{channel.get('name')}"
    if kind in POSTS_ONLY:
        return Check(
            "FAIL",
            "channel",
            f"{name} is a {POSTS_ONLY[kind]} channel",
            f"Use a text channel (or an announcement channel) instead: "
            f"{posts_only_reason(POSTS_ONLY[kind])}. Create one (e.g. #agents), set "
            "DISCORD_CHANNEL_ID to its id, and give the bot its permissions there",
        )
    if kind not in USABLE:
        return Check(
            "FAIL",
            "channel",
            f"{name} is not a text channel (type {channel.get('type')})",
            "Use a text channel: questions open threads in it",
        )
    return None


def chat_kind_problem(channel: dict[str, Any]) -> str | None:
    """Why ``channel`` cannot be a chat channel (where an agent reads and answers), or None:
    the same kinds as the bot's own channel (``setup``, ``doctor``)."""
    kind = int(channel.get("type", -1))
    name = f"#{channel.get('name')}" if channel.get("name") else str(channel.get("id"))
    if kind in USABLE:
        return None
    if kind in POSTS_ONLY:
        return (
            f"{name} is a {POSTS_ONLY[kind]} channel, which holds only posts: an agent cannot "
            "answer in it. Use a text channel"
        )
    if kind == CATEGORY:
        return f"{name} is a category, which only groups channels: use a text channel in it"
    return f"{name} is not a text channel (type {channel.get('type')}): use a text channel"
