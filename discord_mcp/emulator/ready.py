"""The first dispatch of a session: READY (GUILD_CREATE, which follows it, is built in
``guild.py``)."""

from __future__ import annotations

from typing import Any

from discord_mcp.emulator.intents import application_flags
from discord_mcp.emulator.sessions import Session
from discord_mcp.emulator.state import State


def ready(state: State, session: Session, resume_gateway_url: str) -> dict[str, Any]:
    """READY: the bot user, its guilds as unavailable, the session id and where to resume."""
    guild_id = state.guild.id
    user = state.bot.to_json() | {"verified": True, "mfa_enabled": False, "email": None}
    data: dict[str, Any] = {
        "v": 10,
        "user": user,
        "guilds": (
            [{"id": guild_id, "unavailable": True}]
            if session.owns_guild(guild_id) and state.bot_in_guild
            else []
        ),
        "session_id": session.id,
        "session_type": "normal",
        "resume_gateway_url": resume_gateway_url,
        "application": {
            "id": state.bot.id,
            "flags": application_flags(state.message_content_intent_enabled),
        },
        "private_channels": [],
        "presences": [],
        "relationships": [],
        "guild_join_requests": [],
        "geo_ordered_rtc_regions": [],
        "user_settings": {},
        "auth": {},
    }
    if session.shard is not None:
        data["shard"] = list(session.shard)
    return data
