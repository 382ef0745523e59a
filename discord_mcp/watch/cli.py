"""The ``discord-watch`` command line.

::

    discord-watch [--local] [--interval S] [run]
                                             run the daemon (Ctrl-C or SIGTERM stops it); local
                                             only (no Discord) with --local or without a token
    discord-watch status [RUN_ID] [--json]   open decisions, running and queued jobs; a run
    discord-watch project add NAME PATH --tools claude,codex,gemini --default claude
                                             [--args TOOL=JSON_ARGV ...] [--timeout 30m]
                                             [--approvals ask|ask-all|off] [--no-network]
                                             [--stream on|off] [--busy queue|interrupt|steer]
                                             [--worktrees]
    discord-watch project set NAME [--stream on|off] [--busy queue|interrupt|steer]
                                   [--worktrees on|off]
    discord-watch project list
    discord-watch project remove NAME
    discord-watch submit PROJECT MESSAGE [--tool T] [--model M] [--context FILE ...]
                         [--no-network] [--worktree | --no-worktree] [--timeout S]
                         [--wait [--wait-timeout S]] [--json]
    discord-watch resume RUN_ID MESSAGE [--timeout S] [--wait [--wait-timeout S]] [--json]
    discord-watch stop RUN_ID|JOB|THREAD [--json]
    discord-watch logs RUN_ID [--raw] | JOB|THREAD [--lines N] [--json]
    discord-watch agent add NAME [--mode M] -- COMMAND [ARGS...] | agent list | agent remove NAME
    discord-watch chat add CHANNEL_ID --tool T [--project P] [--persona DIR] [--history N]
                           [--who owners|everyone|ROLE_ID,...] [--keep-session]
                           [--on-failure notice|silent]
                           | chat list | chat remove CHANNEL_ID
    discord-watch schedule add WHEN [PROMPT] (--project P | --session THREAD | --chat CHANNEL)
                           | schedule list | schedule remove ID
    discord-watch diff RUN_ID [--stat] [--json]
    discord-watch merge RUN_ID [--squash] [--json] | pr RUN_ID [--json]
                           | discard RUN_ID [--yes] [--json]
    discord-watch gc [--older-than 14d] [--force] [--dry-run] [--json]

The run commands are in :mod:`discord_mcp.watch.shell` (their output and exit codes are there),
the landing ones in :mod:`discord_mcp.watch.landing.shell`, ``gc`` in :mod:`discord_mcp.watch.gc`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from discord_mcp import __version__, heap
from discord_mcp.errors import ConfigError, DiscordMCPError, RunError, StateError
from discord_mcp.watch.agent_cli import add_agent_commands, agent_main
from discord_mcp.watch.chat.cli import add_chat_commands, chat_main, schedule_main
from discord_mcp.watch.durations import format_duration, parse_duration
from discord_mcp.watch.gc import add_gc_command, gc_main
from discord_mcp.watch.landing.shell import COMMANDS as LANDING_COMMANDS
from discord_mcp.watch.landing.shell import add_landing_commands, landing_main
from discord_mcp.watch.shell import COMMANDS as SHELL_COMMANDS
from discord_mcp.watch.shell import add_commands
from discord_mcp.watch.shell import main as shell_main

_LOCAL_HELP = (
    "local only: runs from `discord-watch submit`, nothing reaches Discord (also the case when "
    "no bot token is configured)"
)
_DESCRIPTION = (
    "Watch Discord for the owner: fill the agents' inbox, run claude / codex / gemini when the "
    "owner writes in a run thread, and hold the machine's gateway connection. Configuration "
    "comes from the environment and .env, as for discord-mcp; DISCORD_WATCH_ROOTS (':'-"
    "separated) limits where projects may live (default: your home directory)."
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="discord-watch", description=_DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"discord-watch {__version__}")
    parser.add_argument("--local", action="store_true", help=_LOCAL_HELP)
    parser.add_argument(
        "--interval",
        type=_interval,
        metavar="SECONDS",
        help="seconds between reads of Discord's history when nothing arrives live (default: "
        "POLL_INTERVAL_SECONDS, else 5)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="run the daemon (the default)")
    run.add_argument("--local", dest="local_run", action="store_true", help=_LOCAL_HELP)
    status = sub.add_parser(
        "status", help="open decisions, running and queued jobs; or one run (read-only)"
    )
    status.add_argument("run_id", nargs="?", metavar="RUN_ID", help="a run's status")
    status.add_argument("--json", action="store_true", help="print one JSON object")
    project = sub.add_parser("project", help="manage projects agents run in")
    actions = project.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="register a project")
    add.add_argument("name", help="1-40 characters: a-z, 0-9, '-', '_'")
    add.add_argument("path", help="absolute path of an existing directory")
    add.add_argument(
        "--tools", required=True, help="comma-separated: claude,codex,gemini (any subset)"
    )
    add.add_argument("--default", help="the tool new sessions use (default: the first)")
    add.add_argument(
        "--args",
        action="append",
        default=[],
        metavar="TOOL=JSON_ARGV",
        help='extra arguments for a tool, as a JSON list: claude=\'["--model", "opus"]\'',
    )
    add.add_argument(
        "--timeout",
        metavar="DURATION",
        help="how long one job may run, e.g. 30m, 2h, 90s (default 15m); the time its agent "
        "waits for your answer to a question is not counted",
    )
    add.add_argument(
        "--approvals",
        choices=["ask", "ask-all", "off"],
        default="ask",
        help="tool approvals from Discord: ask (default: writes and commands ask you), "
        "ask-all (every tool asks), off (the CLI's own configuration decides)",
    )
    add.add_argument(
        "--no-network",
        action="store_true",
        help="every run of the project is kept off the network (as submit --no-network)",
    )
    add.add_argument(
        "--worktrees",
        action="store_true",
        help="each run works in a git worktree of its own, on a branch discord-mcp/<run id>, "
        "and is merged, sent as a pull request or discarded when done (a git repository "
        "with a commit)",
    )
    change = actions.add_parser("set", help="change a project's stream or busy setting")
    change.add_argument("name")
    for parser_ in (add, change):
        parser_.add_argument(
            "--stream",
            choices=["on", "off"],
            default=None if parser_ is change else "on",
            help="show the agent's answer while it is written (default on)",
        )
        parser_.add_argument(
            "--busy",
            choices=["queue", "interrupt", "steer"],
            default=None if parser_ is change else "queue",
            help="a message while a turn runs: queue (default), interrupt the turn, or steer "
            "it into the turn where the engine takes it (Claude Code, some ACP agents; else "
            "queue)",
        )
    change.add_argument(
        "--worktrees", choices=["on", "off"], default=None, help="a git worktree per run"
    )
    actions.add_parser("list", help="list projects")
    remove = actions.add_parser("remove", help="remove a project")
    remove.add_argument("name")
    add_agent_commands(sub)
    add_chat_commands(sub)
    add_commands(sub)
    add_landing_commands(sub)
    add_gc_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``discord-watch``; returns the exit code."""
    if argv is None:  # this process's own command line (a test passes its arguments)
        heap.starting()
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        if args.command == "project":
            return _project(args)
        if args.command == "agent":
            return agent_main(args)
        if args.command == "chat":
            return chat_main(args)
        if args.command == "schedule":
            return schedule_main(args)
        if args.command in SHELL_COMMANDS:
            from discord_mcp.config import state_home

            return shell_main(args, state_home())
        if args.command in LANDING_COMMANDS:
            from discord_mcp.config import state_home

            return landing_main(args, state_home())
        if args.command == "gc":
            from discord_mcp.config import state_home

            return gc_main(args, state_home(), os.environ)
        if args.command == "status":
            from discord_mcp.config import state_home
            from discord_mcp.watch.display import render_status
            from discord_mcp.watch.shell import status_main

            if args.run_id is not None:
                return status_main(state_home(), args.run_id, args.json)
            sys.stdout.write(render_status(state_home()) + "\n")
            return 0
        return _run(
            local=args.local or bool(getattr(args, "local_run", False)), interval=args.interval
        )
    except RunError as exc:
        sys.stderr.write(f"discord-watch: {exc.code}: {exc.message}\n")
        return 2
    except ConfigError as exc:
        sys.stderr.write(f"discord-watch: configuration error: {exc}\n")
        return 2
    except StateError as exc:
        sys.stderr.write(f"discord-watch: {exc}\n")
        return 2


