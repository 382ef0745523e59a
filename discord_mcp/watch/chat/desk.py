"""The chat desk: messages in a chat channel become one conversation's turns, through the run
engine like any run thread's (issue 25).

Theory. A chat channel is an engine session keyed by the channel's id, in the chat's project
(or its own, :class:`~.channels.ChatProjects`). Each message from an allowed speaker
(:mod:`.routing`) is submitted as the owner's messages are in a run thread, with three
differences:

- **one conversation.** A message that arrives while a turn runs steers that turn where its
  engine takes prompts mid-turn (an ACP agent that says so), else it joins the turn that waits
  next (``submit(merge=True)``), so a burst of messages is answered once;
- **composed at the start.** The job holds only the messages' blocks (:mod:`.context`); when
  the turn starts the desk (a :class:`~discord_mcp.runs.contract.TurnPreparer`) adds the
  channel's name and its last ``history`` messages (read then, so the agent's reply to the
  previous turn is in them; a failed read is logged and the turn goes on without them), and
  the persona files become its instructions (:mod:`.persona`). Unless the chat keeps its
  session, each turn starts a new agent session: nothing of the conversation is kept but
  Discord itself and the run logs;
- **a stranger's turn** (someone who is not an owner, where the chat lets them talk) is a
  restricted job (:mod:`discord_mcp.runs.restricted`); their message never steers an owner's
  turn, and an owner's turn that a stranger's message joins becomes restricted. Their files
  are kept in the chat's own folder (:mod:`.attachments`), never among the owner's.

A heartbeat (a schedule aimed at the chat channel) is a turn with a fixed prompt and no message:
it is skipped while a turn waits, and what its agent does not send is never posted.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from discord_mcp.chat.said import MARK_VARIABLE, mark_path
from discord_mcp.config import Settings
from discord_mcp.errors import DiscordError, RunError, StateError
from discord_mcp.files.store import OwnerFiles
from discord_mcp.runs.contract import PreparedTurn
from discord_mcp.runs.engine.engine import RunEngine
from discord_mcp.runs.journal.views import JobView, SessionView
from discord_mcp.state.files import off_loop
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.chat import context, persona
from discord_mcp.watch.chat.attachments import strangers_files
from discord_mcp.watch.chat.channels import ChatChannel, ChatStore, default_persona_dir
from discord_mcp.watch.chat.routing import holds_role, speaker

log = logging.getLogger(__name__)

HEARTBEAT_PREFIX = "heartbeat-"
"""The message id of a heartbeat turn (it answers no message)."""
ROLES_FOR_S = 60.0
"""A member's roles are asked of Discord again after this long."""


def is_heartbeat(message_id: str) -> bool:
    return message_id.startswith(HEARTBEAT_PREFIX)


def heartbeat_marker(schedule_id: str) -> str:
    return f"[heartbeat {schedule_id}]"


