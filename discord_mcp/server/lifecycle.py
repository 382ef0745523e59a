"""What a server does besides answering tool calls: its runtime, built on first use, and the
work it starts after the handshake (recovery of open decisions, the gateway and reminders, the
owner's messages pushed to a Claude Code channel), stopped when the server stops.

:mod:`discord_mcp.server.app` hands :meth:`Lifecycle.lifespan` to the framework and lets
:meth:`Lifecycle.first_request` know of the first request; nothing here imports the framework.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel

from discord_mcp.config import Settings
from discord_mcp.errors import DiscordMCPError, Unauthorized
from discord_mcp.server.toolkit import session_label
from discord_mcp.tasks import cancel_and_wait

if TYPE_CHECKING:
    from discord_mcp.server.runtime import Runtime

log = logging.getLogger(__name__)

RECOVERY_DELAY_S = 1.0
"""Recovery waits this long after the first request, so it never slows the handshake."""


class _Notification(BaseModel):
    """A notification the MCP types do not know (``notifications/claude/channel``)."""

    method: str
    params: dict[str, Any]


class Lifecycle:
    """One server's runtime and background work.

    Args:
        env: the environment client hints are read from.
        channel: channel mode: push the owner's messages for this session into a Claude Code
            client (:mod:`discord_mcp.chat.push`).
    """

    def __init__(self, settings: Settings, env: Mapping[str, str], *, channel: bool) -> None:
        self.settings = settings
        self.env = env
        self.channel = channel
        self.first_request = asyncio.Event()
        """Set by the first request: background recovery may start."""
        self.peer: dict[str, Any] = {"known": asyncio.Event()}
        """The client's connection (``session``) and name (``client``), once ``known``."""
        self._runtime: Runtime | None = None

    def runtime(self) -> Runtime:
        """The server's working parts (:mod:`.runtime`), built on first use."""
        if self._runtime is None:
            from discord_mcp.server.runtime import Runtime

            self._runtime = Runtime(self.settings, environ=self.env)
        return self._runtime

    async def _recover(self) -> None:
        try:
            found = await self.runtime().service.recover()
        except Unauthorized as exc:
            log.error("%s", exc)
            return
        except DiscordMCPError as exc:
            log.warning("recovery of open decisions failed: %s", exc)
            return
        answered = [d.id for d in found if d.status == "answered"]
        if answered:
            log.info("found answers given while no server ran: %s", ", ".join(answered))

    async def _background_work(self) -> None:
        await self.first_request.wait()
        await asyncio.sleep(RECOVERY_DELAY_S)
        await self._recover()
        await self.runtime().run_background()

    async def _channel_push(self) -> None:
        from discord_mcp.chat.push import ChannelPush, is_claude_code

        await self.peer["known"].wait()
        session = self.peer.get("session")
        client = self.peer.get("client")
        if session is None or not is_claude_code(client):
            log.info("channel mode, but the client (%s) is not Claude Code", client)
            return  # only Claude Code has channels

        async def send(method: str, params: dict[str, Any]) -> None:
            # Not tied to a request: it goes out on the connection's own stream.
            await session.send_notification(cast(Any, _Notification(method=method, params=params)))

        await ChannelPush(self.settings, session_label(self.env, client), send).run()

    @contextlib.asynccontextmanager
    async def lifespan(self, _server: Any) -> AsyncIterator[dict[str, Any]]:
        """The background work while the server runs; the runtime closed after."""
        tasks = []
        if self.settings.tools != "chat":  # a stranger's turn has no decisions, no reminders
            tasks.append(
                asyncio.create_task(self._background_work(), name="recovery-gateway-reminders")
            )
        if self.channel:
            tasks.append(asyncio.create_task(self._channel_push(), name="channel-push"))
        try:
            yield {}
        finally:
            for task in tasks:
                await cancel_and_wait(task, within=10)
            if self._runtime is not None:
                await self._runtime.aclose()
