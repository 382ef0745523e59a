"""A local Discord: REST v10, the gateway, and a control API through which tests act as
Discord's users.

It behaves like Discord where a bot client depends on it (snowflakes, error bodies and codes,
rate-limit buckets and headers, threads and archiving, interactions' deadlines) and shares no
code with the project's Discord client, so a mistake cannot hide by being made on both sides.

Typical use::

    from discord_mcp.emulator import start_in_thread

    with start_in_thread(rate_limit_scale=0.01) as discord:
        httpx.post(f"{discord.api_base}/channels/{discord.channel_id}/messages",
                   headers={"Authorization": f"Bot {discord.token}"}, json={"content": "hi"})

``discord-mcp emulator`` serves one for people. The REST routes are in ``rest.py`` (what the
bot may do there in ``access.py``, Discord's permission model in ``permissions.py``;
application commands in ``rest_commands.py`` and ``commands.py``; files in ``uploads.py`` and
``attachments.py``, served by ``media.py``), the rate limits in ``ratelimit.py``, the gateway
in ``gateway.py`` (its sessions in ``sessions.py``), the control API in ``control.py``,
``control_interactions.py``, ``control_commands.py``, ``control_files.py`` and
``control_guild.py``.
"""

from discord_mcp.emulator.app import Emulator
from discord_mcp.emulator.config import (
    DEFAULT_PORT,
    DEFAULT_TOKEN,
    EmulatorConfig,
    Exchange,
    ExchangeHook,
)
from discord_mcp.emulator.server import RunningEmulator, serve, start_in_thread
from discord_mcp.emulator.store import Event

__all__ = [
    "DEFAULT_PORT",
    "DEFAULT_TOKEN",
    "Emulator",
    "EmulatorConfig",
    "Event",
    "Exchange",
    "ExchangeHook",
    "RunningEmulator",
    "serve",
    "start_in_thread",
]
