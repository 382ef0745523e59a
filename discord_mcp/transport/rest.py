"""The Discord REST client: one request function, and thin typed methods on top of it.

Every call goes through :meth:`RestClient.request`, which owns the rate limiter, retries and the
translation of HTTP outcomes into :mod:`discord_mcp.errors`. httpx exceptions never leave this
module. The token is only ever put in the ``Authorization`` header.

Retry policy:

* 429 with Discord's JSON body: wait ``retry_after`` (the limiter closes the bucket or, for a
  global limit, everything) and try again, at most :data:`MAX_429_RETRIES` times; a wait longer
  than the caller's ``max_wait`` raises :class:`~discord_mcp.errors.RateLimited` at once.
* 429 without that body: Cloudflare banned the IP; :class:`~discord_mcp.errors.CloudflareBanned`
  at once, and nothing is retried (retrying extends the ban).
* 401: the token is wrong; every later request fails fast without being sent, to protect the
  invalid-request budget.
* 5xx and transport failures: bounded retries with exponential backoff, but only for requests
  that are safe to repeat (GET/PUT/PATCH/DELETE, or a message create carrying an enforced
  nonce). A request that may have reached Discord is not sent twice otherwise; a request that
  never connected is always safe to retry.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

import httpx

from discord_mcp import __version__
from discord_mcp.config import Secret
from discord_mcp.errors import (
    BadRequest,
    CloudflareBanned,
    DiscordHTTPError,
    DiscordServerError,
    DiscordTransportError,
    Forbidden,
    NotFound,
    RateLimited,
    Unauthorized,
)
from discord_mcp.transport.chunking import MESSAGE_LIMIT, split_message
from discord_mcp.transport.ratelimit import RateLimiter
from discord_mcp.transport.rest_commands import CommandCalls
from discord_mcp.transport.routes import Route
from discord_mcp.transport.wire import Channel, GatewayBot, Message, User

log = logging.getLogger(__name__)

DEFAULT_MAX_WAIT_S = 30.0
"""How long a call may wait for a rate limit before it raises RateLimited instead."""
MAX_429_RETRIES = 5
MAX_ERROR_RETRIES = 3
"""Attempts after the first for 5xx and transport failures."""
THREAD_ARCHIVED = 50083
NO_PINGS: dict[str, Any] = {"parse": ["users"]}
"""Default ``allowed_mentions``: a user mention may ping, @everyone, @here and roles never do."""
_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "PATCH", "DELETE"})
_RETRY_STATUSES = frozenset({500, 502, 503, 504, 524})
USER_AGENT = f"DiscordBot (https://github.com/discord-mcp/discord-mcp, {__version__})"

Sleep = Callable[[float], Awaitable[None]]


class RestClient(CommandCalls):
    """An async Discord REST v10 client for one bot token.

    Application commands and interaction answers are in :mod:`.rest_commands` (inherited).

    Args:
        token: the bot token (without ``Bot ``).
        api_base: e.g. ``https://discord.com/api/v10`` or the emulator's ``/api/v10``.
        transport: an httpx transport to use instead of the network (tests).
        limiter: the rate limiter; one per token and process.
        sleep: how to wait between retries (injectable for tests).
    """

    def __init__(
        self,
        token: Secret,
        *,
        api_base: str,
        transport: httpx.AsyncBaseTransport | None = None,
        limiter: RateLimiter | None = None,
        sleep: Sleep = asyncio.sleep,
        timeout: float = 15.0,
    ) -> None:
        self._token = token
        self._limiter = limiter or RateLimiter(sleep=sleep)
        self._sleep = sleep
        self._dead: Unauthorized | None = None
        self._http = httpx.AsyncClient(
            base_url=api_base.rstrip("/"),
            transport=transport,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            headers={"User-Agent": USER_AGENT},
        )

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> RestClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def request(
        self,
        route: Route,
        *,
        json: Any = None,
        params: Mapping[str, str | int] | None = None,
        max_wait: float = DEFAULT_MAX_WAIT_S,
    ) -> Any:
        """Send one request through the rate limiter; return the decoded JSON (None for 204).

        Raises:
            DiscordHTTPError: a subclass per status (see :mod:`discord_mcp.errors`).
            CloudflareBanned: a 429 without Discord's body.
            DiscordTransportError: the connection failed after the retries.
        """
        if self._dead is not None:
            raise self._dead
        repeatable = route.method in _IDEMPOTENT or (
            isinstance(json, dict) and json.get("enforce_nonce") is True
        )
        rate_limited_tries = 0
        error_tries = 0
        while True:
            ticket = await self._limiter.acquire(route, max_wait=max_wait)
            headers: Mapping[str, str] | None = None
            try:
                response = await self._http.request(
                    route.method,
                    route.path,
                    json=json,
                    params=params,
                    headers={"Authorization": f"Bot {self._token.reveal()}"},
                )
                headers = response.headers
            except httpx.TransportError as exc:
                never_sent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout)
                if (repeatable or never_sent) and error_tries < MAX_ERROR_RETRIES:
                    error_tries += 1
                    log.warning("%s failed (%s); retry %d", route, type(exc).__name__, error_tries)
                    await self._sleep(_backoff(error_tries))
                    continue
                raise DiscordTransportError(
                    f"{route.method} {route.template}: could not reach Discord "
                    f"({type(exc).__name__}: {exc}). Check the network and DISCORD_API_BASE"
                ) from exc
            finally:
                self._limiter.release(ticket, headers)

            status = response.status_code
            log.debug("%s %s -> %d", route.method, route.template, status)
            if status < 300:
                return response.json() if response.content else None
            if status == 429:
                retry_after, is_global = _parse_429(response, route)
                self._limiter.on_429(ticket, retry_after=retry_after, is_global=is_global)
                if retry_after > max_wait or rate_limited_tries >= MAX_429_RETRIES:
                    raise RateLimited(
                        method=route.method,
                        route=route.template,
                        retry_after=retry_after,
                        is_global=is_global,
                    )
                rate_limited_tries += 1
                continue
            if status in _RETRY_STATUSES and repeatable and error_tries < MAX_ERROR_RETRIES:
                error_tries += 1
                log.warning("%s got HTTP %d; retry %d", route, status, error_tries)
                await self._sleep(_backoff(error_tries))
                continue
            error = _http_error(response, route)
            if isinstance(error, Unauthorized):
                self._dead = error
                log.error("%s", error)
            raise error

    # ---- users and gateway ------------------------------------------------------------------

    async def get_current_user(self) -> User:
        """The bot's own user (``GET /users/@me``): the cheapest token check."""
        return cast(User, await self.request(Route.of("GET", "/users/@me")))

    async def get_user(self, user_id: str) -> User:
        """A user by id."""
        return cast(User, await self.request(Route.of("GET", "/users/{user_id}", user_id=user_id)))

    async def get_current_application(self) -> dict[str, Any]:
        """The bot's application (its ``flags`` tell which privileged intents are enabled)."""
        return cast(dict[str, Any], await self.request(Route.of("GET", "/applications/@me")))

    async def get_guild(self, guild_id: str) -> dict[str, Any]:
        """A guild, with its roles and owner."""
        route = Route.of("GET", "/guilds/{guild_id}", guild_id=guild_id)
        return cast(dict[str, Any], await self.request(route))

    async def get_guild_member(self, guild_id: str, user_id: str) -> dict[str, Any]:
        """A member of a guild, with the ids of their roles."""
        route = Route.of(
            "GET", "/guilds/{guild_id}/members/{user_id}", guild_id=guild_id, user_id=user_id
        )
        return cast(dict[str, Any], await self.request(route))

    async def get_gateway_bot(self) -> GatewayBot:
        """The gateway URL and how many identifies are left (``session_start_limit``)."""
        return cast(GatewayBot, await self.request(Route.of("GET", "/gateway/bot")))

    # ---- channels and threads ---------------------------------------------------------------

    async def get_channel(self, channel_id: str) -> Channel:
        """A channel or thread."""
        route = Route.of("GET", "/channels/{channel_id}", channel_id=channel_id)
        return cast(Channel, await self.request(route))

    async def modify_channel(self, channel_id: str, **fields: Any) -> Channel:
        """Change a channel or thread (name, archived, locked, auto_archive_duration...)."""
        route = Route.of("PATCH", "/channels/{channel_id}", channel_id=channel_id)
        return cast(Channel, await self.request(route, json=fields))

    async def archive_thread(self, thread_id: str) -> Channel:
        """Archive a thread (it stays readable and reopens when someone writes in it)."""
        return await self.modify_channel(thread_id, archived=True)

    async def unarchive_thread(self, thread_id: str) -> Channel:
        """Reopen an archived thread."""
        return await self.modify_channel(thread_id, archived=False)

    async def create_thread(
        self, channel_id: str, name: str, *, auto_archive_duration: int = 1440
    ) -> Channel:
        """A public thread (type 11) without a starter message.

        Discord's default type for this endpoint is a *private* thread, so the type is explicit.
        """
        route = Route.of("POST", "/channels/{channel_id}/threads", channel_id=channel_id)
        body = {
            "name": _thread_name(name),
            "type": 11,
            "auto_archive_duration": auto_archive_duration,
        }
        return cast(Channel, await self.request(route, json=body))

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
        return cast(Channel, await self.request(route, json=body))

    async def trigger_typing(self, channel_id: str) -> None:
        """Show "bot is typing..." in a channel for about ten seconds."""
        route = Route.of("POST", "/channels/{channel_id}/typing", channel_id=channel_id)
        await self.request(route)

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
    ) -> Message:
        """Post one message (content at most 2000 characters; see :meth:`send_text`).

        Carries a nonce that Discord enforces, so a retry after a lost response cannot post it
        twice. A message to an archived thread reopens the thread and is sent again once.

        Raises:
            ValueError: ``content`` is longer than Discord allows; split it first.
        """
        if content is not None and len(content) > MESSAGE_LIMIT:
            raise ValueError(
                f"content is {len(content)} characters; split it with split_message first"
            )
        body: dict[str, Any] = {
            "allowed_mentions": dict(allowed_mentions or NO_PINGS),
            "nonce": str(secrets.randbelow(10**18)),
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
        route = Route.of("POST", "/channels/{channel_id}/messages", channel_id=channel_id)
        return cast(Message, await self._reopening(channel_id, route, body))

    async def send_text(
        self,
        channel_id: str,
        text: str,
        *,
        components: Sequence[Mapping[str, Any]] | None = None,
        allowed_mentions: Mapping[str, Any] | None = None,
        reply_to: str | None = None,
    ) -> list[Message]:
        """Post ``text`` of any length as as many messages as it takes, in order.

        The components go on the last message; the reply reference on the first.
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
        return cast(Message, await self.request(route))

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
        return cast(list[Message], await self.request(route, params=params))

    async def edit_message(
        self,
        channel_id: str,
        message_id: str,
        *,
        content: str | None = None,
        embeds: Sequence[Mapping[str, Any]] | None = None,
        components: Sequence[Mapping[str, Any]] | None = None,
        allowed_mentions: Mapping[str, Any] | None = None,
    ) -> Message:
        """Edit a message in place (edits notify nobody). Only the given fields change."""
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
        return cast(Message, await self._reopening(channel_id, route, body))

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
        return cast(list[User], await self.request(route, params=params))

    # ---- interactions -----------------------------------------------------------------------

    async def create_interaction_response(
        self,
        interaction_id: str,
        interaction_token: str,
        response_type: int,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        """Answer an interaction (must happen within 3 seconds of the click).

        Exempt from every rate limit, as Discord documents.
        """
        route = Route(
            "POST",
            "/interactions/{interaction_id}/{interaction_token}/callback",
            {"interaction_id": interaction_id, "interaction_token": interaction_token},
            rate_limited=False,
            global_limited=False,
        )
        body: dict[str, Any] = {"type": response_type}
        if data is not None:
            body["data"] = dict(data)
        await self.request(route, json=body, max_wait=2.5)

    async def create_followup(
        self,
        application_id: str,
        interaction_token: str,
        content: str,
        *,
        ephemeral: bool = False,
    ) -> Message:
        """A followup message for an interaction (within 15 minutes of it)."""
        body: dict[str, Any] = {"content": content, "allowed_mentions": dict(NO_PINGS)}
        if ephemeral:
            body["flags"] = 64
        return cast(
            Message,
            await self.request(
                _webhook_route("POST", application_id, interaction_token, ""), json=body
            ),
        )

    async def edit_original_response(
        self,
        application_id: str,
        interaction_token: str,
        *,
        content: str | None = None,
        components: Sequence[Mapping[str, Any]] | None = None,
    ) -> Message:
        """Edit the message an interaction responded with (or the clicked message, after 6/7)."""
        body: dict[str, Any] = {}
        if content is not None:
            body["content"] = content
        if components is not None:
            body["components"] = [dict(c) for c in components]
        route = _webhook_route("PATCH", application_id, interaction_token, "/messages/@original")
        return cast(Message, await self.request(route, json=body))

    # ---- helpers ----------------------------------------------------------------------------

    async def _reopening(self, channel_id: str, route: Route, body: Any) -> Any:
        """Send; if the target thread is archived (50083), reopen it and send once more."""
        try:
            return await self.request(route, json=body)
        except BadRequest as exc:
            if exc.code != THREAD_ARCHIVED:
                raise
        log.info("thread %s is archived; reopening it", channel_id)
        await self.unarchive_thread(channel_id)
        return await self.request(route, json=body)


def _webhook_route(method: str, application_id: str, token: str, suffix: str) -> Route:
    # Interaction followups use the webhook routes with the application id and the interaction
    # token; they are outside the global limit but have their own buckets.
    return Route(
        method,
        "/webhooks/{webhook_id}/{webhook_token}" + suffix,
        {"webhook_id": application_id, "webhook_token": token},
        global_limited=False,
    )


def _thread_name(name: str) -> str:
    name = " ".join(name.split()) or "thread"
    return name if len(name) <= 100 else name[:99] + "…"


def _backoff(attempt: int) -> float:
    return float(min(0.5 * 2 ** (attempt - 1), 8.0) * (0.5 + random.random()))  # noqa: S311


def _json_body(response: httpx.Response) -> dict[str, Any] | None:
    try:
        body = response.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _parse_429(response: httpx.Response, route: Route) -> tuple[float, bool]:
    body = _json_body(response)
    if body is None or not isinstance(body.get("retry_after"), int | float):
        raise CloudflareBanned(route.method, route.template)
    retry_after = max(float(body["retry_after"]), 0.0)
    is_global = bool(body.get("global")) or response.headers.get("x-ratelimit-scope") == "global"
    return retry_after, is_global


def _http_error(response: httpx.Response, route: Route) -> DiscordHTTPError:
    body = _json_body(response) or {}
    code = body.get("code") if isinstance(body.get("code"), int) else 0
    message = body.get("message") if isinstance(body.get("message"), str) else ""
    errors = body.get("errors") if isinstance(body.get("errors"), dict) else None
    status = response.status_code
    kind: type[DiscordHTTPError] = {
        400: BadRequest,
        401: Unauthorized,
        403: Forbidden,
        404: NotFound,
    }.get(status, DiscordServerError if status >= 500 else DiscordHTTPError)
    return kind(
        status,
        cast(int, code),
        cast(str, message),
        method=route.method,
        route=route.template,
        errors=cast(dict[str, Any] | None, errors),
    )
