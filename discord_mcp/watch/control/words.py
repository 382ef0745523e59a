"""Small formatting helpers the command handlers share (how things read on a phone)."""

from __future__ import annotations

import datetime as dt

from discord_mcp.runs import SessionView
from discord_mcp.watch.control.base import Request

LIMIT = 2000


def cmd(request: Request, text: str) -> str:
    """A command as the owner would type it in the way they used (``/retry`` or ``!retry``)."""
    return f"`{'/' if request.via == 'slash' else '!'}{text}`"


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def ago(moment: dt.datetime | None, now: float) -> str:
    """``3h ago``, ``in 12m``, ``just now``."""
    if moment is None:
        return "never"
    seconds = now - moment.timestamp()
    span = abs(seconds)
    if span < 45:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if span >= size:
            amount = f"{int(span // size)}{unit}"
            return f"{amount} ago" if seconds > 0 else f"in {amount}"
    return "just now"


def utc(moment: dt.datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment else "n/a"


def fit(lines: list[str], limit: int = LIMIT) -> str:
    """Join lines, dropping the last ones (with a note) so the text fits one message."""
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    kept: list[str] = []
    for line in lines:
        if len("\n".join([*kept, line])) > limit - 40:
            break
        kept.append(line)
    return "\n".join([*kept, f"… and {len(lines) - len(kept)} more lines"])


def session_status(session: SessionView, request: Request, now: float) -> str:
    """A run thread's status (the fields of seed 000 §5.2, and the owner's controls)."""
    last = session.last_job
    if last is None:
        last_line = "none yet"
    else:
        took = f", {last.duration:.0f}s" if last.duration is not None else ""
        finished = f", {last.finished_at:%Y-%m-%d %H:%M} UTC" if last.finished_at else ""
        last_line = f"{last.state}{took}{finished}"
    retry = cmd(request, f"retry {session.retry_job_id}") if session.retry_job_id else "n/a"
    lines = [
        "**Session status**",
        f"project: {session.project_name}",
        f"tool: {session.tool}",
        f"model: {session.model or 'the CLI default'}",
        f"session_key: {session.session_key or 'none yet'}",
        f"state: {'closed' if session.closed else session.state}",
        f"queue: pending={session.pending}, running={session.running_job_id or 'none'}",
        f"last_job: {last_line}",
        f"resume_ready: {'yes' if session.resume_ready else 'no'}",
        f"retry_hint: {retry}",
    ]
    if session.held_until is not None and session.held_until.timestamp() > now:
        lines.append(f"next job waits until: {utc(session.held_until)}")
    return "\n".join(lines)
