"""What every command handler gets and gives: the request, the reply, and the daemon's parts."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from discord_mcp.config import Settings
from discord_mcp.decisions.posting import web_base
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import RunError
from discord_mcp.runs import SessionView
from discord_mcp.runs.engine.engine import RunEngine
from discord_mcp.runs.engine.schedules import ScheduleStore
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.team.desk import TeamDesk
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.chat.desk import ChatDesk


@dataclass(frozen=True)
class Request:
    """One command as the owner gave it, by slash command or ``!`` text.

    ``channel_id`` is where it was typed (the watched channel, a thread, or for a slash
    command any channel of the guild); ``message_id`` is the text command's own message.
    """

    command: str  # "status", "project add"
    options: Mapping[str, str]
    user_id: str
    user_name: str
    channel_id: str
    via: Literal["slash", "text"]
    message_id: str | None = None
    files: tuple[Mapping[str, Any], ...] = ()  # a text command's attachments, kept locally

    def get(self, name: str) -> str | None:
        value = self.options.get(name)
        return value.strip() if isinstance(value, str) and value.strip() else None


@dataclass(frozen=True)
class Reply:
    """What the owner is told. A slash command's reply is ephemeral (only they see it) unless
    ``public``; a text command's reply answers its message, unless ``quiet_in_text`` (the
    handler already posted what the owner needs to see)."""

    text: str
    public: bool = False
    quiet_in_text: bool = False


@dataclass
class Controls:
    """The daemon's parts the handlers use.

    ``watch_thread`` makes the daemon watch a thread it just created (a new run thread);
    ``guild_id`` is known once the commands are registered (for links); ``wall`` is the
    wall clock (tests inject one); ``schedules_changed`` wakes the schedule runner; ``chat``
    is the chat desk, and ``chats_changed`` makes the daemon read the chat channels again;
    ``team``: the machines sharing the bot (None: this machine alone).
    """

    settings: Settings
    rest: RestClient
    engine: RunEngine
    decisions: DecisionStore
    schedules: ScheduleStore
    watch_thread: Callable[[str], Awaitable[None]] | None = None
    guild_id: str | None = None
    wall: Callable[[], float] = field(default=time.time)
    schedules_changed: Callable[[], None] = field(default=lambda: None)
    chat: ChatDesk | None = None
    chats_changed: Callable[[], None] = field(default=lambda: None)
    team: TeamDesk | None = None

    @property
    def projects(self) -> ProjectRegistry:
        return self.engine.projects

    def session_of(self, request: Request) -> SessionView:
        """The session the request is about: its ``session`` option, else where it was typed.

        Raises:
            RunError: E_NOT_IN_MANAGED_THREAD, E_SESSION_NOT_FOUND.
        """
        chosen = request.get("session")
        session = self.engine.session(chosen or request.channel_id)
        if session is not None:
            return session
        if chosen:
            raise RunError(
                "E_SESSION_NOT_FOUND",
                f"no session has the thread id {chosen}: pick one from the list (/session list)",
            )
        raise RunError(
            "E_NOT_IN_MANAGED_THREAD",
            "this is not a run thread: use it in one, or name the session",
        )

    def link(self, channel_id: str, message_id: str | None = None) -> str:
        """A jump link to a channel or thread (or to one of its messages)."""
        guild = self.guild_id or "@me"
        tail = f"/{message_id}" if message_id else ""
        # Discord's own page, or the emulator's when the bot talks to the emulator.
        return f"{web_base(self.settings.api_base)}/channels/{guild}/{channel_id}{tail}"


Handler = Callable[[Controls, Request], Awaitable[Reply]]
