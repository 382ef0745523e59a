"""The ``discord-mcp`` command line.

``discord-mcp`` alone, or ``discord-mcp serve``, runs the MCP stdio server (what an agent's
client starts). Other subcommands are for people. Each subcommand imports its module only when
chosen, so the server's cold start does not pay for the emulator.

Nothing here writes to stdout on the server path: stdout belongs to the MCP protocol.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from discord_mcp import __version__
from discord_mcp.errors import ConfigError

_EMULATOR_HELP = "run a local Discord (REST, gateway, interactions) on 127.0.0.1"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="discord-mcp",
        description=(
            "Let coding agents reach their human over Discord. Without a subcommand, runs the "
            "MCP stdio server (what Claude Code, Codex or Gemini CLI start). Configuration comes "
            "from the environment and a .env file: DISCORD_BOT_TOKEN, DISCORD_CHANNEL_ID, "
            "DISCORD_OWNER_IDS (required), PROJECT_NAME, DISCORD_MCP_HOME, "
            "POLL_INTERVAL_SECONDS, DISCORD_API_BASE, DISCORD_GATEWAY_URL, "
            "DISCORD_MCP_MAX_BLOCK_SECONDS."
        ),
    )
    parser.add_argument("--version", action="version", version=f"discord-mcp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("serve", help="run the MCP stdio server (the default)")
    sub.add_parser("emulator", help=_EMULATOR_HELP, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``discord-mcp``; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "emulator":
        from discord_mcp.emulator.cli import main as emulator_main

        return emulator_main(args[1:])
    parsed = _parser().parse_args(args)
    if parsed.command in (None, "serve"):
        return _serve()
    return 2  # argparse rejects unknown commands before this


def _serve() -> int:
    from discord_mcp.config import Settings
    from discord_mcp.log import configure

    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        sys.stderr.write(f"discord-mcp: configuration error: {exc}\n")
        return 2
    configure(program="discord-mcp", home=settings.home, secrets=[settings.token.reveal()])
    from discord_mcp.server.app import serve

    serve(settings)
    return 0