def _project(args: argparse.Namespace) -> int:
    from discord_mcp.config import state_home, watch_roots
    from discord_mcp.runs.contract import RunLimits
    from discord_mcp.runs.projects import ProjectRegistry

    default_timeout = RunLimits().job_timeout
    registry = ProjectRegistry(state_home(), allowed_roots=watch_roots())
    if args.action == "list":
        projects = registry.list()
        if not projects:
            sys.stdout.write("no projects yet: discord-watch project add NAME PATH --tools ...\n")
        for p in projects:
            extra = {tool: list(argv) for tool, argv in p.args.items() if argv}
            timeout = format_duration(p.job_timeout or default_timeout)
            sys.stdout.write(
                f"{p.name}\t{p.path}\ttools={','.join(p.tools)}\tdefault={p.default_tool}"
                f"\ttimeout={timeout}"
                + (f"\targs={json.dumps(extra)}" if extra else "")
                + (f"\tapprovals={p.approvals}" if p.approvals != "ask" else "")
                + ("" if p.allow_network else "\tnetwork=off")
                + (f"\tstream={p.stream}" if p.stream != "on" else "")
                + (f"\tbusy={p.busy}" if p.busy != "queue" else "")
                + ("\tworktrees=on" if p.worktrees else "")
                + "\n"
            )
        return 0
    if args.action == "remove":
        removed = registry.remove(args.name)
        sys.stdout.write(f"removed project {removed.name} ({removed.path})\n")
        return 0
    if args.action == "set":
        asked = (("stream", args.stream), ("busy", args.busy), ("worktrees", args.worktrees))
        wanted = {k: v for k, v in asked if v}
        changed = registry.update(args.name, **wanted)
        sys.stdout.write(
            f"project {changed.name}: stream {changed.stream}, busy {changed.busy}, "
            f"worktrees {'on' if changed.worktrees else 'off'}\n"
        )
        return 0
    tool_args: dict[str, list[str]] = {}
    for spec in args.args:
        tool, sep, raw = spec.partition("=")
        try:
            value = json.loads(raw) if sep else None
        except ValueError:
            value = None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RunError(
                "E_INVALID_ARGS",
                f"--args {spec!r} is not TOOL=JSON_ARGV: write e.g. "
                'claude=\'["--model", "opus"]\' (a JSON list of strings; no shell)',
            )
        tool_args[tool.strip()] = value
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    job_timeout = parse_duration(args.timeout) if args.timeout is not None else None
    if args.worktrees:
        _check_git(registry.check_path(args.path))
    project = registry.add(
        args.name,
        args.path,
        tools,
        args.default,
        tool_args,
        job_timeout,
        approvals=args.approvals,
        allow_network=not args.no_network,
        stream=args.stream,
        busy=args.busy,
        worktrees=args.worktrees,
    )
    shown = format_duration(project.job_timeout or default_timeout)
    sys.stdout.write(
        f"added project {project.name}: {project.path}, tools {','.join(project.tools)}, "
        f"default {project.default_tool}, job timeout {shown}, approvals {project.approvals}"
        + ("" if project.allow_network else ", no network")
        + (", a git worktree per run" if project.worktrees else "")
        + "\n"
    )
    return 0


