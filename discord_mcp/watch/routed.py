"""What a message under the channel does once its route is known
(:mod:`discord_mcp.watch.routing`'s table): an owner's command runs (in a chat channel too), a
message in a run thread becomes a job, a note goes to the inbox, a stranger's command is refused
(answered at most every :data:`OWNER_ONLY_REPLY_EVERY_S`), a thread the message started is
watched, and a message without its text says once that the Message Content intent is off.

A base class of :class:`~discord_mcp.watch.daemon.Watcher`, which provides the attributes
declared here and decides which messages are handled, once each.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from discord_mcp.config import Settings
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DiscordError
from discord_mcp.files.store import OwnerFiles
from discord_mcp.inbox import Inbox
from discord_mcp.runs import JobView, SessionView
from discord_mcp.state.files import off_loop
from discord_mcp.team.desk import TeamDesk
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.wire import text_of
from discord_mcp.watch.chat.desk import ChatDesk
from discord_mcp.watch.chat.watching import owner_command
from discord_mcp.watch.control import Dispatcher
from discord_mcp.watch.control.machines import text_turn
from discord_mcp.watch.cursors import Cursors
from discord_mcp.watch.quiet import thread_decisions
from discord_mcp.watch.recovery import Alive
from discord_mcp.watch.routing import (
    CONTENT_HIDDEN_TEXT,
    ENABLE_INTENT,
    Route,
    author_name,
    inbox_item,
)

log = logging.getLogger("discord_mcp.watch.daemon")  # the daemon's log, as before the split

THREAD_CREATED = 18
"""The system message Discord posts in a channel when a thread is created in it."""
OWNER_ONLY_REPLY_EVERY_S = 600.0
"""A stranger's ``!command`` is answered at most this often per person (the rest are logged)."""


class Engine(Protocol):
    """What the daemon needs from the run engine
    (:class:`discord_mcp.runs.engine.engine.RunEngine`)."""

    async def start_session(
        self, thread_id: str, project: str, tool: str | None = None
    ) -> SessionView: ...

    async def submit(
        self,
        thread_id: str,
        message_id: str,
        prompt: str,
        author: str,
        attachments: Sequence[Mapping[str, Any]] = (),
    ) -> JobView: ...

    async def set_tool(self, thread_id: str, tool: str) -> SessionView: ...

    async def retry(self, thread_id: str, job_id: str) -> JobView: ...

    async def stop(self, thread_id: str) -> JobView | None: ...

    def session(self, thread_id: str) -> SessionView | None: ...

    def sessions(self) -> list[SessionView]: ...

    async def revive(self, thread_id: str) -> bool: ...


class MessageRoutes:
    """A routed message's effect; the Watcher provides the attributes declared here."""

    chat: ChatDesk | None
    team: TeamDesk | None
    commands: Dispatcher | None
    _settings: Settings
    _rest: RestClient
    _engine: Engine
    _store: DecisionStore
    _inbox: Inbox
    _files: OwnerFiles
    _cursors: Cursors
    _alive: Alive
    _replay_until: int | None
    _refused_at: dict[str, float]
    _told_content_hidden: bool

    def _destination(
        self, message: dict[str, Any], channel_id: str, decisions: list[Decision]
    ) -> Route:
        raise NotImplementedError  # Watcher._destination is the one that runs

    async def _route(self, message: dict[str, Any], channel_id: str, *, replay: bool) -> None:
        if self.chat is not None and self.chat.handles(channel_id):
            await self._chat(message, channel_id, replay=replay)
            return
        if channel_id == self._settings.channel_id:
            self._discover_thread_of(message)
        else:
            await self._engine.revive(channel_id)  # a session at rest for long had retired
        decisions = await thread_decisions(self._store, channel_id, self._settings.channel_id)
        route = self._destination(message, channel_id, decisions)
        message_id = str(message["id"])
        if route.command is not None:
            if replay and self._replay_until is not None and int(message_id) <= self._replay_until:
                log.warning(
                    "recovering: not re-running !%s (message %s in %s): it may have run before "
                    "the cursors were lost; write it again if it is still wanted",
                    route.command.name,
                    message_id,
                    channel_id,
                )
                return
            if route.kind != "refuse":  # an owner's command: it must never run twice
                await self._alive.record(now=True)
        if route.kind == "refuse":
            if self.team is not None and self.team.anyone_turn().act != "now":
                return  # one machine refuses, the first in line
            author_id = str((message.get("author") or {}).get("id") or "")
            await self._refuse(channel_id, message_id, author_id)
        elif route.kind in ("channel_command", "thread_command") and route.command is not None:
            # The same dispatcher as the slash commands (watch/control).
            mine = await text_turn(self.team, message, route.command, self._reply)
            if self.commands is not None and mine:
                files = await self._files.keep(message) if message.get("attachments") else []
                reply = await self.commands.text(message, route.command, files)
                if reply.text and not reply.quiet_in_text:
                    await self._reply(channel_id, message_id, reply.text)
        elif route.kind == "job":
            author = author_name(message.get("author") or {})
            files = await self._files.keep(message)  # the owner's files go to the agent
            await self._engine.submit(channel_id, message_id, text_of(message), author, files)
        elif route.kind == "inbox":
            files = await self._files.keep(message)
            await off_loop(
                self._inbox.add,
                [
                    inbox_item(
                        message,
                        route.project,
                        files,
                        channel=self._settings.channel_id,
                        project_key=route.project_key,
                    )
                ],
            )
        elif route.kind == "content_hidden" and not self._told_content_hidden:
            if self.team is not None and self.team.anyone_turn().act != "now":
                return
            self._told_content_hidden = True
            log.warning(
                "an owner's message in %s arrived without its text: the Message Content intent "
                "is off, so the owner's commands, jobs and notes cannot be read (%s)",
                channel_id,
                ENABLE_INTENT,
            )
            await self._reply(channel_id, message_id, CONTENT_HIDDEN_TEXT)

    async def _chat(self, message: dict[str, Any], channel_id: str, *, replay: bool) -> None:
        """A chat channel's message: an owner's ``!command`` is a command, the rest chat."""
        assert self.chat is not None
        command = owner_command(message, self._settings.owner_ids)
        if command is None or self.commands is None:
            await self.chat.on_message(message)
            return
        if replay and self._replay_until is not None and int(message["id"]) <= self._replay_until:
            return  # it may have run before the cursors were lost
        await self._alive.record(now=True)
        files = await self._files.keep(message) if message.get("attachments") else []
        reply = await self.commands.text(message, command, files)
        if reply.text and not reply.quiet_in_text:
            await self._reply(channel_id, str(message["id"]), reply.text)

    def _discover_thread_of(self, message: dict[str, Any]) -> None:
        """A channel message that started a thread, or says one was created: watch the thread."""
        thread = message.get("thread") if isinstance(message.get("thread"), dict) else None
        reference = message.get("message_reference") or {}
        thread_id = (thread or {}).get("id") or (
            reference.get("channel_id") if message.get("type") == THREAD_CREATED else None
        )
        if thread_id and str(thread_id) != self._settings.channel_id:
            bots = (message.get("author") or {}).get("bot")
            if bots and self.team is not None and self.team.roster.others_known():
                return  # a thread the bot opened: this machine knows its own (watch_thread)
            self._cursors.watch(str(thread_id), parent_id=self._settings.channel_id, start=None)

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
