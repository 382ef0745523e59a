"""Putting the daemon together: REST, decisions, the run engine, the gateway link, the display."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, TextIO

from discord_mcp.approvals.acp import AcpPermissions
from discord_mcp.config import Settings, watch_roots
from discord_mcp.decisions.reminders import ReminderSender
from discord_mcp.decisions.service import DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DiscordError, StateError
from discord_mcp.outbound.sending import SendRedaction
from discord_mcp.relay.fswatch import FileChanges
from discord_mcp.relay.link import LiveLink
from discord_mcp.runs import Clock, RunLimits, SystemClock, Tool
from discord_mcp.runs.adapters.base import McpRegistration
from discord_mcp.runs.engine.engine import RunEngine
from discord_mcp.runs.engine.launch import write_private
from discord_mcp.runs.engine.schedules import ScheduleStore
from discord_mcp.runs.processes.spawner import Spawner
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.state.files import ensure_dir
from discord_mcp.tasks import Background
from discord_mcp.team.desk import FIRST_READ_WITHIN_S, TeamDesk
from discord_mcp.team.presence import Presence
from discord_mcp.team.roster import Roster
from discord_mcp.team.signing import RecordKey
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.shared_ledger import shared_limiter
from discord_mcp.watch.chat.channels import ChatProjects
from discord_mcp.watch.chat.desk import ChatDesk
from discord_mcp.watch.chat.notifier import ChatNotifier
from discord_mcp.watch.control import Controls, Dispatcher
from discord_mcp.watch.control.machines import ControlHoldings, describer
from discord_mcp.watch.control.registration import register
from discord_mcp.watch.daemon import Watcher
from discord_mcp.watch.display import render_status
from discord_mcp.watch.downtime import Downtime
from discord_mcp.watch.heartbeat import TICK_S, Heartbeats
from discord_mcp.watch.landing.desk import LandingDesk
from discord_mcp.watch.notifier import DiscordNotifier
from discord_mcp.watch.options import watch_options
from discord_mcp.watch.outbox import Delivery
from discord_mcp.watch.requests import ShellRequests
from discord_mcp.watch.resumes import LateAnswers
from discord_mcp.watch.run_desk import calls_not_run
from discord_mcp.watch.upkeep import check_policy, upkeep
from discord_mcp.watch.waiting import owner_wait

log = logging.getLogger(__name__)

DISPLAY_EVERY_S = 2.0
"""How often the terminal's status display is redrawn (only with a terminal to draw on)."""


def server_env_file(settings: Settings) -> Path:
    """The private file (0600) that hands the bot token to each run's discord-mcp server."""
    return settings.home / "runs" / "server.env"


def write_server_env_file(settings: Settings) -> Path:
    """(Re)write :func:`server_env_file` with the token this daemon uses."""
    path = server_env_file(settings)
    token = settings.token.reveal().replace("\\", "\\\\").replace('"', '\\"')
    write_private(
        path,
        "# Written by discord-watch for the discord-mcp server of each run; do not share.\n"
        f'DISCORD_BOT_TOKEN="{token}"\n'
        # Its cards are this machine's, whoever reads this file (a run's hooks too).
        f"DISCORD_MCP_MACHINE={settings.machine}\n",
    )
    return path