def _check_git(path: Path) -> None:
    """A project with worktrees must be a git repository with a commit (said now, not at its
    first run)."""
    from discord_mcp.runs.git.worktrees import in_work_tree

    if not asyncio.run(in_work_tree(path)):
        raise RunError(
            "E_NOT_A_GIT_REPO",
            f"{path} is not a git repository with a commit, so its runs cannot have worktrees: "
            "run `git init` there and commit, or add the project without --worktrees",
        )


def _interval(text: str) -> float:
    """``--interval``'s seconds: a positive number (at least 0.05, as POLL_INTERVAL_SECONDS)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds >= 0.05 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds >= 0.05 (e.g. 10)")
    return seconds


def _run(*, local: bool, interval: float | None = None) -> int:
    from dataclasses import replace

    from discord_mcp.config import Settings, has_token
    from discord_mcp.log import configure
    from discord_mcp.watch.app import run_daemon

    if local or not has_token():
        return _run_local()
    settings = Settings.from_env()
    if interval is not None:
        settings = replace(settings, poll_interval=interval)
    configure(program="discord-watch", home=settings.home, secrets=[settings.token.reveal()])
    display = sys.stdout if sys.stdout.isatty() else None

    why: list[str] = []
    heap.settled()

    async def main() -> None:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            if task is not None:
                loop.add_signal_handler(signum, _stop, task, why, signum)
        with contextlib.suppress(asyncio.CancelledError):
            await run_daemon(settings, display=display, stopping=lambda: _stopping(why))

    try:
        asyncio.run(main())
    except (DiscordMCPError, BaseExceptionGroup) as exc:
        sys.stderr.write(f"discord-watch: {_first_error(exc)}\n")
        return 1
    return 0


def _stop(task: asyncio.Task[Any], why: list[str], signum: int) -> None:
    why.append(signal.Signals(signum).name)
    task.cancel()


def _stopping(why: list[str]) -> str:
    """Why the daemon stops, as its threads are told."""
    return f"discord-watch stopped: it received {why[0]}" if why else "discord-watch stopped"


def _run_local() -> int:
    """The daemon without Discord (:mod:`discord_mcp.watch.local`); its first line says so."""
    from discord_mcp.config import state_home
    from discord_mcp.log import configure
    from discord_mcp.watch.local import first_line, run_local

    home = state_home()
    sys.stdout.write(first_line(home) + "\n")
    sys.stdout.flush()
    configure(program="discord-watch", home=home, secrets=[])
    display = sys.stdout if sys.stdout.isatty() else None
    heap.settled()

    async def main() -> None:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            if task is not None:
                loop.add_signal_handler(signum, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await run_local(home, display=display)

    try:
        asyncio.run(main())
    except (DiscordMCPError, BaseExceptionGroup) as exc:
        sys.stderr.write(f"discord-watch: {_first_error(exc)}\n")
        return 1
    return 0


def _first_error(exc: BaseException) -> BaseException:
    """The error to report from a task group's bundle (ours first)."""
    while isinstance(exc, BaseExceptionGroup):
        ours = [e for e in exc.exceptions if isinstance(e, DiscordMCPError | BaseExceptionGroup)]
        exc = (ours or list(exc.exceptions))[0]
    return exc
