"""The first dispatches of a session: READY, then GUILD_CREATE for the one guild."""

from __future__ import annotations

from typing import Any

from discord_mcp.emulator.intents import application_flags
from discord_mcp.emulator.models import MEMBER_PERMISSIONS
from discord_mcp.emulator.sessions import Session
from discord_mcp.emulator.state import State


def ready(state: State, session: Session, resume_gateway_url: str) -> dict[str, Any]:
    """READY: the bot user, its guilds as unavailable, the session id and where to resume."""
    guild_id = state.guild.id
    user = state.bot.to_json() | {"verified": True, "mfa_enabled": False, "email": None}
    data: dict[str, Any] = {
        "v": 10,
        "user": user,
        "guilds": ([{"id": guild_id, "unavailable": True}] if session.owns_guild(guild_id) else []),
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


def guild_create(state: State) -> dict[str, Any]:
    """GUILD_CREATE: the guild with its roles, channels, active threads and the bot member."""
    guild = state.guild
    everyone = {
        "id": guild.id,
        "name": "@everyone",
        "description": None,
        "permissions": MEMBER_PERMISSIONS,
        "position": 0,
        "color": 0,
        "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
        "hoist": False,
        "managed": False,
        "mentionable": False,
        "icon": None,
        "unicode_emoji": None,
        "flags": 0,
    }
    channels = [c.to_json() for c in state.channels.values() if not c.is_thread]
    threads = [c.to_json() for c in state.channels.values() if c.is_thread and not c.archived]
    bot_member = state.member_json(state.bot.id)
    return guild.to_json() | {
        "icon": None,
        "splash": None,
        "discovery_splash": None,
        "banner": None,
        "description": None,
        "afk_channel_id": None,
        "afk_timeout": 300,
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "mfa_level": 0,
        "nsfw_level": 0,
        "premium_tier": 0,
        "premium_subscription_count": 0,
        "premium_progress_bar_enabled": False,
        "preferred_locale": "en-US",
        "features": [],
        "roles": [everyone],
        "emojis": [],
        "stickers": [],
        "application_id": None,
        "system_channel_id": None,
        "system_channel_flags": 0,
        "rules_channel_id": None,
        "public_updates_channel_id": None,
        "safety_alerts_channel_id": None,
        "vanity_url_code": None,
        "max_members": 500_000,
        "max_video_channel_users": 25,
        "joined_at": bot_member["joined_at"],
        "large": False,
        "unavailable": False,
        "member_count": len(state.users),
        "members": [bot_member],
        "channels": channels,
        "threads": threads,
        "presences": [],
        "voice_states": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
    }