def server_environment(settings: Settings) -> dict[str, str]:
    """What each run's discord-mcp needs: this daemon's Discord settings; it follows our gateway,
    and a late answer to its questions, or a late Allow of its approvals, resumes the run
    (``DISCORD_MCP_RUN``).

    The token is not among them: it is in :func:`server_env_file`, named by
    ``DISCORD_MCP_ENV_FILE`` (some CLIs pass the server's variables through their own
    environment, which the agent can print). ``DISCORD_THREAD_ID`` is added per run by the
    engine.
    """
    env = {
        "DISCORD_MCP_ENV_FILE": str(server_env_file(settings)),
        "DISCORD_CHANNEL_ID": settings.channel_id,
        "DISCORD_OWNER_IDS": ",".join(sorted(settings.owner_ids)),
        "DISCORD_MCP_HOME": str(settings.home),
        "DISCORD_API_BASE": settings.api_base,
        "POLL_INTERVAL_SECONDS": str(settings.poll_interval),
        "DISCORD_MCP_GATEWAY": "follow",
        # A run's agent is headless: when the daemon itself runs in tmux, its pane is not the
        # agent's, so the run's server must neither retitle it nor type into it.
        "TMUX_PANE": "",
        "DISCORD_MCP_RUN": "1",
        "DISCORD_MCP_APPROVAL_WAIT_SECONDS": f"{settings.approval_wait_seconds:g}",
        "DISCORD_MCP_MACHINE": settings.machine,  # its cards are this machine's
    }
    if settings.gateway_url:
        env["DISCORD_GATEWAY_URL"] = settings.gateway_url
    return env


def cli_environment(environ: Mapping[str, str], settings: Settings) -> dict[str, str]:
    """The base environment of every agent CLI: ours, less the token (by name or by value),
    with this machine's name (the approval cards of its hooks are this machine's)."""
    token = settings.token.reveal()
    base = {
        name: value
        for name, value in environ.items()
        if name != "DISCORD_BOT_TOKEN" and not (token and token in value)
    }
    base["DISCORD_MCP_MACHINE"] = settings.machine  # its hooks' cards are this machine's
    return base


