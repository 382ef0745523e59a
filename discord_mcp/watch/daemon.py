"""The watch daemon: routes what the owner writes, runs agents, and holds the gateway.

Every message in the configured channel and its threads is handled once, whether it arrives
live (the daemon is the preferred gateway holder) or on catch-up after downtime (REST history
from each cursor). Where it goes:

===============================  ===========================================================
where, what                      becomes
===============================  ===========================================================
a bot's message (ours too)       nothing
someone else's ``!command``      a short refusal (E_OWNER_ONLY); the attempt is logged
channel, ``!start``/``!status``  a new run thread / the status
channel, anything else           an inbox item for every agent
run thread, ``!...``             the session command (status, tool, retry, stop)
run thread, anything else        a job for that thread's agent session
thread with a pending decision   left to the decision (an answer, even in a run thread)
decision thread, answered        an inbox item for that decision's project
other thread under the channel   an inbox item
===============================  ===========================================================
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from discord_mcp.config import Settings
from discord_mcp.decisions.live import DecisionEvents
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import BadRequest, DiscordError, RunError, Unauthorized
from discord_mcp.inbox import Inbox, InboxItem
from discord_mcp.relay.link import LiveLink
from discord_mcp.runs import JobView, SessionView
from discord_mcp.state.files import off_loop
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.commands import CHANNEL_HELP, THREAD_HELP, Command, parse_command
from discord_mcp.watch.cursors import Cursors

log = logging.getLogger(__name__)

SAFETY_CATCH_UP_S = 30.0
DECISION_THREAD_DAYS = 7
"""Decision threads are watched this long after the question, for notes after the answer."""
"""With a live gateway, history is still read this often, for anything missed live."""
THREAD_EXISTS = 160004
THREAD_CREATED = 18
"""The system message Discord posts in a channel when a thread is created in it."""
OWNER_ONLY_REPLY_EVERY_S = 600.0


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


class Watcher:
    """The daemon's Discord side.

    Args:
        settings: token, channel, owners, state directory, poll interval.
        rest: the REST client.
        engine: the run engine.
        decisions: the decision service (watching every pending decision).
        link: the gateway link (None: REST polling only); set before :meth:`run`.
    """

    def __init__(
        self,
        *,
        settings: Settings,
        rest: RestClient,
        engine: Engine,
        decisions: DecisionService,
        link: LiveLink | None,
    ) -> None:
        self._settings = settings
        self._rest = rest
        self._engine = engine
        self._decisions = decisions
        self._interactions = DecisionEvents(decisions, rest)
        self.link = link
        self._inbox = Inbox(settings.home)
        self._store = DecisionStore(settings.home)
        self._cursors = Cursors(settings.home)
        self._parents: dict[str, str | None] = {}
        self._refused_at: dict[str, float] = {}
        self._lock = asyncio.Lock()
        self.caught_up = asyncio.Event()
        """Set after the first catch-up pass (tests and the status display wait on it)."""

    # ---- running ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Catch up, then follow live events and read history as a safety net, until cancelled."""
        await self._watch_main_channel()
        while True:
            try:
                await self.catch_up()
                await self._decisions.upgrade_cards()
            except Unauthorized:
                raise
            except DiscordError as exc:
                log.warning("catching up failed: %s", exc)
            self.caught_up.set()
            live = self.link is not None and self.link.is_live()
            await asyncio.sleep(
                max(SAFETY_CATCH_UP_S, self._settings.poll_interval)
                if live
                else self._settings.poll_interval
            )

    async def _watch_main_channel(self) -> None:
        channel = self._settings.channel_id
        if channel in self._cursors.channels():
            return
        # First start: the channel's history before now is not ours to act on.
        latest = await self._rest.list_messages(channel, limit=1)
        self._cursors.watch(channel, start=latest[0]["id"] if latest else None)
        await self._cursors.flush()

    def _discover(self) -> None:
        """Watch the threads we know of from our own state: run sessions and decisions."""
        channel = self._settings.channel_id
        for session in self._engine.sessions():
            self._cursors.watch(session.thread_id, parent_id=channel, start=None)
        recent = datetime.now(UTC) - timedelta(days=DECISION_THREAD_DAYS)
        for decision in self._store.all():
            if decision.card_message_id and datetime.fromisoformat(decision.asked_at) >= recent:
                # Earlier messages in the thread are not ours; the card's own thread starts here.
                self._cursors.watch(
                    decision.thread_id,
                    parent_id=decision.channel_id,
                    start=decision.card_message_id,
                )

    async def catch_up(self) -> None:
        """Read every watched channel's history after its cursor and handle what is new."""
        self._discover()
        for channel_id, cursor in self._cursors.channels().items():
            after = cursor.cursor
            while True:
                page = await self._rest.list_messages(channel_id, after=after, limit=100)
                ordered = sorted(page, key=lambda m: int(m["id"]))
                if not after:
                    # A thread watched from its start: everything in it is new.
                    ordered = [m for m in ordered if not self._cursors.seen(channel_id, m["id"])]
                for message in ordered:
                    await self._handle(dict(message), live=False)
                if ordered:
                    self._cursors.advance(channel_id, ordered[-1]["id"])
                await self._cursors.flush()
                if len(page) < 100 or not ordered:
                    break
                after = ordered[-1]["id"]

    # ---- live events (LiveHandler) ------------------------------------------------------------

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        await self._decisions.on_event(name, data)
        if name == "MESSAGE_CREATE":
            await self._handle(data, live=True)
        elif name == "THREAD_CREATE" and data.get("parent_id") == self._settings.channel_id:
            self._parents[str(data["id"])] = self._settings.channel_id
            self._cursors.watch(str(data["id"]), parent_id=self._settings.channel_id, start=None)
            await self._cursors.flush()

    async def on_interaction(self, data: dict[str, Any]) -> None:
        await self._interactions.on_interaction(data)

    # ---- routing ------------------------------------------------------------------------------

    async def _handle(self, message: dict[str, Any], *, live: bool) -> None:
        channel_id = str(message.get("channel_id") or "")
        message_id = str(message.get("id") or "")
        if not channel_id or not message_id.isdigit():
            return
        if not await self._is_watched(channel_id):
            return
        async with self._lock:
            if self._cursors.seen(channel_id, message_id):
                return
            try:
                await self._route(message, channel_id)
            except RunError as exc:
                await self._reply(channel_id, message_id, f"**{exc.code}**: {exc.message}")
            except DiscordError as exc:
                log.warning("handling message %s failed: %s", message_id, exc)
            if live:
                self._cursors.handled_live(channel_id, message_id)
            else:
                self._cursors.advance(channel_id, message_id)
            await self._cursors.flush()

    async def _is_watched(self, channel_id: str) -> bool:
        if channel_id == self._settings.channel_id or channel_id in self._cursors.channels():
            return True
        if channel_id not in self._parents:
            try:
                channel = await self._rest.get_channel(channel_id)
            except DiscordError:
                return False
            self._parents[channel_id] = channel.get("parent_id")
        if self._parents[channel_id] != self._settings.channel_id:
            return False
        self._cursors.watch(channel_id, parent_id=self._settings.channel_id, start=None)
        return True

    async def _route(self, message: dict[str, Any], channel_id: str) -> None:
        if channel_id == self._settings.channel_id:
            self._discover_thread_of(message)
        author = message.get("author") or {}
        if author.get("bot") or message.get("webhook_id"):
            return
        if message.get("type", 0) not in (0, 19):
            return
        content = str(message.get("content") or "")
        command = parse_command(content)
        author_id = str(author.get("id") or "")
        if author_id not in self._settings.owner_ids:
            if command is not None:
                await self._refuse(channel_id, str(message["id"]), author_id)
            return
        if channel_id == self._settings.channel_id:
            if command is not None:
                await self._channel_command(message, command)
            elif content.strip():
                await self._to_inbox(message, project=None)
            return
        decisions = [d for d in self._store.all() if d.thread_id == channel_id]
        if command is None and any(
            (d.status == "pending" and not d.gave_up_at) or d.handled(str(message["id"]))
            for d in decisions
        ):
            # An answer to a question (a run's agent asks in its own thread too): the
            # decision service judges it; it is not a new job or an inbox note.
            return
        if self._engine.session(channel_id) is not None:
            if command is not None:
                await self._thread_command(message, channel_id, command)
            elif content.strip():
                await self._engine.submit(channel_id, str(message["id"]), content, _name(author))
            return
        if content.strip():
            await self._to_inbox(message, project=decisions[-1].project if decisions else None)

    def _discover_thread_of(self, message: dict[str, Any]) -> None:
        """A channel message that started a thread, or says one was created: watch the thread."""
        thread = message.get("thread") if isinstance(message.get("thread"), dict) else None
        reference = message.get("message_reference") or {}
        thread_id = (thread or {}).get("id") or (
            reference.get("channel_id") if message.get("type") == THREAD_CREATED else None
        )
        if thread_id and str(thread_id) != self._settings.channel_id:
            self._cursors.watch(str(thread_id), parent_id=self._settings.channel_id, start=None)

    async def _to_inbox(self, message: dict[str, Any], *, project: str | None) -> None:
        author = message.get("author") or {}
        channel_id = str(message["channel_id"])
        await off_loop(
            self._inbox.add,
            [
                InboxItem(
                    message_id=str(message["id"]),
                    channel_id=channel_id,
                    thread_id=None if channel_id == self._settings.channel_id else channel_id,
                    author_id=str(author.get("id") or ""),
                    author=_name(author),
                    content=str(message.get("content") or ""),
                    timestamp=str(message.get("timestamp") or ""),
                    project=project,
                )
            ],
        )

    async def _refuse(self, channel_id: str, message_id: str, user_id: str) -> None:
        log.warning("refused a command from %s in %s", user_id, channel_id)
        now = time.monotonic()
        if (
            now - self._refused_at.get(user_id, -OWNER_ONLY_REPLY_EVERY_S)
            < OWNER_ONLY_REPLY_EVERY_S
        ):
            return
        self._refused_at[user_id] = now
        owners = ", ".join(f"<@{o}>" for o in sorted(self._settings.owner_ids))
        await self._reply(
            channel_id, message_id, f"**E_OWNER_ONLY**: only {owners} can command runs."
        )

    async def _reply(self, channel_id: str, message_id: str, text: str) -> None:
        with contextlib.suppress(DiscordError):
            await self._rest.send_text(
                channel_id, text, allowed_mentions={"parse": []}, reply_to=message_id
            )

    # ---- commands -----------------------------------------------------------------------------

    async def _channel_command(self, message: dict[str, Any], command: Command) -> None:
        channel_id, message_id = str(message["channel_id"]), str(message["id"])
        if command.name == "start":
            await self._start(message, command)
        elif command.name == "status":
            await self._reply(channel_id, message_id, self._overview())
        elif command.name == "help":
            await self._reply(channel_id, message_id, CHANNEL_HELP)
        else:
            await self._reply(
                channel_id,
                message_id,
                f"Unknown command `!{command.name}` here.\n{CHANNEL_HELP}",
            )

    async def _start(self, message: dict[str, Any], command: Command) -> None:
        channel_id, message_id = str(message["channel_id"]), str(message["id"])
        if not command.args:
            await self._reply(channel_id, message_id, "Usage: `!start <project> [first prompt]`")
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
        self._parents[thread_id] = channel_id
        self._cursors.watch(thread_id, parent_id=channel_id, start=None)
        session = self._engine.session(thread_id) or await self._engine.start_session(
            thread_id, project
        )
        await self._reply(
            thread_id,
            message_id,
            f"Session started for **{session.project_name}** with `{session.tool}`. "
            "Write here to give it work; each message is one job, run in order.",
        )
        if command.rest:
            await self._engine.submit(
                thread_id, message_id, command.rest, _name(message.get("author") or {})
            )

    async def _thread_command(
        self, message: dict[str, Any], thread_id: str, command: Command
    ) -> None:
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
        await self._reply(thread_id, message_id, text)

    def _overview(self) -> str:
        sessions = self._engine.sessions()
        running = [s for s in sessions if s.running_job_id]
        queued = sum(s.pending for s in sessions)
        pending = [d for d in self._store.all() if d.status == "pending"]
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


def _name(author: dict[str, Any]) -> str:
    return str(author.get("global_name") or author.get("username") or author.get("id") or "?")
