"""``doctor``'s lines about several machines on one bot (:mod:`discord_mcp.team`): this machine's
name and the others', read from their presence records in Discord, and the gateway logins left
for the bot token, which every machine spends."""

from __future__ import annotations

import time

from discord_mcp.config import Settings
from discord_mcp.errors import DiscordError
from discord_mcp.setup.checks import Check
from discord_mcp.team.presence import read_records, read_snapshot
from discord_mcp.team.roster import AWAY_AFTER_S
from discord_mcp.team.signing import RecordKey
from discord_mcp.transport.rest import RestClient

IDENTIFIES_LOW = 100
"""Fewer gateway logins than this left today is a warning: Discord resets the token at 0."""


async def machine_check(settings: Settings, rest: RestClient, bot_id: str) -> Check:
    """This machine's name, and the other machines' as Discord shows them."""
    name = "machine"
    here = f"`{settings.machine}`"
    snapshot = read_snapshot(settings.home)
    theirs = snapshot.get("machine") if snapshot else None
    if isinstance(theirs, str) and theirs != settings.machine:
        return Check(
            "WARN",
            name,
            f"{here} here, but this state directory's discord-watch last ran as `{theirs}`: "
            "cards asked under one name are answered late by the other's",
            f"Set DISCORD_MCP_MACHINE={theirs} (or the name you want) in the .env every program "
            "of this machine reads, and restart discord-watch",
        )
    try:
        channel = await rest.get_channel(settings.channel_id)
        guild_id = str(channel.get("guild_id") or "")
        records = (
            await read_records(
                rest,
                channel_id=settings.channel_id,
                guild_id=guild_id,
                bot_id=bot_id,
                key=RecordKey(settings.token),
            )
            if guild_id
            else []
        )
    except DiscordError as exc:
        return Check("WARN", name, f"{here}; the other machines could not be read ({exc})")
    now = time.time()
    others = [r for r in records if r.name != settings.machine]
    words = ", ".join(
        f"{r.name} ({'live' if now - r.seen_at < AWAY_AFTER_S else 'away'})" for r in others
    )
    same = [r for r in records if r.name == settings.machine]
    if same and now - same[0].seen_at < AWAY_AFTER_S and not _ours(settings, same[0].instance):
        return Check(
            "WARN",
            name,
            f"{here}, but a live machine already uses that name in Discord"
            + (f"; also there: {words}" if words else ""),
            "Give every machine its own DISCORD_MCP_MACHINE (in the .env all its programs read)",
        )
    if not others:
        return Check("OK", name, f"{here}; no other machine shares this bot")
    return Check("OK", name, f"{here}; {len(others)} other machines share this bot: {words}")


def _ours(settings: Settings, instance: str) -> bool:
    """Whether this machine's discord-watch wrote the record of its name (its last run's)."""
    snapshot = read_snapshot(settings.home)
    return snapshot is not None and snapshot.get("instance") == instance


async def identify_check(rest: RestClient) -> Check:
    """The gateway logins (identifies) left today for the bot token, every machine's."""
    name = "gateway sessions"
    try:
        limit = (await rest.get_gateway_bot())["session_start_limit"]
    except (DiscordError, KeyError, TypeError) as exc:
        return Check("WARN", name, f"could not ask Discord how many are left ({exc})")
    remaining, total = int(limit["remaining"]), int(limit["total"])
    hours = float(limit["reset_after"]) / 3_600_000
    detail = (
        f"{remaining} of {total} gateway logins left for this bot token today, shared by every "
        f"machine that uses it (one per machine and start; resets in {hours:.1f} h)"
    )
    if remaining <= 0:
        return Check(
            "FAIL",
            name,
            detail,
            "Stop every discord-watch and discord-mcp using this token until the reset; Discord "
            "resets the token itself after 1000 logins in a day",
        )
    if remaining < IDENTIFIES_LOW:
        return Check("WARN", name, detail, "Look for a process that reconnects in a loop (its log)")
    return Check("OK", name, detail)