async def run_daemon(
    settings: Settings,
    *,
    environ: Mapping[str, str] | None = None,
    spawner: Spawner | None = None,
    display: TextIO | None = None,
    tool_env: Mapping[Tool, Mapping[str, str]] | None = None,
    limits: RunLimits | None = None,
    clock: Clock | None = None,
    schedule_tick: float = TICK_S,
    stopping: Callable[[], str] | None = None,
) -> None:
    """Run ``discord-watch`` until cancelled (Ctrl-C, SIGTERM).

    Args:
        environ: the environment (project roots, the daemon's options, and the base
            environment of every agent CLI).
        spawner: how agent CLIs are started (tests pass a fake).
        display: where to draw the live status (a terminal), if anywhere.
        tool_env: extra environment per CLI (tests point the CLIs at a scripted model).
        limits: the run engine's limits (default: its own, with the configured debounce).
        clock: the run engine's clock, whose wall time also drives schedules and the downtime
            notice (tests inject one).
        schedule_tick: the longest the schedule runner sleeps between looks.
        stopping: why the daemon stops, asked when it does (an ACP turn that ends with it
            says so in its thread; default: "discord-watch stopped").
    """
    ensure_dir(settings.home)
    options = watch_options(environ)
    env = os.environ if environ is None else environ
    check_policy(env)
    clock = clock or SystemClock()
    downtime = Downtime(settings.home, wall=clock.time, machine=settings.machine)
    projects = ProjectRegistry(
        settings.home,
        allowed_roots=watch_roots(environ),
        environ=os.environ if environ is None else environ,
    )
    await asyncio.to_thread(write_server_env_file, settings)
    holder: dict[str, LiveLink] = {}
    links: list[Controls] = []  # the controls, once made (a run folder's thread link)
    limiter = shared_limiter(settings.home, settings.token)
    async with (
        RestClient(
            settings.token,
            api_base=settings.api_base,
            limiter=limiter,
            outbound=SendRedaction([settings.token.reveal()]),
        ) as rest,
        Background() as background,
        FileChanges() as changes,
    ):
        decisions = DecisionService(
            settings=settings,
            rest=rest,
            store=DecisionStore(settings.home),
            background=background,
            live=lambda: "link" in holder and holder["link"].is_live(),
            watch_all=True,
            changes=changes,
        )
        desk = ChatDesk(settings=settings, rest=rest, wall=clock.time)
        projects.implicit = ChatProjects(desk.store)
        await desk.refresh()
        threads = DiscordNotifier(
            rest,
            home=settings.home,
            owners=settings.owner_ids,
            mention=options.mention,
            language=settings.language,
        )
        notifier = ChatNotifier(threads, desk, rest)
        engine = RunEngine(
            state_dir=settings.home,
            projects=projects,
            notifier=notifier,
            limits=limits or RunLimits(debounce=options.debounce, agent_silence=options.acp_idle),
            clock=clock,
            spawner=spawner,
            mcp=McpRegistration(
                argv=[sys.executable, "-m", "discord_mcp"], env=server_environment(settings)
            ),
            env=cli_environment(os.environ if environ is None else environ, settings),
            tool_env=tool_env,
            owner_wait=owner_wait(DecisionStore(settings.home), time.time),
            thread_url=lambda thread_id: links[0].link(thread_id) if links else None,
            not_run=calls_not_run(DecisionStore(settings.home)),
            permissions=AcpPermissions(settings=settings, decisions=decisions, rest=rest),
            preparer=desk,
            stopping=stopping,
        )
        desk.engine = engine
        threads.outbox.on_done = answered_in(engine)
        async with engine:
            controls = Controls(
                settings=settings,
                rest=rest,
                engine=engine,
                decisions=DecisionStore(settings.home),
                schedules=ScheduleStore(settings.home),
                wall=clock.time,
                chat=desk,
            )
            links.append(controls)  # run folders link to their threads
            late = LateAnswers(store=decisions.store, engine=engine, rest=rest)
            decisions.on_change = late.poke
            roster = Roster(settings.machine)
            presence = Presence(
                rest=rest,
                channel_id=settings.channel_id,
                roster=roster,
                key=RecordKey(settings.token),
                describe=describer(controls, lambda: "link" in holder and holder["link"].is_live()),
                home=settings.home,
                sharers=limiter.share_with,
            )
            controls.team = team = TeamDesk(
                roster=roster,
                presence=presence,
                holdings=ControlHoldings(controls),
                rest=rest,
                main_channel=settings.channel_id,
            )
            watcher = Watcher(
                settings=settings,
                rest=rest,
                engine=engine,
                decisions=decisions,
                link=None,
                commands=Dispatcher(controls),
                chat=desk,
                team=team,
            )
            controls.chats_changed = watcher.catch_up_soon
            controls.watch_thread = watcher.watch_thread
            landing = LandingDesk(
                engine,
                settings.home,
                rest=rest,
                machine=settings.machine,
                owners=frozenset(settings.owner_ids),
                secrets=(settings.token.reveal(),),
            )
            watcher.landing = landing
            threads.after_final = landing.after_final
            heartbeats = Heartbeats(controls, tick=schedule_tick)
            controls.schedules_changed = heartbeats.wake
            if settings.gateway != "off":
                holder["link"] = watcher.link = LiveLink(
                    settings=settings,
                    rest=rest,
                    handler=watcher,
                    program="discord-watch",
                    preferred=True,
                    changes=changes,
                    on_overflow=watcher.catch_up_soon,
                )
            log.info(
                "discord-watch running on %s: channel %s, state %s, history read every %gs "
                "when nothing arrives live",
                settings.machine,
                settings.channel_id,
                settings.home,
                settings.poll_interval,
            )
            try:
                async with asyncio.TaskGroup() as group:
                    group.create_task(presence.run(), name="presence")
                    # Who answers what depends on the other machines: know them before answering.
                    group.create_task(watcher.run(first=lambda: _after(presence)), name="watch")
                    group.create_task(decisions.recover(all_projects=True), name="recover")
                    group.create_task(
                        ReminderSender(
                            home=settings.home,
                            rest=rest,
                            store=DecisionStore(settings.home),
                            channel_id=settings.channel_id,
                            owner_ids=settings.owner_ids,
                            policy=settings.reminders,
                            language=settings.language,
                        ).run(),
                        name="reminders",
                    )
                    group.create_task(late.run(), name="late-answers")
                    if "link" in holder:
                        group.create_task(_after(presence, holder["link"].run), name="gateway")
                    if display is not None:
                        group.create_task(_display(settings, display), name="display")
                    if "link" in holder:
                        group.create_task(
                            _register_commands(rest, controls, options.commands_for),
                            name="commands",
                        )
                    group.create_task(heartbeats.run(), name="schedules")
                    group.create_task(
                        ShellRequests(
                            engine, settings.home, controls=controls, landing=landing
                        ).run(),
                        name="shell-requests",
                    )
                    group.create_task(downtime.beat(), name="alive")
                    group.create_task(
                        upkeep(settings.home, env, ready=watcher.caught_up, wall=clock.time),
                        name="upkeep",
                    )
                    group.create_task(
                        _after_catch_up(watcher, threads, engine, downtime, controls),
                        name="downtime",
                    )
            finally:
                await engine.end_piped_turns()  # their threads told why, before the notifier closes
                await threads.aclose()  # its typing indicators, before the REST client closes
                await landing.aclose()


