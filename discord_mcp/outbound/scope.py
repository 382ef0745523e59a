"""Where an agent may post, react and read: its project's channel and that channel's threads.

Theory. A server knows one channel (``DISCORD_CHANNEL_ID``), and every thread of its project is
opened under it: the questions' threads, discord-watch's run threads. A session may also have
a place of its own that discord-watch gave it (``DISCORD_THREAD_ID``: a run's thread, or a chat
channel), which counts as the project's too. Any other id an agent names is looked up once
(``GET /channels/{id}``: its type, parent and name) and the verdict is kept for the life of the
process, since a thread never changes parent; a look-up that fails refuses (nothing is sent to
a place that could not be checked).

Refused, with a sentence the agent can act on: another channel (the bot may sit in many: other
projects', strangers' chat channels, the owner's own), a thread under another channel, and the
machines' presence thread (``discord-mcp machines``, under the project's channel but written by
discord-watch alone: a message there that reads like a record would speak for a machine).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from discord_mcp.config import Settings
from discord_mcp.errors import Forbidden, NotFound, OutOfScope
from discord_mcp.team.presence import THREAD_NAME
from discord_mcp.transport.rest import RestClient

THREAD_TYPES = frozenset({10, 11, 12})
"""Announcement, public and private threads."""
KEPT_MAX = 1024
"""Verdicts kept at most (the oldest are looked up again)."""
_INSTEAD = (
    "Omit thread_id to use your session's thread or the channel, or pass a thread_id from "
    "ask_decision, read_history or the inbox"
)


def own_places(settings: Settings) -> frozenset[str]:
    """The places a session may use without a look-up: the channel and its own thread."""
    return frozenset(p for p in (settings.channel_id, settings.thread_id) if p)


def refusal(settings: Settings, channel: Mapping[str, Any]) -> str | None:
    """Why an agent may not use ``channel`` (a channel object from Discord), or None."""
    found = str(channel.get("id") or "")
    own = own_places(settings)
    if found in own:
        return None
    if channel.get("type") not in THREAD_TYPES or str(channel.get("parent_id") or "") not in own:
        return (
            f"{found} is not in this project's channel ({settings.channel_id}): agents post, "
            f"react and read only there and in its threads. {_INSTEAD}"
        )
    if channel.get("name") == THREAD_NAME:
        return (
            f"{found} is the machines' presence thread, where only discord-watch writes. {_INSTEAD}"
        )
    return None


class Scope:
    """Checks the places an agent names, for one server process (verdicts are kept)."""

    def __init__(self, settings: Settings, rest: RestClient) -> None:
        self._settings = settings
        self._rest = rest
        self._verdicts: dict[str, str | None] = {}

    async def target(self, thread_id: str | None) -> str:
        """Where a message (a reaction, a history read) goes: the given place once it is the
        project's, else the session's thread or the channel.

        Raises:
            OutOfScope: the place is not the project's, or could not be checked.
            DiscordError: Discord failed otherwise (nothing was sent).
        """
        given = (thread_id or "").strip()
        settings = self._settings
        if not given:
            return settings.thread_id or settings.channel_id
        if given in own_places(settings):
            return given
        if given not in self._verdicts:
            try:
                channel = await self._rest.get_channel(given)
            except (NotFound, Forbidden) as exc:
                raise OutOfScope(
                    f"cannot use {given}: no channel or thread the bot can see (Discord error "
                    f"{exc.code}). {_INSTEAD}"
                ) from exc
            if len(self._verdicts) >= KEPT_MAX:
                del self._verdicts[next(iter(self._verdicts))]
            self._verdicts[given] = refusal(settings, channel)
        reason = self._verdicts[given]
        if reason is not None:
            raise OutOfScope(reason)
        return given
