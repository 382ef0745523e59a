"""Putting the daemon together: REST, decisions, the run engine, the gateway link, the display."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Mapping
from typing import TextIO

from discord_mcp.config import Settings, watch_roots
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.relay.link import LiveLink
from discord_mcp.runs import Tool
from discord_mcp.runs.adapters.base import McpRegistration
from discord_mcp.runs.engine import RunEngine
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.runs.spawner import Spawner
from discord_mcp.state.files import ensure_dir
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.daemon import Watcher
from discord_mcp.watch.display import render_status
from discord_mcp.watch.notifier import DiscordNotifier
from discord_mcp.watch.resumes import LateAllows

log = logging.getLogger(__name__)

DISPLAY_EVERY_S = 2.0


def server_environment(settings: Settings) -> dict[str, str]:
    """What each run's discord-mcp needs: this daemon's Discord settings; it follows our gateway,
    and a late Allow of its approvals resumes the run (``DISCORD_MCP_RUN``).

    ``DISCORD_THREAD_ID`` is added per run by the engine.
    """
    env = {
        "DISCORD_BOT_TOKEN": settings.token.reveal(),
        "DISCORD_CHANNEL_ID": settings.channel_id,
        "DISCORD_OWNER_IDS": ",".join(sorted(settings.owner_ids)),
        "DISCORD_MCP_HOME": str(settings.home),
        "DISCORD_API_BASE": settings.api_base,
        "POLL_INTERVAL_SECONDS": str(settings.poll_interval),
        "DISCORD_MCP_GATEWAY": "follow",
        "DISCORD_MCP_RUN": "1",
        "DISCORD_MCP_APPROVAL_WAIT_SECONDS": f"{settings.approval_wait_seconds:g}",
    }
    if settings.gateway_url:
        env["DISCORD_GATEWAY_URL"] = settings.gateway_url
    return env


async def run_daemon(
    settings: Settings,
    *,
    environ: Mapping[str, str] | None = None,
    spawner: Spawner | None = None,
    display: TextIO | None = None,
    tool_env: Mapping[Tool, Mapping[str, str]] | None = None,
) -> None:
    """Run ``discord-watch`` until cancelled (Ctrl-C, SIGTERM).

    Args:
        environ: the environment (project roots; the base environment of every agent CLI).
        spawner: how agent CLIs are started (tests pass a fake).
        display: where to draw the live status (a terminal), if anywhere.
        tool_env: extra environment per CLI (tests point the CLIs at a scripted model).
    """
    ensure_dir(settings.home)
    projects = ProjectRegistry(settings.home, allowed_roots=watch_roots(environ))
    holder: dict[str, LiveLink] = {}
    async with (
        RestClient(settings.token, api_base=settings.api_base) as rest,
        Background() as background,
    ):
        decisions = DecisionService(
            settings=settings,
            rest=rest,
            store=DecisionStore(settings.home),
            background=background,
            live=lambda: "link" in holder and holder["link"].is_live(),
            watch_all=True,
        )
        engine = RunEngine(
            state_dir=settings.home,
            projects=projects,
            notifier=DiscordNotifier(rest, store=DecisionStore(settings.home)),
            spawner=spawner,
            mcp=McpRegistration(
                argv=[sys.executable, "-m", "discord_mcp"], env=server_environment(settings)
            ),
            env=environ,
            tool_env=tool_env,
        )
        async with engine:
            watcher = Watcher(
                settings=settings, rest=rest, engine=engine, decisions=decisions, link=None
            )
            late = LateAllows(store=decisions.store, engine=engine, rest=rest)
            decisions.on_change = late.poke
            if settings.gateway != "off":
                holder["link"] = watcher.link = LiveLink(
                    settings=settings,
                    rest=rest,
                    handler=watcher,
                    program="discord-watch",
                    preferred=True,
                )
            log.info(
                "discord-watch running: channel %s, state %s", settings.channel_id, settings.home
            )
            async with asyncio.TaskGroup() as group:
                group.create_task(watcher.run(), name="watch")
                group.create_task(decisions.recover(all_projects=True), name="recover")
                group.create_task(late.run(), name="late-allows")
                if "link" in holder:
                    group.create_task(holder["link"].run(), name="gateway")
                if display is not None:
                    group.create_task(_display(settings, display), name="display")


async def _display(settings: Settings, out: TextIO) -> None:
    while True:
        text = await asyncio.to_thread(render_status, settings.home)
        out.write("\x1b[2J\x1b[H" + text + "\n")
        out.flush()
        await asyncio.sleep(DISPLAY_EVERY_S)
