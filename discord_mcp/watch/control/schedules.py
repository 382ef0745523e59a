"""``/schedule add|list|remove``: prompts that run on a schedule (seed 004's heartbeat), in a
project (a run thread of their own) or in a run thread; run by :mod:`..heartbeat`."""

from __future__ import annotations

import datetime as dt

from discord_mcp.errors import RunError
from discord_mcp.runs.schedules import Schedule
from discord_mcp.state.files import off_loop
from discord_mcp.watch.commands import split_word
from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.control.words import ago, clip, cmd, fit, utc


async def add(c: Controls, r: Request) -> Reply:
    when, prompt = r.get("when") or "", r.get("prompt") or ""
    if when.lower() in ("every", "daily") and prompt:  # "!schedule add every 30m <prompt>"
        word, prompt = split_word(prompt)
        when = f"{when} {word}"
    project, thread = r.get("project"), r.get("session")
    if project and thread:
        raise RunError("E_BAD_ARGUMENTS", "give a project or a session, not both")
    if project:
        project = c.projects.get(project).name
    elif thread or c.engine.session(r.channel_id) is not None:
        thread = c.session_of(r).thread_id
    else:
        raise RunError(
            "E_BAD_ARGUMENTS",
            "say where it runs: a project (it gets a thread of its own) or a session; or use "
            "the command in a run thread",
        )
    schedule = await off_loop(
        c.schedules.add, when, prompt, project=project, thread_id=thread, now=c.wall()
    )
    c.schedules_changed()
    return Reply(
        f"Scheduled `{schedule.id}` ({schedule.when}) in {_target(schedule)}: first run "
        f"{_next(schedule, c.wall())}. Remove it with {cmd(r, f'schedule remove {schedule.id}')}."
    )


async def list_(c: Controls, r: Request) -> Reply:
    schedules = await off_loop(c.schedules.list)
    if not schedules:
        return Reply("No scheduled prompts: add one with " + cmd(r, "schedule add") + ".")
    now = c.wall()
    lines = [f"**Scheduled prompts** ({len(schedules)})"]
    for s in schedules:
        lines.append(
            f"• `{s.id}` {s.when} in {_target(s)} · next {_next(s, now)} · ran {s.runs}× · "
            f"{clip(s.prompt, 80)}"
        )
    return Reply(fit(lines))


async def remove(c: Controls, r: Request) -> Reply:
    removed = await off_loop(c.schedules.remove, r.get("schedule") or "")
    c.schedules_changed()
    return Reply(f"Removed `{removed.id}` ({removed.when}: {clip(removed.prompt, 80)}).")


def _target(s: Schedule) -> str:
    if s.thread_id:
        return f"<#{s.thread_id}>"
    return f"a new thread of **{s.project}**"


def _next(s: Schedule, now: float) -> str:
    moment = dt.datetime.fromtimestamp(s.next_time, tz=dt.UTC)
    return f"{utc(moment)} ({ago(moment, now)})"
