"""Reactions: people and the bot react to messages (:class:`ReactionState`, which
:class:`~discord_mcp.emulator.state.State` builds on), and the emoji Discord accepts."""

from __future__ import annotations

from typing import Any

from discord_mcp.emulator import errors
from discord_mcp.emulator.guild import GuildState
from discord_mcp.emulator.models import Message, Reaction, User


class ReactionState(GuildState):
    """Adding, removing and listing reactions, with their ``MESSAGE_REACTION_*`` events."""

    def add_reaction(self, channel_id: str, message_id: str, user_id: str, emoji: str) -> Message:
        """``user_id`` reacts with ``emoji`` (idempotent); 50083 in an archived thread."""
        channel = self.get_channel(channel_id)
        message = self.get_message(channel_id, message_id)
        name = normalise_emoji(emoji)
        self.get_user(user_id)
        if channel.is_thread and channel.archived:
            raise errors.thread_archived()
        reaction = next((r for r in message.reactions if r.emoji == name), None)
        if channel.is_dm and not self.permissions_for(user_id, channel):
            raise errors.missing_access()
        if reaction is None:
            reaction = Reaction(name)
            message.reactions.append(reaction)
        if user_id not in reaction.user_ids:
            reaction.user_ids.append(user_id)
            event = self._reaction_event(message, user_id, reaction)
            if "guild_id" in event:
                event["member"] = self.member_json(user_id)
            self.emit("MESSAGE_REACTION_ADD", event)
        return message

    def remove_reaction(
        self, channel_id: str, message_id: str, user_id: str, emoji: str
    ) -> Message:
        """Take back ``user_id``'s reaction (no error when there was none)."""
        channel = self.get_channel(channel_id)
        message = self.get_message(channel_id, message_id)
        name = normalise_emoji(emoji)
        if channel.is_thread and channel.archived:
            raise errors.thread_archived()
        reaction = next((r for r in message.reactions if r.emoji == name), None)
        if reaction is not None and user_id in reaction.user_ids:
            reaction.user_ids.remove(user_id)
            if not reaction.user_ids:
                message.reactions.remove(reaction)
            self.emit("MESSAGE_REACTION_REMOVE", self._reaction_event(message, user_id, reaction))
        return message

    def reactors(
        self, channel_id: str, message_id: str, emoji: str, *, after: int | None, limit: int
    ) -> list[User]:
        """Users who reacted with ``emoji``, by ascending id, after ``after``."""
        message = self.get_message(channel_id, message_id)
        name = normalise_emoji(emoji)
        reaction = next((r for r in message.reactions if r.emoji == name), None)
        ids = sorted(int(u) for u in reaction.user_ids) if reaction else []
        chosen = [i for i in ids if after is None or i > after][:limit]
        return [self.users[str(i)] for i in chosen]

    def _reaction_event(self, message: Message, user_id: str, reaction: Reaction) -> dict[str, Any]:
        event = {
            "user_id": user_id,
            "channel_id": message.channel_id,
            "message_id": message.id,
            "guild_id": self.guild.id,
            "message_author_id": message.author_id,
            "emoji": reaction.emoji_json(),
            "burst": False,
            "type": 0,
        }
        if self.is_direct(message.channel_id):
            del event["guild_id"]
        return event


def normalise_emoji(raw: str) -> str:
    """The emoji of a reaction route (already percent-decoded), or 10014 Unknown Emoji.

    A Unicode emoji is accepted when it has a non-ASCII character and no whitespace (plain
    words like ``thumbsup`` are refused, as Discord does); custom emoji (``name:id``) are
    unknown because the emulated guild has none.
    """
    if not raw or len(raw) > 32 or ":" in raw or any(ch.isspace() for ch in raw):
        raise errors.unknown_emoji()
    if all(ch.isascii() for ch in raw):
        raise errors.unknown_emoji()
    return raw
