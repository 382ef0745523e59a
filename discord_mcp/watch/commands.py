"""The owner's text commands (the fallback that works without slash commands).

In the channel: ``!start <project> [first prompt]``, ``!status``, ``!help``. In a run thread:
``!status``, ``!tool <claude|codex|gemini>``, ``!retry <job_id>``, ``!stop``, ``!help``.
:func:`parse_command` reads one; :class:`Commands` carries it out and answers in Discord.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from discord_mcp.decisions.model import Decision
from discord_mcp.errors import BadRequest, DiscordError
from discord_mcp.runs import JobView, SessionView
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)

THREAD_EXISTS = 160004
OWNER_ONLY_REPLY_EVERY_S = 600.0

CHANNEL_COMMANDS = ("start", "status", "help")
THREAD_COMMANDS = ("status", "tool", "retry", "stop", "help")

CHANNEL_HELP = (
    "**discord-watch commands** (in this channel)\n"
    "`!start <project> [first prompt]`: open a run thread for a project; everything you write "
    "there is work for its agent\n"
    "`!status`: projects, running and queued jobs\n"
    "Anything else you write here goes to the agents' inbox."
)
THREAD_HELP = (
    "**In a run thread**: write to give the agent work (one job per message, in order).\n"
    "`!status`: this session · `!tool <claude|codex|gemini>`: switch from the next job · "
    "`!retry <job_id>`: run a failed job again · `!stop`: end the running job"
)


@dataclass(frozen=True, slots=True)
class Command:
    """A parsed ``!name args...``."""

    name: str
    args: tuple[str, ...]
    rest: str
    """Everything after the first argument, as typed (the first prompt of ``!start``)."""


def parse_command(text: str) -> Command | None:
    """The command in ``text``, or None when it is not one (then it is a normal message)."""
    stripped = text.strip()
    if not stripped.startswith("!") or len(stripped) < 2 or stripped[1].isspace():
        return None
    head, _, tail = stripped[1:].partition(" ")
    name = head.strip().lower()
    if not name.isalpha():
        return None
    args = tuple(tail.split())
    rest = ""
    if args:
        rest = tail.strip()[len(args[0]) :].strip()
    return Command(name=name, args=args, rest=rest)


def session_status(session: SessionView) -> str:
    """``!status`` in a run thread (the fields of seed 000 §5.2)."""
    last = session.last_job
    if last is None:
        last_line = "none yet"
    else:
        took = f", {last.duration:.0f}s" if last.duration is not None else ""
        finished = f", {last.finished_at:%Y-%m-%d %H:%M} UTC" if last.finished_at else ""
        last_line = f"{last.state}{took}{finished}"
    retry = f"`!retry {session.retry_job_id}`" if session.retry_job_id else "n/a"
    return "\n".join(
        [
            "**Session status**",
            f"project: {session.project_name}",
            f"tool: {session.tool}",
            f"session_key: {session.session_key or 'none yet'}",
            f"state: {session.state}",
            f"queue: pending={session.pending}, running={session.running_job_id or 'none'}",
            f"last_job: {last_line}",
            f"resume_ready: {'yes' if session.resume_ready else 'no'}",
            f"retry_hint: {retry}",
        ]
    )


def overview(sessions: Sequence[SessionView], decisions: Sequence[Decision]) -> str:
    """``!status`` in the channel."""
    running = [s for s in sessions if s.running_job_id]
    queued = sum(s.pending for s in sessions)
    pending = [d for d in decisions if d.status == "pending"]
    lines = [
        f"**discord-watch**: {len(sessions)} sessions, {len(running)} running, "
        f"{queued} queued jobs, {len(pending)} open decisions"
    ]
    for session in running[:10]:
        lines.append(
            f"• <#{session.thread_id}> {session.project_name} `{session.tool}` running "
            f"`{session.running_job_id}`"
        )
    return "\n".join(lines)


class Engine(Protocol):
    """What the daemon needs from the run engine (:class:`discord_mcp.runs.engine.RunEngine`)."""

    async def start_session(
        self, thread_id: str, project: str, tool: str | None = None
    ) -> SessionView: ...

    async def submit(
        self, thread_id: str, message_id: str, prompt: str, author: str
    ) -> JobView: ...

    async def set_tool(self, thread_id: str, tool: str) -> SessionView: ...

    async def retry(self, thread_id: str, job_id: str) -> JobView: ...

    async def stop(self, thread_id: str) -> JobView | None: ...

    def session(self, thread_id: str) -> SessionView | None: ...

    def sessions(self) -> list[SessionView]: ...


class Commands:
    """Carries out the owner's commands and answers them in Discord.

    Args:
        rest: the REST client.
        engine: the run engine.
        owner_ids: who may command (named in a stranger's refusal).
        decisions: every decision (for the channel's ``!status``).
        on_thread: told ``(thread_id, channel_id)`` when ``!start`` opens a run thread.
    """

    def __init__(
        self,
        *,
        rest: RestClient,
        engine: Engine,
        owner_ids: frozenset[str],
        decisions: Callable[[], Awaitable[list[Decision]]],
        on_thread: Callable[[str, str], None],
    ) -> None:
        self._rest = rest
        self._engine = engine
        self._owner_ids = owner_ids
        self._decisions = decisions
        self._on_thread = on_thread
        self._refused_at: dict[str, float] = {}

    async def refuse(self, channel_id: str, message_id: str, user_id: str) -> None:
        log.warning("refused a command from %s in %s", user_id, channel_id)
        now = time.monotonic()
        if (
            now - self._refused_at.get(user_id, -OWNER_ONLY_REPLY_EVERY_S)
            < OWNER_ONLY_REPLY_EVERY_S
        ):
            return
        self._refused_at[user_id] = now
        owners = ", ".join(f"<@{o}>" for o in sorted(self._owner_ids))
        await self.reply(
            channel_id, message_id, f"**E_OWNER_ONLY**: only {owners} can command runs."
        )

    async def reply(self, channel_id: str, message_id: str, text: str) -> None:
        with contextlib.suppress(DiscordError):
            await self._rest.send_text(
                channel_id, text, allowed_mentions={"parse": []}, reply_to=message_id
            )

    async def channel(self, message: dict[str, Any], command: Command) -> None:
        channel_id, message_id = str(message["channel_id"]), str(message["id"])
        if command.name == "start":
            await self._start(message, command)
        elif command.name == "status":
            text = overview(self._engine.sessions(), await self._decisions())
            await self.reply(channel_id, message_id, text)
        elif command.name == "help":
            await self.reply(channel_id, message_id, CHANNEL_HELP)
        else:
            await self.reply(
                channel_id,
                message_id,
                f"Unknown command `!{command.name}` here.\n{CHANNEL_HELP}",
            )

    async def _start(self, message: dict[str, Any], command: Command) -> None:
        channel_id, message_id = str(message["channel_id"]), str(message["id"])
        if not command.args:
            await self.reply(channel_id, message_id, "Usage: `!start <project> [first prompt]`")
            return
        project = command.args[0]
        name = f"{project} · {command.rest or 'session'}"
        try:
            thread = await self._rest.create_thread_from_message(channel_id, message_id, name)
            thread_id = thread["id"]
        except BadRequest as exc:
            if exc.code != THREAD_EXISTS:
                raise
            thread_id = message_id  # started before a crash: the thread is this message's
        self._on_thread(thread_id, channel_id)
        session = self._engine.session(thread_id) or await self._engine.start_session(
            thread_id, project
        )
        await self.reply(
            thread_id,
            message_id,
            f"Session started for **{session.project_name}** with `{session.tool}`. "
            "Write here to give it work; each message is one job, run in order.",
        )
        if command.rest:
            await self._engine.submit(
                thread_id, message_id, command.rest, author_name(message.get("author") or {})
            )

    async def thread(self, message: dict[str, Any], thread_id: str, command: Command) -> None:
        message_id = str(message["id"])
        if command.name == "status":
            session = self._engine.session(thread_id)
            text = session_status(session) if session else "No session in this thread."
        elif command.name == "tool":
            if not command.args:
                text = "Usage: `!tool <claude|codex|gemini>`"
            else:
                session = await self._engine.set_tool(thread_id, command.args[0].lower())
                text = f"From the next job on, this thread uses `{session.tool}`."
        elif command.name == "retry":
            if not command.args:
                text = "Usage: `!retry <job_id>`"
            else:
                job = await self._engine.retry(thread_id, command.args[0])
                text = f"Retrying as job `{job.job_id}` (attempt {job.attempt})."
        elif command.name == "stop":
            stopped = await self._engine.stop(thread_id)
            text = f"Stopping job `{stopped.job_id}`." if stopped else "No job is running here."
        elif command.name == "help":
            text = THREAD_HELP
        else:
            text = f"Unknown command `!{command.name}`.\n{THREAD_HELP}"
        await self.reply(thread_id, message_id, text)


def author_name(author: dict[str, Any]) -> str:
    return str(author.get("global_name") or author.get("username") or author.get("id") or "?")
