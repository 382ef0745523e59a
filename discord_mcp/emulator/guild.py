"""The guild: its JSON (for ``GET /guilds/{guild_id}`` and ``GUILD_CREATE``) and the changes
to its roles, members and channel overwrites (:class:`GuildState`, which
:class:`~discord_mcp.emulator.state.State` builds on)."""

from __future__ import annotations

from typing import Any

from discord_mcp.emulator import errors
from discord_mcp.emulator.models import Channel, Member, Role
from discord_mcp.emulator.permissions import Overwrite
from discord_mcp.emulator.store import Store


def guild_json(store: Store, *, with_counts: bool = False) -> dict[str, Any]:
    """The guild object (the spec's ``GuildWithCountsResponse``), roles included."""
    guild = store.guild
    data = guild.to_json() | {
        "icon": None,
        "description": None,
        "home_header": None,
        "splash": None,
        "discovery_splash": None,
        "banner": None,
        "features": [],
        "application_id": None,
        "region": "deprecated",
        "afk_channel_id": None,
        "afk_timeout": 300,
        "system_channel_id": None,
        "system_channel_flags": 0,
        "widget_enabled": False,
        "widget_channel_id": None,
        "verification_level": 0,
        "roles": [role.to_json() for role in store.roles.values()],
        "default_message_notifications": 0,
        "mfa_level": 0,
        "explicit_content_filter": 0,
        "max_presences": None,
        "max_members": 500_000,
        "max_stage_video_channel_users": 50,
        "max_video_channel_users": 25,
        "vanity_url_code": None,
        "premium_tier": 0,
        "premium_subscription_count": 0,
        "preferred_locale": "en-US",
        "rules_channel_id": None,
        "safety_alerts_channel_id": None,
        "public_updates_channel_id": None,
        "premium_progress_bar_enabled": False,
        "nsfw": False,
        "nsfw_level": 0,
        "emojis": [],
        "stickers": [],
        "incidents_data": None,
    }
    if with_counts:
        data["approximate_member_count"] = len(store.members)
        data["approximate_presence_count"] = 0
    return data


def guild_create(store: Store) -> dict[str, Any]:
    """GUILD_CREATE: the guild with its roles, channels, active threads and the bot member."""
    channels = [c.to_json() for c in store.channels.values() if not c.is_thread and not c.is_dm]
    threads = [c.to_json() for c in store.channels.values() if c.is_thread and not c.archived]
    bot_member = store.member_json(store.bot.id)
    return guild_json(store) | {
        "joined_at": bot_member["joined_at"],
        "large": False,
        "unavailable": False,
        "member_count": len(store.members),
        "members": [bot_member],
        "channels": channels,
        "threads": threads,
        "presences": [],
        "voice_states": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
    }


class GuildState(Store):
    """The guild's changes: role permissions, member roles, overwrites, the bot's membership.

    Each validates as Discord does (raising 10003/10007/10011/50024) and emits the dispatch
    Discord sends for it.
    """

    def set_role_permissions(self, role_id: str, permissions: int) -> Role:
        """Give a role exactly ``permissions`` (10011 for an unknown role)."""
        role = self.get_role(role_id)
        role.permissions = permissions
        self.emit("GUILD_ROLE_UPDATE", {"guild_id": self.guild.id, "role": role.to_json()})
        return role

    def set_member_roles(self, user_id: str, role_ids: list[str]) -> Member:
        """Replace a member's roles (10007 outside the guild, 10011 for an unknown role or
        ``@everyone``, which every member has implicitly)."""
        member = self.get_member(user_id)
        for role_id in role_ids:
            if role_id == self.everyone.id:
                raise errors.unknown_role()
            self.get_role(role_id)
        member.role_ids = list(dict.fromkeys(role_ids))
        self.emit("GUILD_MEMBER_UPDATE", self.member_json(user_id) | {"guild_id": self.guild.id})
        return member

    def set_overwrites(self, channel_id: str, overwrites: list[Overwrite]) -> Channel:
        """Replace a text channel's ``permission_overwrites`` (threads have none: 50024)."""
        channel = self.get_channel(channel_id)
        if channel.is_thread:
            raise errors.wrong_channel_type()
        for overwrite in overwrites:
            if overwrite.type == 0:
                self.get_role(overwrite.id)
            else:
                self.get_member(overwrite.id)
        channel.overwrites = list(overwrites)
        self.emit("CHANNEL_UPDATE", channel.to_json())
        return channel

    def set_bot_in_guild(self, present: bool) -> None:
        """Remove the bot from the guild (``GUILD_DELETE``) or add it back with its role
        (``GUILD_CREATE``); nothing happens when it already is where asked."""
        if present == self.bot_in_guild:
            return
        if present:
            self.members[self.bot.id] = Member(self.bot.id, [self.bot_role.id])
            self.emit("GUILD_CREATE", guild_create(self))
        else:
            del self.members[self.bot.id]
            self.emit("GUILD_DELETE", {"id": self.guild.id})
