"""Messages and reactions: posting (split to Discord's length, with files), reading, editing,
deleting, reacting, and a thread reopened when a message to it finds it archived.

A part of :class:`~discord_mcp.transport.rest.RestClient` (it inherits these methods), kept in
its own module so ``rest.py`` stays readable; every call still goes through the one
:meth:`RestClient.request`.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from discord_mcp.errors import BadRequest
from discord_mcp.transport.chunking import MESSAGE_LIMIT, split_message
from discord_mcp.transport.responses import MANY, ONE, Shape
from discord_mcp.transport.routes import Route
from discord_mcp.transport.wire import Channel, Message, User

log = logging.getLogger(__name__)

THREAD_ARCHIVED = 50083
NO_PINGS: dict[str, Any] = {"parse": ["users"]}
"""Default ``allowed_mentions``: a user mention may ping, @everyone, @here and roles never do."""


@dataclass(frozen=True, slots=True)
class Upload:
    """A file to send with a message: one ``files[n]`` part of a multipart request."""

    filename: str
    data: bytes
    content_type: str = "application/octet-stream"


class MessageCalls:
    """Message and reaction calls; mixed into ``RestClient``."""

    async def request(
        self,
        route: Route,
        *,
        json: Any = None,
        params: Mapping[str, str | int] | None = None,
        files: Sequence[Upload] = (),
        max_wait: float = 30.0,
        expect: Shape | None = None,
        keep: int = 0,
    ) -> Any:
        raise NotImplementedError  # RestClient.request is the one that runs

    async def unarchive_thread(self, thread_id: str) -> Channel:
        raise NotImplementedError  # ThreadCalls.unarchive_thread is the one that runs

    # ---- messages ---------------------------------------------------------------------------

    async def create_message(
        self,
        channel_id: str,
        content: str | None = None,
        *,
        embeds: Sequence[Mapping[str, Any]] | None = None,
        components: Sequence[Mapping[str, Any]] | None = None,
        allowed_mentions: Mapping[str, Any] | None = None,
        reply_to: str | None = None,
        flags: int | None = None,
        files: Sequence[Upload] = (),
        nonce: str | None = None,
    ) -> Message:
        """Post one message (content at most 2000 characters; see :meth:`send_text`), with
        ``files`` attached if given (at most 10; the caller checks Discord's size limits).

        Carries a nonce that Discord enforces, so a retry after a lost response cannot post it
        twice (``nonce``: one the caller keeps, at most 25 characters, so a retry after a
        restart within Discord's few minutes cannot either). A message to an archived thread
        reopens the thread and is sent again once.

        Raises:
            ValueError: ``content`` is longer than Discord allows; split it first.
        """
        if content is not None and len(content) > MESSAGE_LIMIT:
            raise ValueError(
                f"content is {len(content)} characters; split it with split_message first"
            )
        body: dict[str, Any] = {
            "allowed_mentions": dict(allowed_mentions or NO_PINGS),
            "nonce": nonce or str(secrets.randbelow(10**18)),
            "enforce_nonce": True,
        }
        if content is not None:
            body["content"] = content
        if embeds:
            body["embeds"] = [dict(e) for e in embeds]
        if components:
            body["components"] = [dict(c) for c in components]
        if reply_to:
            body["message_reference"] = {"message_id": reply_to, "fail_if_not_exists": False}
        if flags is not None:
            body["flags"] = flags
        if files:
            body["attachments"] = [{"id": n, "filename": f.filename} for n, f in enumerate(files)]
        route = Route.of("POST", "/channels/{channel_id}/messages", channel_id=channel_id)
        return cast(Message, await self._reopening(channel_id, route, body, files))

    async def send_text(
        self,
        channel_id: str,
        text: str,
        *,
        components: Sequence[Mapping[str, Any]] | None = None,
        allowed_mentions: Mapping[str, Any] | None = None,
        reply_to: str | None = None,
        files: Sequence[Upload] = (),
    ) -> list[Message]:
        """Post ``text`` of any length as as many messages as it takes, in order.

        The components and files go on the last message; the reply reference on the first.
        """
        chunks = split_message(text) or [""]
        sent: list[Message] = []
        for index, chunk in enumerate(chunks):
            last = index == len(chunks) - 1
            sent.append(
                await self.create_message(
                    channel_id,
                    chunk or None,
                    components=components if last else None,
                    allowed_mentions=allowed_mentions,
                    reply_to=reply_to if index == 0 else None,
                    files=files if last else (),
                )
            )
        return sent

    async def get_message(self, channel_id: str, message_id: str) -> Message:
        """One message, with its reactions."""
        route = Route.of(
            "GET",
            "/channels/{channel_id}/messages/{message_id}",
            channel_id=channel_id,
            message_id=message_id,
        )
        return cast(Message, await self.request(route, expect=ONE))

    async def list_messages(
        self,
        channel_id: str,
        *,
        before: str | None = None,
        after: str | None = None,
        limit: int = 50,
    ) -> list[Message]:
        """Up to ``limit`` (1-100) messages, newest first, as Discord returns them."""
        if before and after:
            raise ValueError("before and after are mutually exclusive")
        params: dict[str, str | int] = {"limit": max(1, min(limit, 100))}
        if before:
            params["before"] = before
        if after:
            params["after"] = after
        route = Route.of("GET", "/channels/{channel_id}/messages", channel_id=channel_id)
        return cast(list[Message], await self.request(route, params=params, expect=MANY))

    async def edit_message(
        self,
        channel_id: str,
        message_id: str,
        *,
        content: str | None = None,
        embeds: Sequence[Mapping[str, Any]] | None = None,
        components: Sequence[Mapping[str, Any]] | None = None,
        allowed_mentions: Mapping[str, Any] | None = None,
        keep: int = 0,
    ) -> Message:
        """Edit a message in place (edits notify nobody). Only the given fields change.

        ``keep``: an edit that can wait (streamed text, a running job's status) leaves that many
        of the channel's edit window to the others (:meth:`request`)."""
        if content is not None and len(content) > MESSAGE_LIMIT:
            raise ValueError(f"content is {len(content)} characters; at most 2000 fit")
        body: dict[str, Any] = {"allowed_mentions": dict(allowed_mentions or NO_PINGS)}
        if content is not None:
            body["content"] = content
        if embeds is not None:
            body["embeds"] = [dict(e) for e in embeds]
        if components is not None:
            body["components"] = [dict(c) for c in components]
        route = Route.of(
            "PATCH",
            "/channels/{channel_id}/messages/{message_id}",
            channel_id=channel_id,
            message_id=message_id,
        )
        return cast(Message, await self._reopening(channel_id, route, body, keep=keep))

    async def delete_message(self, channel_id: str, message_id: str) -> None:
        """Delete a message."""
        route = Route.of(
            "DELETE",
            "/channels/{channel_id}/messages/{message_id}",
            channel_id=channel_id,
            message_id=message_id,
        )
        await self.request(route)

    # ---- reactions --------------------------------------------------------------------------

    async def add_reaction(self, channel_id: str, message_id: str, emoji: str) -> None:
        """React to a message as the bot (unicode emoji, or ``name:id`` for a custom one)."""
        route = Route.of(
            "PUT",
            "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me",
            channel_id=channel_id,
            message_id=message_id,
            emoji=emoji,
        )
        await self._reopening(channel_id, route, None)

    async def list_reaction_users(
        self,
        channel_id: str,
        message_id: str,
        emoji: str,
        *,
        after: str | None = None,
        limit: int = 100,
    ) -> list[User]:
        """Who reacted with ``emoji`` (up to 100 per page, after a user id)."""
        params: dict[str, str | int] = {"limit": max(1, min(limit, 100))}
        if after:
            params["after"] = after
        route = Route.of(
            "GET",
            "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}",
            channel_id=channel_id,
            message_id=message_id,
            emoji=emoji,
        )
        return cast(list[User], await self.request(route, params=params, expect=MANY))

    # ---- helpers ----------------------------------------------------------------------------

    async def _reopening(
        self,
        channel_id: str,
        route: Route,
        body: Any,
        files: Sequence[Upload] = (),
        *,
        keep: int = 0,
    ) -> Any:
        """Send; if the target thread is archived (50083), reopen it and send once more. A
        request with a body answers with the object it made or changed (``ONE``)."""
        expect = ONE if body is not None else None
        try:
            return await self.request(route, json=body, files=files, expect=expect, keep=keep)
        except BadRequest as exc:
            if exc.code != THREAD_ARCHIVED:
                raise
        log.info("thread %s is archived; reopening it", channel_id)
        await self.unarchive_thread(channel_id)
        return await self.request(route, json=body, files=files, expect=expect, keep=keep)
