"""``discord-watch status``: open decisions, running and queued jobs, as plain text.

Read-only: it reads the decision files and the run journal (snapshot plus later events), so it
works whether the daemon runs or not. The daemon shows the same, redrawn, when its stdout is a
terminal (a tmux pane).
"""

from __future__ import annotations

import time
from pathlib import Path

from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DiscordMCPError
from discord_mcp.inbox import Inbox
from discord_mcp.relay.holder import read_status
from discord_mcp.runs.journal import journal
from discord_mcp.team.presence import read_snapshot
from discord_mcp.team.roster import AWAY_AFTER_S
from discord_mcp.transport.gateway import CONTENT_TOGGLE


def render_status(home: Path, *, now: float | None = None) -> str:
    """The whole status as text."""
    now = time.time() if now is None else now
    lines = [f"discord-watch · state {home}"]
    lines.extend(_machines(home, now))
    gateway = read_status(home / "gateway" / "status.json")
    if gateway is None:
        lines.append("gateway: nobody has held it yet (polling)")
    elif gateway.connected(now):
        lines.append(f"gateway: live, held by {gateway.program} (pid {gateway.pid})")
        if not gateway.message_content:
            lines.append(
                "  without the Message Content intent: buttons and slash commands work, the "
                f"text of replies cannot be read. To read it: {CONTENT_TOGGLE}"
            )
    elif gateway.disabled(now):
        lines.append(f"gateway: disabled ({gateway.reason}); polling")
    else:
        lines.append(f"gateway: not connected (last: {gateway.state}); polling")

    pending = [d for d in DecisionStore(home).open_decisions() if d.status == "pending"]
    lines.append(f"\nopen decisions: {len(pending)}")
    for decision in pending[:20]:
        options = f" [{' / '.join(decision.options)}]" if decision.options else ""
        lines.append(
            f"  {decision.id}  {decision.project}/{decision.session}: "
            f"{decision.question[:70]}{options[:60]}"
        )

    try:
        state = journal.load(home / "runs").state
    except DiscordMCPError as exc:
        lines.append(f"\nruns: unreadable ({exc})")
        state = None
    if state is not None:
        running = [s for s in state.sessions.values() if s.running_job_id]
        queued = sum(len(s.queue) for s in state.sessions.values())
        lines.append(
            f"\nruns: {len(state.sessions)} sessions, {len(running)} running, {queued} queued"
        )
        for session in sorted(state.sessions.values(), key=lambda s: s.last_activity_at)[-20:]:
            job = state.jobs.get(session.running_job_id or "")
            doing = f"running {job.job_id}: {job.prompt[:50]!r}" if job else "idle"
            waiting = f", {len(session.queue)} queued" if session.queue else ""
            lines.append(
                f"  thread {session.thread_id}  {session.project_name} ({session.tool}): "
                f"{doing}{waiting}"
            )
    lines.append(f"\ninbox: {Inbox(home).unread_count()} unread")
    return "\n".join(lines)


def _machines(home: Path, now: float) -> list[str]:
    """This machine's name and the others sharing the bot, as the daemon last saw them."""
    snapshot = read_snapshot(home)
    if not snapshot or not isinstance(snapshot.get("machines"), list):
        return []
    others = []
    for machine in snapshot["machines"]:
        if not isinstance(machine, dict) or machine.get("this"):
            continue
        seen = machine.get("seen_at")
        age = now - seen if isinstance(seen, int | float) else None
        state = "live" if age is not None and age < AWAY_AFTER_S else "away"
        others.append(f"{machine.get('name')} ({state})")
    line = f"machine: {snapshot.get('machine')}"
    if others:
        line += f"; sharing the bot with {', '.join(others)}"
    if snapshot.get("conflict"):
        line += f" — {snapshot['conflict']}"
    return [line]
