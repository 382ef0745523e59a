"""The Discord wire: the REST client and its rate limiter, the gateway, and payload types.

Nothing outside this package imports httpx or websockets; their exceptions are translated here
into :mod:`discord_mcp.errors`.
"""
