"""One-way messages to the owner: notifications, and a status card per task.

A status card is edited in place while its status stays the same (edits notify nobody), and
posted anew when the status changes (``running`` -> ``needs_input``, ``done``, ...), because a
new message is what makes a phone buzz. Cards live in ``progress/<project>/<task>.json`` so
every process of the project edits the same card.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from discord_mcp.config import Settings
from discord_mcp.errors import DecisionError, StateCorrupt
from discord_mcp.state.files import locked, read_json, write_json
from discord_mcp.transport.chunking import split_message
from discord_mcp.transport.rest import RestClient

Level = Literal["info", "warning", "success", "error"]
TaskStatus = Literal["running", "blocked", "needs_input", "done", "failed"]

LEVEL_ICONS: dict[str, str] = {
    "info": "\u2139\ufe0f",
    "warning": "\u26a0\ufe0f",
    "success": "\u2705",
    "error": "\u274c",
}
STATUS_ICONS: dict[str, str] = {
    "running": "\U0001f504",
    "blocked": "\u26d4",
    "needs_input": "\u2753",
    "done": "\u2705",
    "failed": "\u274c",
}
PROGRESS_FORMAT_VERSION = 1
_TASK_ID = re.compile(r"[^a-z0-9._-]+")


def _mention_prefix(settings: Settings, mention: bool) -> tuple[str, dict[str, Any]]:
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
) -> dict[str, Any]:
    """Post a notification (split over several messages if long); returns where it went."""
    if level not in LEVEL_ICONS:
        raise DecisionError(f"level must be one of {', '.join(LEVEL_ICONS)}, not {level!r}")
    text = message.strip()
    if not text:
        raise DecisionError("message is empty: say what the owner should know")
    prefix, allowed = _mention_prefix(settings, mention)
    target = thread_id or settings.thread_id or settings.channel_id
    sent = await rest.send_text(
        target, f"{LEVEL_ICONS[level]} {prefix}{text}", allowed_mentions=allowed
    )
    return {
        "ok": True,
        "channel_id": target,
        "message_ids": [m["id"] for m in sent],
        "parts": len(sent),
    }


@dataclass(frozen=True, slots=True)
class ProgressUpdate:
    """One ``report_progress`` call."""

    title: str
    summary: str
    details: tuple[str, ...] = ()
    status: TaskStatus = "running"
    task_id: str | None = None
    mention: bool = False


def task_key(update: ProgressUpdate) -> str:
    """The card's key: the given task id, or the title, as a safe file name."""
    raw = (update.task_id or update.title).strip().lower()
    key = _TASK_ID.sub("-", raw).strip("-.")[:80]
    return key or "task"


def render_progress(update: ProgressUpdate, key: str) -> str:
    """The status card's text (at most 2000 characters)."""
    lines = [
        f"{STATUS_ICONS[update.status]} **{update.title.strip()[:200]}** · "
        f"{update.status.replace('_', ' ')}",
        update.summary.strip()[:1000],
    ]
    budget = 1900 - sum(len(line) + 1 for line in lines)
    for detail in update.details:
        line = f"• {detail.strip()[:300]}"
        if len(line) + 1 > budget:
            lines.append("• …")
            break
        lines.append(line)
        budget -= len(line) + 1
    stamp = datetime.now(UTC).strftime("%H:%M:%S UTC")
    lines.append(f"-# task `{key}` · updated {stamp}")
    return split_message("\n".join(lines))[0]


async def report_progress(
    rest: RestClient, settings: Settings, update: ProgressUpdate
) -> dict[str, Any]:
    """Create or update the task's status card; a new message only when the status changes."""
    if update.status not in STATUS_ICONS:
        raise DecisionError(
            f"status must be one of {', '.join(STATUS_ICONS)}, not {update.status!r}"
        )
    if not update.title.strip():
        raise DecisionError("title is empty: name the task")
    key = task_key(update)
    path = settings.home / "progress" / _safe(settings.project_name) / f"{key}.json"
    content = render_progress(update, key)
    prefix, allowed = _mention_prefix(settings, update.mention)
    # The lock is held across the Discord call so two processes reporting the same task cannot
    # both post a new card; the call is bounded by the REST client's timeouts.
    with locked(path):
        try:
            previous = read_json(path, max_version=PROGRESS_FORMAT_VERSION)
        except StateCorrupt:
            previous = None
        same_status = previous is not None and previous.get("status") == update.status
        if same_status and previous is not None:
            await rest.edit_message(
                previous["channel_id"],
                previous["message_id"],
                content=content,
                allowed_mentions={"parse": []},
            )
            channel_id, message_id = str(previous["channel_id"]), str(previous["message_id"])
            created = False
        else:
            channel_id = settings.thread_id or settings.channel_id
            message = await rest.create_message(
                channel_id, split_message(prefix + content)[0], allowed_mentions=allowed
            )
            message_id, created = message["id"], True
        write_json(
            path,
            {
                "version": PROGRESS_FORMAT_VERSION,
                "task_id": key,
                "title": update.title,
                "status": update.status,
                "channel_id": channel_id,
                "message_id": message_id,
            },
        )
    return {
        "ok": True,
        "task_id": key,
        "status": update.status,
        "message_id": message_id,
        "new_message": created,
    }


def _safe(name: str) -> str:
    return _TASK_ID.sub("-", name.lower()).strip("-.") or "project"
