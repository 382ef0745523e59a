"""``discord-watch``: the daemon that watches Discord for the owner and runs agents.

``daemon`` routes what the owner writes (inbox, run threads, commands) and holds the machine's
gateway; ``commands`` parses the ``!`` commands; ``notifier`` shows runs in Discord; ``cursors``
remembers what was processed; ``display`` renders ``discord-watch status``; ``cli`` is the
command line. The run engine itself is ``discord_mcp.runs``.
"""
