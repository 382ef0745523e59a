"""The watch daemon's side of the team (:mod:`discord_mcp.team`): what this machine has, what it
publishes, and the other machines in the owner's ``/status``, ``/pending`` and ``/project``
answers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.runs.journal.model import parse_iso
from discord_mcp.state.files import off_loop
from discord_mcp.team.desk import TeamDesk
from discord_mcp.team.records import Job, MachineRecord, Waiting
from discord_mcp.team.roster import Roster
from discord_mcp.watch.commands import Command
from discord_mcp.watch.control.base import Controls
from discord_mcp.watch.control.spec import from_text
from discord_mcp.watch.control.words import ago, clip

MACHINES_MAX = 10


class ControlHoldings:
    """What this machine has, read from the daemon's controls (:class:`~.routing.Holdings`)."""

    def __init__(self, controls: Controls) -> None:
        self._c = controls

    def project(self, name: str) -> bool:
        try:
            self._c.projects.get(name)
        except RunError:
            return False
        return True

    def session(self, thread_id: str) -> bool:
        return self._c.engine.session(thread_id) is not None

    def job(self, job_id: str) -> bool:
        return self._c.engine.job(job_id) is not None

    def schedule(self, schedule_id: str) -> bool:
        try:
            self._c.schedules.get(schedule_id)
        except RunError:
            return False
        return True


def describer(c: Controls, gateway: Callable[[], bool]) -> Callable[[], Awaitable[MachineRecord]]:
    """What this machine's presence record says now (read off the event loop)."""

    async def describe() -> MachineRecord:
        try:
            projects = [p.name for p in await off_loop(c.projects.list)]
        except RunError:  # a corrupt project list (set aside and reported where it is read)
            projects = []
        jobs = []
        for session in c.engine.sessions():
            if session.running_job_id:
                jobs.append(
                    Job(
                        session.project_name,
                        session.thread_id,
                        str(session.tool or ""),
                        session.running_job_id,
                    )
                )
        pending = sorted(
            (d for d in await off_loop(c.decisions.open_decisions) if d.status == "pending"),
            key=lambda d: d.asked_at,
        )
        waiting = [
            Waiting(
                project=d.project,
                kind=d.kind,
                question=d.question,
                thread_id=d.thread_id,
                message_id=d.card_message_id,
                asked_at=d.asked_at,
            )
            for d in pending
            if d.thread_id.isdigit()
        ]
        return MachineRecord(
            name="",
            instance="",
            up_since=0.0,
            projects=tuple(projects),
            jobs=tuple(jobs),
            waiting=tuple(waiting),
            projects_total=len(projects),
            jobs_total=len(jobs),
            waiting_total=len(pending),
            gateway=gateway(),
        )

    return describe


def machines_lines(roster: Roster | None) -> list[str]:
    """``/status``: every machine sharing the bot, with its projects, jobs and questions (none
    while this machine has never seen another)."""
    if roster is None or not roster.others():
        return []
    machines = roster.machines()
    lines = ["", f"**Machines** ({len(machines)})"]
    if roster.conflict:
        lines.append(f"⚠️ {roster.conflict}: rename one (DISCORD_MCP_MACHINE)")
    for machine in machines[:MACHINES_MAX]:
        record = machine.record
        if machine.this:
            here = "this one"
        elif machine.live:
            here = roster.seen_words(machine.name)
        else:
            here = roster.seen_words(machine.name).replace("away, last", "**away**, last")
        projects = ", ".join(f"`{p}`" for p in (record.projects if record else ())[:8]) or "none"
        counts = (
            f"{record.jobs_total} running, {record.waiting_total} waiting" if record else "starting"
        )
        lines.append(f"• `{machine.name}` ({here}) · projects {projects} · {counts}")
        if machine.live and record is not None and not machine.this:
            for job in record.jobs[:3]:
                lines.append(f"  · <#{job.thread_id}> {job.project} `{job.tool}` running")
    return lines


def waiting_elsewhere(
    roster: Roster | None, link: Callable[[str, str | None], str], now: float
) -> list[str]:
    """``/pending``: what waits for the owner on the other live machines."""
    if roster is None:
        return []
    lines: list[str] = []
    for record in roster.live_others():
        if not record.waiting_total:
            continue
        lines.append(f"**On `{record.name}`** ({record.waiting_total})")
        for w in record.waiting:
            asked = parse_iso(w.asked_at) if w.asked_at else None
            when = f" · asked {ago(asked, now)}" if asked else ""
            lines.append(
                f"• {w.kind}: **{clip(w.question, 120)}** · {w.project}{when} · "
                f"[jump]({link(w.thread_id, w.message_id or None)})"
            )
        if record.waiting_total > len(record.waiting):
            lines.append(f"… and {record.waiting_total - len(record.waiting)} more there")
    return lines


def projects_elsewhere(roster: Roster | None) -> list[str]:
    """``/project list``: the other live machines' projects."""
    if roster is None:
        return []
    return [
        f"• **{record.name}**: " + ", ".join(f"`{p}`" for p in record.projects)
        for record in roster.live_others()
        if record.projects
    ]


def roster_of(c: Controls) -> Roster | None:
    return c.team.roster if c.team is not None else None


def refuse_elsewhere(c: Controls, name: str) -> None:
    """Refuse a new project whose name another live machine already hosts.

    Raises:
        RunError: E_PROJECT_ON_OTHER_MACHINE.
    """
    hosts = c.team.project_hosts(name) if c.team is not None else []
    if hosts:
        raise RunError(
            "E_PROJECT_ON_OTHER_MACHINE",
            f"`{name}` is already a project on {', '.join(f'`{h}`' for h in hosts)}: commands "
            "naming it go there. Give this one another name.",
        )


async def text_turn(
    team: TeamDesk | None,
    message: dict[str, Any],
    command: Command | None,
    say: Callable[[str, str, str], Awaitable[None]],
) -> bool:
    """Whether this machine runs a ``!`` command (with others sharing the bot, only the one
    whose turn it is; a later turn runs it, or ``say``s who did not, when nobody replied)."""
    if team is None or command is None:
        return True
    try:
        spec, options = from_text(command)
    except RunError:
        return team.anyone_turn().act == "now"  # its usage error, said once
    channel_id = str(message["channel_id"])
    turn = team.turn(spec.path, options, channel_id, focused=None)
    if turn.act == "never" or not await team.text_slot_came(message, turn):
        return False
    if turn.instead is not None:
        await say(channel_id, str(message["id"]), turn.instead)
        return False
    return True
