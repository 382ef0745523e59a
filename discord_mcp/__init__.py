"""discord-mcp: coding agents reach their human over Discord.

The folders show the architecture:

- ``transport/``: the Discord wire (REST client and rate limiter, gateway, payload types).
- ``decisions/`` and ``state/``: the domain (decisions, answers, the state directory).
- ``server/``: the MCP stdio server and its tools (the only code that imports FastMCP).
- ``emulator/``: a local Discord for tests and for trying everything without an account.
- ``cli.py``: the ``discord-mcp`` command line.
"""

__version__ = "0.1.0"
