"""Whether a chat turn's agent said something: the mark its discord server leaves.

discord-watch runs each turn of a chat channel with ``DISCORD_MCP_CHAT_MARK`` naming a file
(``<state>/chat/said/<channel id>.json``); whenever the turn's agent posts a message or adds a
reaction, its server records the time there. When the turn ends, the daemon posts the agent's
final text only if nothing was recorded since the turn began, so an agent that answered with
``send_message`` (or only reacted) is not repeated, and one that used no tool is still heard.

The file holds no words of the conversation, only when and what kind::

    {"version": 1, "at": 1767225600.25, "what": "message" | "reaction"}
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from discord_mcp.errors import StateError
from discord_mcp.state.files import ensure_dir, read_json, write_json

log = logging.getLogger(__name__)

VERSION = 1
MARK_VARIABLE = "DISCORD_MCP_CHAT_MARK"


def mark_path(home: Path, channel_id: str) -> Path:
    """Where the mark of ``channel_id``'s turns is kept."""
    return home / "chat" / "said" / f"{channel_id}.json"


def record(path: Path | None, what: str, *, now: float | None = None) -> None:
    """Record that the agent said something (``what``: ``message`` or ``reaction``); a failure
    is logged, never the tool's: the message is already out."""
    if path is None:
        return
    try:
        ensure_dir(path.parent)
        write_json(
            path,
            {"version": VERSION, "at": time.time() if now is None else now, "what": what},
            durable=False,
        )
    except StateError as exc:
        log.warning("could not record that the agent spoke (%s): %s", path, exc)


def said_since(path: Path, since: float) -> bool:
    """Whether the agent posted or reacted at ``since`` or later. An unreadable mark counts as
    said: repeating an answer is worse than a turn that stays quiet."""
    try:
        document = read_json(path, max_version=VERSION)
    except StateError as exc:
        log.warning("the chat mark %s cannot be read (%s): taken as said", path, exc)
        return True
    if document is None:
        return False
    at = document.get("at")
    return not isinstance(at, int | float) or float(at) >= since
