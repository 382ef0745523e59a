"""``/schedule add|list|remove``: prompts that run on a schedule (seed 004's heartbeat), in a
project (a run thread of their own), in a run thread, or as a chat channel's heartbeat (issue
25); run by :mod:`..heartbeat`. A schedule is an interval, a daily UTC time, or a cron
expression in a time zone; next runs are shown as Discord timestamps, which each reader's app
shows in their own time zone (and a cron schedule's in its zone too)."""

from __future__ import annotations

import datetime as dt
import zoneinfo

from discord_mcp.errors import RunError
from discord_mcp.runs.engine.schedules import Schedule
from discord_mcp.state.files import off_loop
from discord_mcp.watch.commands import split_word
from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.control.words import clip, cmd, fit


def split_cron(text: str) -> tuple[str, str]:
    """``cron:"0 9 * * *" tz:Asia/Tokyo check the CI`` -> the schedule and the rest (a text
    command's words come as one line)."""
    quote = next((i for i, ch in enumerate(text) if ch in "\"'"), -1)
    end = text.find(text[quote], quote + 1) if quote >= 0 else -1
    if end < 0:
        return text, ""
    when, rest = text[: end + 1], text[end + 1 :].strip()
    word, after = split_word(rest)
    if word.lower().startswith("tz"):
        if word.lower() in ("tz", "tz:", "tz="):
            zone, after = split_word(after)
            word = f"tz:{zone}"
        when, rest = f"{when} {word}", after.strip()
    return when, rest


async def add(c: Controls, r: Request) -> Reply:
    when, prompt = r.get("when") or "", r.get("prompt") or ""
    if when.lower() in ("every", "daily") and prompt:  # "!schedule add every 30m <prompt>"
        word, prompt = split_word(prompt)
        when = f"{when} {word}"
    if when.lower().startswith("cron"):
        when, rest = split_cron(f"{when} {prompt}".strip())
        prompt = rest
    project, thread, chat = r.get("project"), r.get("session"), r.get("chat")
    if sum(bool(x) for x in (project, thread, chat)) > 1:
        raise RunError("E_BAD_ARGUMENTS", "give a project, a session or a chat channel: one")
    if chat:
        chat = chat.strip().removeprefix("<#").removesuffix(">")
        if c.chat is None or (await c.chat.refresh()).get(chat) is None:
            raise RunError(
                "E_CHAT_NOT_FOUND", f"{chat} is not a chat channel: add it with /chat add first"
            )
    elif project:
        project = c.projects.get(project).name
    elif thread or c.engine.session(r.channel_id) is not None:
        if c.chat is not None and c.chat.handles(r.channel_id) and not thread:
            chat = r.channel_id  # typed in a chat channel: its heartbeat
        else:
            thread = c.session_of(r).thread_id
    elif c.chat is not None and c.chat.handles(r.channel_id):
        chat = r.channel_id
    else:
        raise RunError(
            "E_BAD_ARGUMENTS",
            "say where it runs: a project (it gets a thread of its own), a session, or a chat "
            "channel (its heartbeat); or use the command in a run thread or a chat channel",
        )
    schedule = await off_loop(
        c.schedules.add,
        when,
        prompt,
        project=project,
        thread_id=thread or None,
        channel_id=chat or None,
        now=c.wall(),
    )
    c.schedules_changed()
    return Reply(
        f"Scheduled `{schedule.id}` ({schedule.when}) {_target(schedule)}: first run "
        f"{next_run(schedule)}. Remove it with {cmd(r, f'schedule remove {schedule.id}')}."
    )


async def list_(c: Controls, r: Request) -> Reply:
    schedules = await off_loop(c.schedules.list)
    if not schedules:
        return Reply("No scheduled prompts: add one with " + cmd(r, "schedule add") + ".")
    lines = [f"**Scheduled prompts** ({len(schedules)})"]
    for s in schedules:
        what = clip(s.prompt, 80) if s.prompt else "HEARTBEAT.md"
        lines.append(
            f"• `{s.id}` {s.when} {_target(s)} · next {next_run(s)} · ran {s.runs}× · {what}"
        )
    return Reply(fit(lines))


async def remove(c: Controls, r: Request) -> Reply:
    removed = await off_loop(c.schedules.remove, r.get("schedule") or "")
    c.schedules_changed()
    return Reply(f"Removed `{removed.id}` ({removed.when}: {clip(removed.prompt, 80)}).")


def _target(s: Schedule) -> str:
    if s.channel_id:
        return f"as the heartbeat of <#{s.channel_id}>"
    if s.thread_id:
        return f"in <#{s.thread_id}>"
    return f"in a new thread of **{s.project}**"


def next_run(s: Schedule) -> str:
    """The next run as Discord timestamps (each reader sees their own time zone), and a cron
    schedule's time in its own zone."""
    unix = int(s.next_time)
    shown = f"<t:{unix}:f> (<t:{unix}:R>)"
    zone = s.zone
    if zone:
        local = dt.datetime.fromtimestamp(s.next_time, tz=zoneinfo.ZoneInfo(zone))
        shown += f" · {local:%H:%M:%S} {zone}" if local.second else f" · {local:%H:%M} {zone}"
    return shown
