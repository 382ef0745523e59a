"""``/help``: every command, from the same table that registers them."""

from __future__ import annotations

from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.control.spec import SPECS


async def help_(c: Controls, r: Request) -> Reply:
    prefix = "/" if r.via == "slash" else "!"
    lines = ["**discord-watch commands**"]
    for spec in SPECS:
        lines.append(f"{spec.usage.replace('`/', '`' + prefix, 1)}: {spec.description}")
    lines.append(
        "In a run thread, anything else you write is the next job for its agent; in the "
        "channel, it goes to the agents' inbox."
    )
    return Reply("\n".join(lines)[:2000])
