"""The server's working parts, built on first use so the MCP handshake never waits for them.

Importing httpx and the decision machinery costs more than the whole FastMCP handshake, so the
server module imports this one only when a tool is first called or when recovery starts in the
background after the handshake. Nothing here touches the network when constructed.
"""

from __future__ import annotations

import logging

from discord_mcp.approvals.service import ApprovalService
from discord_mcp.config import Settings
from discord_mcp.decisions.live import DecisionEvents
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.progress import ProgressBoard
from discord_mcp.relay.link import LiveLink
from discord_mcp.state.files import ensure_dir
from discord_mcp.state.leases import ProcessLease
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)


class Runtime:
    """REST client, decision store and service, approvals, and the gateway link, for one process."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        ensure_dir(settings.home)
        self.lease = ProcessLease(settings.home)
        self.store = DecisionStore(settings.home)
        self.background = Background()
        self.rest = RestClient(settings.token, api_base=settings.api_base)
        self.link: LiveLink | None = None
        self.service = DecisionService(
            settings=settings,
            rest=self.rest,
            store=self.store,
            background=self.background,
            live=lambda: self.link is not None and self.link.is_live(),
            lease=self.lease.name,
        )
        self.approvals = ApprovalService(
            settings=settings,
            decisions=self.service,
            rest=self.rest,
            lease=self.lease.name,
            resume=settings.in_run,
        )
        self.progress = ProgressBoard(settings, self.rest)
        if settings.gateway != "off":
            self.link = LiveLink(
                settings=settings,
                rest=self.rest,
                handler=DecisionEvents(self.service, self.rest),
                program="discord-mcp",
                may_hold=settings.gateway == "auto",
            )

    async def run_link(self) -> None:
        """Hold or follow the machine's gateway until cancelled (nothing if it is off)."""
        if self.link is not None:
            await self.link.run()

    async def aclose(self) -> None:
        """Finish background work (bounded) and close connections."""
        await self.background.drain()
        await self.rest.aclose()
        self.lease.close()
