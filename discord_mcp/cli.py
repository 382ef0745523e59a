"""The ``discord-mcp`` command line.

``discord-mcp`` alone, or ``discord-mcp serve``, runs the MCP stdio server (it is what an agent's
client starts). Other subcommands are for people. Each subcommand imports its module only when
chosen, so the server's cold start does not pay for the emulator.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from discord_mcp import __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="discord-mcp",
        description=(
            "Let coding agents reach their human over Discord. Without a subcommand, runs the "
            "MCP stdio server (what Claude Code, Codex or Gemini CLI start)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"discord-mcp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser(
        "emulator",
        help="run a local Discord (REST, gateway, interactions) on 127.0.0.1",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``discord-mcp``; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "emulator":
        from discord_mcp.emulator.cli import main as emulator_main

        return emulator_main(args[1:])
    parser = _parser()
    parser.parse_args(args)
    parser.print_help(sys.stderr)
    return 2
