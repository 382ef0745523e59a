"""The server's working parts, built on first use so the MCP handshake never waits for them.

Importing httpx and the decision machinery costs more than the whole FastMCP handshake, so the
server module imports this one only when a tool is first called or when recovery starts in the
background after the handshake. Nothing here touches the network when constructed.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Coroutine, Mapping
from typing import Any

from discord_mcp.approvals.service import ApprovalService
from discord_mcp.config import Settings
from discord_mcp.decisions.answer_files import answer_files
from discord_mcp.decisions.live import DecisionEvents
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.reminders import ReminderSender
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import StateError
from discord_mcp.files.store import OwnerFiles
from discord_mcp.outbound.scope import Scope
from discord_mcp.outbound.sending import SendRedaction
from discord_mcp.progress import ProgressBoard
from discord_mcp.relay.fswatch import FileChanges
from discord_mcp.relay.interest import Interests
from discord_mcp.relay.link import LiveLink
from discord_mcp.server import results
from discord_mcp.server.tmux import PaneWatcher, pane_from
from discord_mcp.state.files import ensure_dir, off_loop, sweep_and_say
from discord_mcp.state.leases import ProcessLease
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.shared_ledger import shared_limiter

log = logging.getLogger(__name__)


class Runtime:
    """REST client, decision store and service, approvals, the gateway link, reminders and the
    tmux pane, for one server process.

    Args:
        environ: the process's environment (``TMUX``, ``TMUX_PANE``); default ``os.environ``.
    """

    def __init__(self, settings: Settings, *, environ: Mapping[str, str] | None = None) -> None:
        self.settings = settings
        ensure_dir(settings.home)
        self.lease = ProcessLease(settings.home)
        self.store = DecisionStore(settings.home)
        self.background = Background()
        self.rest = RestClient(
            settings.token,
            api_base=settings.api_base,
            limiter=shared_limiter(settings.home, settings.token),
            outbound=SendRedaction([settings.token.reveal()]),
        )
        self.scope = Scope(settings, self.rest)
        """Where the agent may post, react and read (its project's channel and threads)."""
        self.changes = FileChanges()
        self.link: LiveLink | None = None
        # Which threads' live events this process wants from another process's gateway.
        self.interests: Interests | None = None
        if settings.gateway != "off":
            try:
                self.interests = Interests(settings.home, self.lease.name)
            except (OSError, StateError) as exc:
                log.warning("following the whole spool: no mailbox (%s)", exc)
        self.service = DecisionService(
            settings=settings,
            rest=self.rest,
            store=self.store,
            background=self.background,
            live=lambda: self.link is not None and self.link.is_live(),
            lease=self.lease.name,
            changes=self.changes,
            interests=self.interests,
        )
        self.approvals = ApprovalService(
            settings=settings,
            decisions=self.service,
            rest=self.rest,
            lease=self.lease.name,
            resume=settings.in_run,
        )
        self.progress = ProgressBoard(settings, self.rest)
        self.files = OwnerFiles(settings.home)
        self.reminders = ReminderSender(
            home=settings.home,
            rest=self.rest,
            store=self.store,
            channel_id=settings.channel_id,
            owner_ids=settings.owner_ids,
            policy=settings.reminders,
            language=settings.language,
        )
        if settings.gateway != "off":
            self.link = LiveLink(
                settings=settings,
                rest=self.rest,
                handler=DecisionEvents(self.service, self.rest),
                program="discord-mcp",
                may_hold=settings.gateway == "auto",
                changes=self.changes,
                interests=self.interests,
            )
        pane = pane_from(os.environ if environ is None else environ)
        self.pane = (
            None
            if pane is None
            else PaneWatcher(
                pane=pane,
                service=self.service,
                nudge=settings.tmux_nudge,
                poll_every=settings.poll_interval,
                live=lambda: self.link is not None and self.link.is_live(),
            )
        )

    async def decision_result(
        self, decision: Decision, *, duplicate: bool = False, away: bool = False
    ) -> dict[str, Any]:
        """The tools' result for ``decision``, the files of its answer kept locally."""
        files = await answer_files(self.files, self.rest, decision)
        return results.decision_result(decision, duplicate=duplicate, files=files, away=away)

    async def run_link(self) -> None:
        """Hold or follow the machine's gateway until cancelled (nothing if it is off)."""
        if self.link is not None:
            await self.link.run()

    def asked(self, decision_id: str) -> None:
        """This process's agent asked (or re-asked) a decision: its pane shows it waits."""
        if self.pane is not None:
            self.pane.track(decision_id)

    async def run_background(self) -> None:
        """The server's long-lived work until cancelled: the gateway link, reminders when this
        process is the state directory's reminder sender, and the tmux pane's title."""
        async with asyncio.TaskGroup() as group:
            group.create_task(self.run_link(), name="gateway")
            group.create_task(_apart(self._upkeep(), "tidying the state directory"), name="upkeep")
            group.create_task(_apart(self.reminders.run(), "reminders"), name="reminders")
            if self.pane is not None:
                group.create_task(_apart(self.pane.run(), "the tmux pane"), name="tmux-pane")

    async def _upkeep(self) -> None:
        """Once this process holds the machine's gateway (it is then the one server that
        tidies up, as ``discord-watch`` does when it runs): remove the temporary files of
        writes that never finished, and move done decisions out of the open ones."""
        if self.link is None:
            return
        await self.link.holding.wait()
        await off_loop(sweep_and_say, self.settings.home, "the gateway holder")
        moved = await self.store.asweep()
        if moved:
            log.info("moved %d done decision%s to the archive", moved, "" if moved == 1 else "s")

    async def aclose(self) -> None:
        """Finish background work (bounded) and close connections."""
        await self.background.drain()
        await self.rest.aclose()
        self.changes.close()
        if self.interests is not None:
            self.interests.close()
        self.lease.close()


async def _apart(work: Coroutine[Any, Any, None], what: str) -> None:
    """Run ``work``; if it fails, say so and stop it alone: a failure in reminders or the tmux
    pane never takes the gateway link (and so every waiting call's live answers) down with it."""
    try:
        await work
    except Exception:
        log.exception("%s stopped after an unexpected error", what)
