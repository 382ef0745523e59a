"""``discord-watch agent add|list|remove``: ACP agents by name (:mod:`discord_mcp.runs.acp.agents`).

::

    discord-watch agent add NAME [--mode MODE] -- COMMAND [ARGS...]
    discord-watch agent list
    discord-watch agent remove NAME
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any


def add_agent_commands(sub: Any) -> None:
    agent = sub.add_parser("agent", help="manage ACP agents (any Agent Client Protocol program)")
    actions = agent.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser(
        "add", help="register an ACP agent: discord-watch agent add NAME -- COMMAND [ARGS...]"
    )
    add.add_argument("name", help="1-40 characters: a-z, 0-9, '-', '_' (not claude/codex/gemini)")
    add.add_argument(
        "--mode",
        help="the ACP session mode to switch to in every session (e.g. default: ask before acting)",
    )
    add.add_argument("argv", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    actions.add_parser("list", help="list ACP agents")
    remove = actions.add_parser("remove", help="forget an ACP agent")
    remove.add_argument("name")


def agent_main(args: argparse.Namespace) -> int:
    from discord_mcp.config import state_home
    from discord_mcp.runs.acp.agents import AgentRegistry

    registry = AgentRegistry(state_home())
    if args.action == "list":
        agents = registry.list()
        if not agents:
            sys.stdout.write("no ACP agents yet: discord-watch agent add NAME -- COMMAND ...\n")
        for a in agents:
            mode = f"\tmode={a.mode}" if a.mode else ""
            source = "\t(from DISCORD_WATCH_AGENT_COMMAND)" if a.source == "environment" else ""
            sys.stdout.write(f"{a.name}\t{shlex.join(a.command)}{mode}{source}\n")
        return 0
    if args.action == "remove":
        removed = registry.remove(args.name)
        sys.stdout.write(f"removed ACP agent {removed.name}\n")
        return 0
    argv = list(args.argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    added = registry.add(args.name, argv, mode=args.mode)
    sys.stdout.write(
        f"added ACP agent {added.name}: {shlex.join(added.command)}; use it as a tool: "
        f"discord-watch project add NAME PATH --tools {added.name}\n"
    )
    return 0
