"""``python -m discord_mcp.server`` serves MCP on stdio, as ``discord-mcp`` (or ``discord-mcp
serve``) does: how the Decision MCP seed starts its server. Options are ``serve``'s."""

import sys

from discord_mcp.cli import main

raise SystemExit(main(["serve", *sys.argv[1:]]))