class ChatDesk:
    """The daemon's chat channels. ``engine`` is set once the engine exists (the engine asks
    the desk to compose turns, the desk submits to the engine)."""

    def __init__(
        self,
        *,
        settings: Settings,
        rest: RestClient,
        store: ChatStore | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.rest = rest
        self.store = store or ChatStore(settings.home)
        self.engine: RunEngine | None = None
        self._wall = wall
        self._files = OwnerFiles(settings.home)
        self._chats: dict[str, ChatChannel] = {}
        self._names: dict[str, str] = {}
        self._guilds: dict[str, str] = {}
        self._roles: dict[tuple[str, str], tuple[float, bool]] = {}
        self._bot_id: str | None = None

    # ---- settings ---------------------------------------------------------------------------

    async def refresh(self) -> dict[str, ChatChannel]:
        """Read the chat channels again (the command line may have changed them); a chat that
        was removed has its session closed, so nothing of it runs on."""
        try:
            chats = {c.channel_id: c for c in await off_loop(self.store.list)}
        except StateError as exc:
            log.warning("reading the chat channels failed (keeping the last known): %s", exc)
            return dict(self._chats)
        gone = set(self._chats) - set(chats)
        self._chats = chats
        for channel_id in gone:
            await self._close(channel_id)
        return dict(chats)

    def chat(self, channel_id: str) -> ChatChannel | None:
        return self._chats.get(str(channel_id))

    def handles(self, channel_id: str) -> bool:
        return str(channel_id) in self._chats

    def channels(self) -> list[ChatChannel]:
        return list(self._chats.values())

    async def _close(self, channel_id: str) -> None:
        engine = self.engine
        session = engine.session(channel_id) if engine is not None else None
        if engine is None or session is None or session.closed:
            return
        try:
            await engine.cancel(channel_id)
            if session.running_job_id is None:
                await engine.close_session(channel_id)
        except RunError as exc:
            log.info("closing the session of chat %s: %s", channel_id, exc)

    # ---- messages ---------------------------------------------------------------------------

    async def on_message(self, message: dict[str, Any]) -> JobView | None:
        """A message in a chat channel: a turn, or a part of the next one (or nothing).

        Raises:
            RunError: the engine refused it (the daemon replies with the code).
        """
        channel_id = str(message.get("channel_id") or "")
        # The command line may have changed the chat since the last look (``chat add --tool``):
        # a turn runs as the file says now, never as it said before.
        chat = (await self.refresh()).get(channel_id)
        if chat is None or self.engine is None:
            return None
        who = speaker(message, chat, owners=self.settings.owner_ids)
        author = message.get("author") or {}
        if who == "ask_roles":
            allowed = await self._holds_role(channel_id, str(author.get("id")), chat)
            who = "stranger" if allowed else "ignore"
        if who == "ignore":
            return None
        owner = who == "owner"
        # A stranger's files are kept in the chat's own folder, never among the owner's.
        keeper = self._files if owner else strangers_files(self.settings.home, channel_id)
        files = await keeper.keep(message)
        block = context.message_block(
            message, bot_id=await self.bot_id(), owners=self.settings.owner_ids, files=files
        )
        await self._session(chat)
        return await self.engine.submit(
            channel_id,
            str(message["id"]),
            block,
            context.author_name(author),
            files,
            busy="steer",
            merge=True,
            restricted=not owner,
        )

    async def _session(self, chat: ChatChannel) -> SessionView:
        """The chat's engine session, made or brought in line with the chat's settings."""
        engine = self.engine
        assert engine is not None
        session = engine.session(chat.channel_id)
        if session is not None and session.project_name != chat.project_name:
            # A conversation stays in the folder it began in (its sessions and run folder are
            # there): say so rather than run it somewhere the owner did not choose.
            raise RunError(
                "E_SESSION_EXISTS",
                f"this channel's conversation began in {_where(session.project_name)} and "
                f"cannot move to {_where(chat.project_name)}: add the chat again as it was, or "
                "use another channel",
            )
        if session is None:
            return await engine.start_session(chat.channel_id, chat.project_name, chat.tool)
        if session.closed:
            await engine.reopen_session(chat.channel_id)
        if session.tool != chat.tool:
            await engine.set_tool(chat.channel_id, chat.tool)
        view = engine.session(chat.channel_id)
        assert view is not None
        return view

    async def _holds_role(self, channel_id: str, user_id: str, chat: ChatChannel) -> bool:
        """Whether ``user_id`` holds one of the chat's roles (asked of Discord; any failure
        is a no)."""
        roles = chat.who if isinstance(chat.who, tuple) else ()
        key = (channel_id, user_id)
        kept = self._roles.get(key)
        now = time.monotonic()
        if kept is not None and now - kept[0] < ROLES_FOR_S:
            return kept[1]
        try:
            guild = await self._guild(channel_id)
            member = await self.rest.get_guild_member(guild, user_id)
            allowed = holds_role(member, roles)
        except (DiscordError, KeyError, TypeError) as exc:
            log.info(
                "could not tell whether %s holds a role of chat %s: %s", user_id, channel_id, exc
            )
            return False
        self._roles[key] = (now, allowed)
        return allowed

    async def _guild(self, channel_id: str) -> str:
        if channel_id not in self._guilds:
            await self._describe(channel_id)
        return self._guilds[channel_id]

    async def _describe(self, channel_id: str) -> None:
        channel = await self.rest.get_channel(channel_id)
        self._names[channel_id] = str(channel.get("name") or channel_id)
        self._guilds[channel_id] = str(channel.get("guild_id") or "")

    async def bot_id(self) -> str | None:
        if self._bot_id is None:
            try:
                self._bot_id = str((await self.rest.get_current_user())["id"])
            except (DiscordError, KeyError) as exc:
                log.warning("could not learn the bot's own id: %s", exc)
        return self._bot_id

    # ---- heartbeats -------------------------------------------------------------------------

    async def heartbeat(self, channel_id: str, schedule_id: str, now: float) -> JobView | None:
        """Start a heartbeat turn (None: skipped, a turn is waiting already).

        Raises:
            RunError: E_CHAT_NOT_FOUND (not a chat channel any more), or the engine's refusal.
        """
        await self.refresh()
        chat = self._chats.get(channel_id)
        if chat is None or self.engine is None:
            raise RunError(
                "E_CHAT_NOT_FOUND",
                f"{channel_id} is no longer a chat channel: remove the schedule, or add the chat",
            )
        session = await self._session(chat)
        if session.pending:
            log.info("heartbeat %s skipped: chat %s has a turn waiting", schedule_id, channel_id)
            return None
        return await self.engine.submit(
            channel_id,
            f"{HEARTBEAT_PREFIX}{schedule_id}-{int(now * 1000)}",
            heartbeat_marker(schedule_id),
            f"schedule {schedule_id}",
            busy="queue",
            restricted=chat.open_to_others,  # the history it reads holds others' words
        )

    # ---- composing turns (the engine's TurnPreparer) ----------------------------------------

    def prepares(self, thread_id: str) -> bool:
        return thread_id in self._chats

    def fresh(self, thread_id: str) -> bool:
        chat = self._chats.get(thread_id)
        return chat is None or not chat.keep_session

    async def prepare(self, job: JobView, session: SessionView) -> PreparedTurn:
        channel_id = session.thread_id
        chat = self._chats.get(channel_id)
        if chat is None:
            raise RunError("E_CHAT_NOT_FOUND", f"{channel_id} is no longer a chat channel")
        if channel_id not in self._names:
            try:
                await self._describe(channel_id)
            except DiscordError as exc:
                log.warning("could not read chat channel %s's name: %s", channel_id, exc)
                self._names[channel_id] = channel_id
        ids = job.message_ids or (job.message_id,)
        answered = [m for m in ids if not is_heartbeat(m)]
        history, failed = await self._history(chat, answered)
        messages = _without_markers(job.prompt)
        prompt = context.compose(
            channel_name=self._names.get(channel_id, channel_id),
            channel_id=channel_id,
            history=history,
            history_wanted=chat.history,
            history_failed=failed,
            new_messages=messages or None,
        )
        if len(answered) < len(ids):
            prompt = f"{prompt}\n\n{persona.HEARTBEAT_PROMPT}"
        instructions = await off_loop(persona.instructions, chat.persona_dir(self.settings.home))
        mark = mark_path(self.settings.home, channel_id)
        return PreparedTurn(
            prompt=prompt,
            instructions=instructions,
            mcp_env={MARK_VARIABLE: str(mark)},
            own_folder=default_persona_dir(self.settings.home, channel_id),
        )

    async def _history(self, chat: ChatChannel, answered: list[str]) -> tuple[list[str], bool]:
        """The chat's last ``history`` messages before the newest one the turn answers (those
        it answers left out), as blocks, oldest first; and whether the read failed."""
        if chat.history <= 0:
            return [], False
        numeric = [m for m in answered if m.isdigit()]
        newest = max(numeric, key=int) if numeric else None
        try:
            page = await self.rest.list_messages(
                chat.channel_id, before=newest, limit=min(100, chat.history + len(numeric))
            )
        except DiscordError as exc:
            log.warning(
                "reading the history of chat %s failed; the turn goes on without it: %s",
                chat.channel_id,
                exc,
            )
            return [], True
        skip = set(numeric)
        shown = [
            m
            for m in sorted(page, key=lambda m: int(m["id"]))
            if str(m["id"]) not in skip and m.get("type", 0) in (0, 19)
        ][-chat.history :]
        bot = await self.bot_id()
        return [
            context.message_block(m, bot_id=bot, owners=self.settings.owner_ids, new=False)
            for m in shown
        ], False

    def mark(self, channel_id: str) -> Path:
        return mark_path(self.settings.home, channel_id)

    def names(self) -> Mapping[str, str]:
        return dict(self._names)


def _where(project: str) -> str:
    return "its own folder" if project.startswith("chat-") else f"project {project!r}"


def _without_markers(prompt: str) -> str:
    kept = [
        line
        for line in prompt.split("\n\n")
        if not (line.startswith("[heartbeat ") and line.endswith("]"))
    ]
    return "\n\n".join(kept).strip()


async def wait_refreshed(desk: ChatDesk, every: float) -> None:
    """Read the chat channels again every ``every`` seconds (the command line's changes)."""
    while True:
        await desk.refresh()
        await asyncio.sleep(every)
