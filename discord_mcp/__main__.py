"""``python -m discord_mcp`` is the ``discord-mcp`` command."""

from discord_mcp.cli import main

raise SystemExit(main())
