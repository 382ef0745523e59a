"""``discord-mcp demo``: the product at work on one machine, with a scripted agent.

``cli.py`` puts the emulator, ``discord-watch`` and the agent together; ``agent.py`` is the
agent (an MCP client of a real ``discord-mcp`` server, following a script instead of a model).
"""