def answered_in(engine: RunEngine) -> Callable[[Delivery], Awaitable[None]]:
    """What the outbox tells once a job's answer was posted: its run's ``result.json`` says
    where (:meth:`~discord_mcp.runs.folders.recorder.RunRecorder.answer_posted`)."""

    async def tell(delivery: Delivery) -> None:
        if not delivery.run_id or not delivery.job_id:
            return
        if not any(step.op == "post" for step in delivery.steps):
            return  # a status message's removal, not an answer
        engine.recorder.answer_posted(
            delivery.run_id,
            delivery.job_id,
            {
                "state": delivery.state,
                "channel_id": delivery.channel_id,
                "message_ids": delivery.posted,
                "error": delivery.error,
            },
        )

    return tell


async def _after(
    presence: Presence, work: Callable[[], Coroutine[Any, Any, None]] | None = None
) -> None:
    """Run ``work()`` once the presence thread was read (or after :data:`FIRST_READ_WITHIN_S`:
    the machine then answers as if alone until it knows better). ``work`` is made only then,
    so a shutdown during the wait leaves no coroutine that was never awaited."""
    try:
        async with asyncio.timeout(FIRST_READ_WITHIN_S):
            await presence.read_once.wait()
    except TimeoutError:
        log.warning("the other machines' presence could not be read yet; going on")
    if work is not None:
        await work()


async def _register_commands(rest: RestClient, controls: Controls, visible_to: str) -> None:
    """The slash commands, registered for the channel's guild (text commands work regardless)."""
    try:
        registered = await register(rest, controls.settings.channel_id, visible_to=visible_to)
    except (DiscordError, KeyError, TypeError) as exc:
        log.warning(
            "registering the slash commands failed (%s); the ! text commands still work", exc
        )
        return
    controls.guild_id = registered.guild_id


async def _after_catch_up(
    watcher: Watcher,
    notifier: DiscordNotifier,
    engine: RunEngine,
    downtime: Downtime,
    controls: Controls,
) -> None:
    """Once the first catch-up is done: stale status messages, and the downtime notice."""
    await watcher.caught_up.wait()
    try:
        await notifier.sweep(engine.job)
    except (DiscordError, StateError) as exc:
        log.warning("marking old status messages final failed: %s", exc)
    await downtime.announce(controls.rest, controls.settings.channel_id, watcher.caught_up_messages)


async def _display(settings: Settings, out: TextIO) -> None:
    while True:
        text = await asyncio.to_thread(render_status, settings.home)
        out.write("\x1b[2J\x1b[H" + text + "\n")
        out.flush()
        await asyncio.sleep(DISPLAY_EVERY_S)
