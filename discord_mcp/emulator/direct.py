"""Direct messages: the bot's DM channel with a user, as ``POST /users/@me/channels`` opens it.

A DM channel (type 1) has no guild, no name and no permissions of its own: its two sides (the
bot and the recipient) may write, read and react there, nobody else may even see it
(:meth:`~discord_mcp.emulator.store.Store.permissions_for`). Opening it always works for a known
user; whether the user accepts the bot's messages (their privacy settings, which the control
API sets) is decided when a message is sent: 50007 "Cannot send messages to this user". Its
messages' events carry no ``guild_id`` nor ``member``, and Discord sends bots no
``CHANNEL_CREATE`` for it (the gateway filters the one emitted here, for the owner's page).
"""

from __future__ import annotations

from typing import Any

from discord_mcp.emulator import errors
from discord_mcp.emulator.models import DM, Channel
from discord_mcp.emulator.reactions import ReactionState
from discord_mcp.emulator.validation import body_object, snowflake_field


class DirectState(ReactionState):
    """Opening DM channels, and who refuses them."""

    def open_dm(self, body: Any) -> Channel:
        """The bot's DM channel with ``body["recipient_id"]`` (``POST /users/@me/channels``):
        the same channel every time; 50033 for an unknown user or the bot itself.

        Opening always works; whether the user accepts messages is decided when one is sent
        (50007, ``access.check_send``).
        """
        data = body_object(body)
        problems = errors.FormErrors()
        recipient = data.get("recipient_id")
        if recipient is None:
            problems.add(("recipient_id",), "BASE_TYPE_REQUIRED", "This field is required")
        else:
            recipient = snowflake_field(problems, ("recipient_id",), recipient)
        problems.raise_if_any()
        user = self.users.get(str(recipient))
        if user is None or user.id == self.bot.id:
            raise errors.invalid_recipient()
        existing = self.dm_channels.get(user.id)
        if existing is not None and existing in self.channels:
            return self.channels[existing]
        channel = Channel(id=self.new_id(), type=DM, name="", guild_id="", recipients=[user])
        self.channels[channel.id] = channel
        self._history[channel.id] = []
        self.dm_channels[user.id] = channel.id
        self.emit("CHANNEL_CREATE", channel.to_json())
        return channel

    def set_accepts_dms(self, user_id: str, accepts: bool) -> None:
        """A user's privacy setting: whether the bot may send them direct messages."""
        user = self.get_user(user_id)
        if accepts:
            self.refusing_dms.discard(user.id)
        else:
            self.refusing_dms.add(user.id)
