"""Threads: creating, archiving and reopening them, the REST calls questions and runs need.

A part of :class:`~discord_mcp.transport.rest.RestClient` (it inherits these methods), kept in
its own module so ``rest.py`` stays readable; every call still goes through the one
:meth:`RestClient.request`. From Discord's documentation (resources/channel, topics/threads):

- a thread without a starter message (``POST /channels/{channel.id}/threads``) is private unless
  its ``type`` says otherwise; in an announcement channel (5) its threads are announcement
  threads (10), in a text channel public ones (11). We ask for a public one and, when that is
  refused under an announcement channel, for an announcement thread (remembered per channel),
  so a text channel costs no extra request;
- a thread from a message (``POST .../messages/{message.id}/threads``) takes its parent's kind
  by itself, and its id is the message's;
- an archived thread stays readable and reopens when someone writes in it (a bot's message to
  it fails with 50083 instead; :meth:`RestClient.create_message` reopens it and sends again);
- a guild's active (unarchived) threads, of every channel the bot can see, are listed by ``GET
  /guilds/{guild.id}/threads/active``; a channel's archived public ones by ``GET
  /channels/{channel.id}/threads/archived/public`` (READ_MESSAGE_HISTORY).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, cast

from discord_mcp.errors import BadRequest, DiscordError
from discord_mcp.transport.responses import ONE, Shape
from discord_mcp.transport.routes import Route
from discord_mcp.transport.wire import Channel

ANNOUNCEMENT = 5
"""A guild announcement channel: its threads are announcement threads."""
ANNOUNCEMENT_THREAD, PUBLIC_THREAD = 10, 11


class ThreadCalls:
    """Thread calls; mixed into ``RestClient``."""

    _thread_types: dict[str, int]
    _guilds: dict[str, str]
    _guilds_lock: asyncio.Lock

    async def request(
        self,
        route: Route,
        *,
        json: Any = None,
        params: Mapping[str, str | int] | None = None,
        max_wait: float = 30.0,
        expect: Shape | None = None,
    ) -> Any:
        raise NotImplementedError  # RestClient.request is the one that runs

    async def get_channel(self, channel_id: str) -> Channel:
        raise NotImplementedError  # RestClient.get_channel is the one that runs

    async def guild_of(self, channel_id: str) -> str:
        """The guild a channel or thread is in ("" for none), asked of Discord once per client:
        a channel never moves to another guild. Every start-up step that needs the configured
        channel's guild (slash commands, presence, catch-up, runs) shares one ``GET
        /channels/{id}``, so machines starting at once stay within that bucket."""
        async with self._guilds_lock:
            if channel_id not in self._guilds:
                channel = await self.get_channel(channel_id)
                self._guilds[channel_id] = str(channel.get("guild_id") or "")
            return self._guilds[channel_id]

    async def modify_channel(self, channel_id: str, **fields: Any) -> Channel:
        """Change a channel or thread (name, archived, locked, auto_archive_duration...)."""
        route = Route.of("PATCH", "/channels/{channel_id}", channel_id=channel_id)
        return cast(Channel, await self.request(route, json=fields, expect=ONE))

    async def list_active_threads(self, guild_id: str) -> list[Channel]:
        """The guild's active threads (every channel's, as far as the bot can see them)."""
        route = Route.of("GET", "/guilds/{guild_id}/threads/active", guild_id=guild_id)
        found = await self.request(route, expect=Shape(keys=("threads",)))
        threads = found["threads"] if isinstance(found["threads"], list) else None
        return [cast(Channel, t) for t in threads or [] if isinstance(t, dict)]

    async def list_public_archived_threads(self, channel_id: str) -> list[Channel]:
        """The channel's archived public (or announcement) threads, most recently archived
        first (the first page: up to 100)."""
        route = Route.of(
            "GET", "/channels/{channel_id}/threads/archived/public", channel_id=channel_id
        )
        found = await self.request(route, params={"limit": 100}, expect=Shape(keys=("threads",)))
        threads = found["threads"] if isinstance(found["threads"], list) else None
        return [cast(Channel, t) for t in threads or [] if isinstance(t, dict)]

    async def public_threads_archived_since(self, channel_id: str, since: float) -> list[Channel]:
        """The channel's public (or announcement) threads archived at ``since`` (wall-clock
        seconds) or later: the listing, newest first, page after page until it reaches
        ``since``. What it costs follows how many threads were archived since then, not how
        many the channel ever had.

        Raises:
            DiscordError: a thread without a readable ``archive_timestamp``, or a listing that
                does not move on (then nobody can say what was archived).
        """
        route = Route.of(
            "GET", "/channels/{channel_id}/threads/archived/public", channel_id=channel_id
        )
        found: dict[str, Channel] = {}
        before: str | None = None
        while True:
            params: dict[str, str | int] = {"limit": 100}
            if before is not None:
                params["before"] = before
            answer = await self.request(route, params=params, expect=Shape(keys=("threads",)))
            page = answer["threads"] if isinstance(answer["threads"], list) else []
            stamps = [(_archived_at(t), t) for t in page if isinstance(t, dict)]
            fresh = [t for at, t in stamps if at >= since and str(t.get("id")) not in found]
            found.update((str(t.get("id")), cast(Channel, t)) for t in fresh)
            if not stamps or not answer.get("has_more") or min(at for at, _ in stamps) < since:
                return list(found.values())
            if not fresh:
                raise DiscordError(f"the archived threads of {channel_id} do not move on")
            # One microsecond past the oldest of the page: threads archived at that very
            # instant are listed again (and counted once), never skipped.
            oldest = min(at for at, _ in stamps)
            before = datetime.fromtimestamp(oldest + 1e-6, UTC).isoformat()

    async def archive_thread(self, thread_id: str) -> Channel:
        """Archive a thread (it stays readable and reopens when someone writes in it)."""
        return await self.modify_channel(thread_id, archived=True)

    async def unarchive_thread(self, thread_id: str) -> Channel:
        """Reopen an archived thread."""
        return await self.modify_channel(thread_id, archived=False)

    async def create_thread(
        self, channel_id: str, name: str, *, auto_archive_duration: int = 1440
    ) -> Channel:
        """A public thread without a starter message: type 11 in a text channel, 10 (an
        announcement thread, the only kind it takes) in an announcement channel.

        Discord's default type for this endpoint is a *private* thread, so the type is explicit.
        A refused public thread makes us look at the parent once: under an announcement
        channel the thread is asked for again as an announcement thread, and every later one
        is asked for as one at once.
        """
        route = Route.of("POST", "/channels/{channel_id}/threads", channel_id=channel_id)
        body = {
            "name": _thread_name(name),
            "type": self._thread_types.get(channel_id, PUBLIC_THREAD),
            "auto_archive_duration": auto_archive_duration,
        }
        try:
            return cast(Channel, await self.request(route, json=body, expect=ONE))
        except BadRequest:
            if body["type"] != PUBLIC_THREAD:
                raise
            parent = await self.get_channel(channel_id)
            if parent.get("type") != ANNOUNCEMENT:
                raise
        self._thread_types[channel_id] = ANNOUNCEMENT_THREAD
        body["type"] = ANNOUNCEMENT_THREAD
        return cast(Channel, await self.request(route, json=body, expect=ONE))

    async def create_thread_from_message(
        self, channel_id: str, message_id: str, name: str, *, auto_archive_duration: int = 1440
    ) -> Channel:
        """A thread started from a message; its id equals the message's id."""
        route = Route.of(
            "POST",
            "/channels/{channel_id}/messages/{message_id}/threads",
            channel_id=channel_id,
            message_id=message_id,
        )
        body = {"name": _thread_name(name), "auto_archive_duration": auto_archive_duration}
        return cast(Channel, await self.request(route, json=body, expect=ONE))


def _archived_at(thread: Mapping[str, Any]) -> float:
    metadata = thread.get("thread_metadata")
    stamp = metadata.get("archive_timestamp") if isinstance(metadata, Mapping) else None
    try:
        return datetime.fromisoformat(str(stamp)).timestamp()
    except ValueError:
        raise DiscordError(f"thread {thread.get('id')} has no archive time: {stamp!r}") from None


def _thread_name(name: str) -> str:
    name = " ".join(name.split()) or "thread"
    return name if len(name) <= 100 else name[:99] + "…"
