"""``/status`` and ``/session list|open|close|reopen|rename``: the run threads."""

from __future__ import annotations

import contextlib
from typing import Any

from discord_mcp.errors import DiscordError, RunError
from discord_mcp.state.files import off_loop
from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.control.machines import machines_lines, roster_of
from discord_mcp.watch.control.words import ago, clip, cmd, fit, session_status

LIST_MAX = 20
NO_PINGS: dict[str, Any] = {"parse": []}


async def status(c: Controls, r: Request) -> Reply:
    """In a run thread (or with ``session``): that session; elsewhere: everything."""
    if r.get("session") or c.engine.session(r.channel_id) is not None:
        return Reply(session_status(c.session_of(r), r, c.wall()))
    sessions = c.engine.sessions()
    running = [s for s in sessions if s.running_job_id]
    queued = sum(s.pending for s in sessions)
    pending = [d for d in await off_loop(c.decisions.open_decisions) if d.status == "pending"]
    lines = [
        f"**discord-watch** on `{c.settings.machine}`: {len(sessions)} sessions, "
        f"{len(running)} running, {queued} queued jobs, {len(pending)} open decisions"
    ]
    for session in running[:10]:
        lines.append(
            f"• <#{session.thread_id}> {session.project_name} `{session.tool}` running "
            f"`{session.running_job_id}`"
        )
    return Reply(fit(lines + machines_lines(roster_of(c))))


async def list_(c: Controls, r: Request) -> Reply:
    project = r.get("project")
    if project:
        project = c.projects.get(project).name
    sessions = c.engine.sessions(project)
    if not sessions:
        return Reply("No sessions yet: open one with " + cmd(r, "start <project> <prompt>") + ".")
    now = c.wall()
    lines = [f"**Sessions** ({len(sessions)}, most recent first)"]
    for s in sessions[:LIST_MAX]:
        state = "closed" if s.closed else s.state
        lines.append(
            f"• <#{s.thread_id}> **{s.project_name}** `{s.tool}` {state} · "
            f"active {ago(s.last_activity_at, now)} · `{s.thread_id}`"
        )
    if len(sessions) > LIST_MAX:
        lines.append(f"… and {len(sessions) - LIST_MAX} older")
    return Reply(fit(lines))


async def close(c: Controls, r: Request) -> Reply:
    session = await c.engine.close_session(c.session_of(r).thread_id)
    text = (
        f"Session closed: it takes no new jobs. Reopen it with "
        f"{cmd(r, f'session reopen {session.thread_id}')}."
    )
    with contextlib.suppress(DiscordError):
        await c.rest.send_text(session.thread_id, text, allowed_mentions=NO_PINGS)
    with contextlib.suppress(DiscordError):
        await c.rest.archive_thread(session.thread_id)
    return Reply(f"Closed <#{session.thread_id}>.", quiet_in_text=True)


async def reopen(c: Controls, r: Request) -> Reply:
    session = await c.engine.reopen_session(r.get("session") or "")
    with contextlib.suppress(DiscordError):
        await c.rest.unarchive_thread(session.thread_id)
    with contextlib.suppress(DiscordError):
        await c.rest.send_text(
            session.thread_id,
            "Session reopened: write here to give it work.",
            allowed_mentions=NO_PINGS,
        )
    return Reply(f"Reopened <#{session.thread_id}>: {c.link(session.thread_id)}")


async def open_(c: Controls, r: Request) -> Reply:
    """``/session open <session>`` (seed 000 §11.6): the session's own thread, unarchived, to
    go on there (a closed session takes jobs again). No session moves to another thread.

    Raises:
        RunError: E_SESSION_NOT_FOUND; E_THREAD_ACCESS_FAILED when the thread cannot be
            opened (deleted, or the bot may not see it): the session is left as it was.
    """
    wanted = (r.get("session") or "").strip()
    session = c.engine.session(wanted) if wanted else None
    if session is None:
        raise RunError(
            "E_SESSION_NOT_FOUND",
            f"no session has the thread id {wanted or '(none given)'}: pick one from "
            f"{cmd(r, 'session list')}",
        )
    try:
        await c.rest.unarchive_thread(session.thread_id)
    except DiscordError as exc:
        raise RunError(
            "E_THREAD_ACCESS_FAILED",
            f"the thread of session {session.thread_id} cannot be opened ({exc}): it may have "
            "been deleted, or the bot may no longer see it",
        ) from exc
    if session.closed:
        session = await c.engine.reopen_session(session.thread_id)
    with contextlib.suppress(DiscordError):
        await c.rest.send_text(
            session.thread_id,
            "Session opened: write here to go on; the agent resumes its conversation.",
            allowed_mentions=NO_PINGS,
        )
    return Reply(f"Opened <#{session.thread_id}>: {c.link(session.thread_id)}")


async def rename(c: Controls, r: Request) -> Reply:
    session = c.session_of(r)
    name = clip(r.get("name") or "", 100)
    await c.rest.modify_channel(session.thread_id, name=name)
    return Reply(f"Renamed <#{session.thread_id}> to **{name}**.")
