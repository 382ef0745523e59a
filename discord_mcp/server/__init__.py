"""The MCP stdio server: tools an agent calls to reach its owner.

``app`` is the only module that imports the MCP framework; ``limits`` and ``results`` are pure
policy (how long a call may block for each client, what a tool returns).
"""
