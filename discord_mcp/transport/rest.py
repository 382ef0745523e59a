"""The Discord REST client: one request function, and thin typed methods on top of it.

Every call goes through :meth:`RestClient.request`, which owns the rate limiter, retries and the
translation of HTTP outcomes into :mod:`discord_mcp.errors`. httpx exceptions never leave this
module. The token is only ever put in the ``Authorization`` header.

Every string a request carries passes the ``outbound`` filter the client was given
(:mod:`.outgoing`): the outbound layer's redaction, so nothing the bot sends can skip it.

Retry policy:

* 429 with Discord's JSON body: wait ``retry_after`` (the limiter closes the bucket or, for a
  global limit, everything) and try again, at most :data:`MAX_429_RETRIES` times; a wait longer
  than the caller's ``max_wait`` raises :class:`~discord_mcp.errors.RateLimited` at once. The
  wait is capped (:mod:`.waits`: seconds for the global limit, minutes for a route), and one of
  over an hour is a ban, :class:`~discord_mcp.errors.CloudflareBanned` at once.
* 429 that is not Discord's (no ``Via`` header, not JSON: Cloudflare's error page, as
  discord.py tells it): Cloudflare banned the IP; :class:`~discord_mcp.errors.CloudflareBanned`
  at once, and nothing is retried (retrying extends the ban). The limiter records the ban in
  the ledger every process shares, for as long as its ``Retry-After`` says, so no process sends
  anything until it should be over. A JSON 429 from Discord without ``retry_after`` is a limit:
  its headers say the wait, else a short default.
* 401: the token is wrong; every later request fails fast without being sent, to protect the
  invalid-request budget.
* 5xx and transport failures: bounded retries with exponential backoff, but only for requests
  that are safe to repeat (GET/PUT/PATCH/DELETE, or a message create carrying an enforced
  nonce). A request that may have reached Discord is not sent twice otherwise; a request that
  never got a connection is always safe to retry.

Kept-alive connections: a server closes a connection that stayed idle for its keep-alive
timeout, and a request written onto it at that moment fails with a read error after it left.
Nothing tells that case from a server that died while handling the request (httpcore swallows
the write error and reports the read), so a POST cannot be retried safely then. Instead a
connection is not reused after :data:`KEEPALIVE_EXPIRY_S` idle, below the servers' timeouts.
"""

from __future__ import annotations

import asyncio
import email.utils
import json as jsonlib
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

import httpx

from discord_mcp import __version__
from discord_mcp.config import Secret
from discord_mcp.errors import DiscordTransportError, RateLimited, Unauthorized
from discord_mcp.transport.outgoing import OutboundFilter, filtered, without_token
from discord_mcp.transport.ratelimit import RateLimiter
from discord_mcp.transport.responses import (
    OBJECT,
    ONE,
    Shape,
    backoff,
    ban_seconds,
    decoded,
    http_error,
    is_cloudflare_ban,
    parse_429,
)
from discord_mcp.transport.rest_commands import CommandCalls
from discord_mcp.transport.rest_messages import NO_PINGS as NO_PINGS
from discord_mcp.transport.rest_messages import THREAD_ARCHIVED as THREAD_ARCHIVED
from discord_mcp.transport.rest_messages import MessageCalls
from discord_mcp.transport.rest_messages import Upload as Upload
from discord_mcp.transport.rest_threads import ThreadCalls
from discord_mcp.transport.routes import Route
from discord_mcp.transport.wire import Channel, GatewayBot, Message, User

log = logging.getLogger(__name__)

DEFAULT_MAX_WAIT_S = 30.0
"""How long a call may wait for a rate limit before it raises RateLimited instead."""
MAX_429_RETRIES = 5
MAX_ERROR_RETRIES = 3
"""Attempts after the first for 5xx and transport failures."""
KEEPALIVE_EXPIRY_S = 4.0
"""Idle seconds after which a pooled connection is closed instead of reused: below the 5 s after
which uvicorn (the emulator), Node.js and Apache close idle connections (httpx's default, 5 s,
ties with them, so a request sent just then raced the server's close and failed)."""
_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "PATCH", "DELETE"})
_RETRY_STATUSES = frozenset({500, 502, 503, 504, 524})
USER_AGENT = f"DiscordBot (https://github.com/discord-mcp/discord-mcp, {__version__})"

Sleep = Callable[[float], Awaitable[None]]


class RestClient(CommandCalls, ThreadCalls, MessageCalls):
    """An async Discord REST v10 client for one bot token.

    Application commands and interaction answers are in :mod:`.rest_commands`, threads in
    :mod:`.rest_threads`, messages and reactions in :mod:`.rest_messages` (inherited).

    Args:
        token: the bot token (without ``Bot ``).
        api_base: e.g. ``https://discord.com/api/v10`` or the emulator's ``/api/v10``.
        transport: an httpx transport to use instead of the network (tests).
        limiter: the rate limiter; one per token and process (its ledger may be shared by
            every process of a state directory: :mod:`.shared_ledger`).
        sleep: how to wait between retries (injectable for tests).
        keepalive_expiry: idle seconds before a pooled connection is not reused any more.
        outbound: the filter every outgoing string passes (the outbound layer's redaction);
            default: the token itself is replaced.
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
        keepalive_expiry: float = KEEPALIVE_EXPIRY_S,
        outbound: OutboundFilter | None = None,
    ) -> None:
        self._token = token
        self._outbound = outbound or without_token(token.reveal())
        self._limiter = limiter or RateLimiter(sleep=sleep)
        self._sleep = sleep
        self._dead: Unauthorized | None = None
        self._answered_at: float | None = None
        self._clock_offset = 0.0
        """Discord's clock minus ours, from its answers' ``Date`` header (seconds)."""
        self._thread_types: dict[str, int] = {}
        """Per parent channel, the type of thread :meth:`create_thread` opens there."""
        self._guilds: dict[str, str] = {}
        self._guilds_lock = asyncio.Lock()
        self._http = httpx.AsyncClient(
            base_url=api_base.rstrip("/"),
            transport=transport,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            limits=httpx.Limits(keepalive_expiry=keepalive_expiry),
            headers={"User-Agent": USER_AGENT},
        )

    def discord_time(self) -> float:
        """Now on Discord's clock (Unix seconds), as its last answer's ``Date`` header put it:
        how old a message is (its snowflake's time) is read on it, whatever this machine's
        clock says."""
        return time.time() + self._clock_offset

    def _read_clock(self, headers: Mapping[str, str] | None) -> None:
        raw = (headers or {}).get("date")
        if not raw:
            return
        try:
            stamp = email.utils.parsedate_to_datetime(raw).timestamp()
        except (TypeError, ValueError, IndexError, OverflowError):
            return
        offset = stamp - time.time()
        # The header has whole seconds: move only when it is off by more than that.
        if abs(offset - self._clock_offset) > 1.5:
            self._clock_offset = offset

    def idle_for(self) -> float:
        """Seconds since Discord last answered this client (infinite before the first)."""
        if self._answered_at is None:
            return math.inf
        return time.monotonic() - self._answered_at

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
        files: Sequence[Upload] = (),
        max_wait: float = DEFAULT_MAX_WAIT_S,
        expect: Shape | None = None,
        keep: int = 0,
    ) -> Any:
        """Send one request through the rate limiter; return the decoded JSON (None for 204),
        which must be of the shape ``expect`` when given (``keep``: the request can wait, and
        leaves that many of its bucket's window to others, :mod:`.ratelimit`).

        With ``files`` the request is ``multipart/form-data`` as Discord reads it: the JSON body
        in a ``payload_json`` part and file ``n`` in a ``files[n]`` part (the body's
        ``attachments`` entries refer to them by that ``n``).

        Raises:
            DiscordHTTPError: a subclass per status (see :mod:`discord_mcp.errors`).
            CloudflareBanned: a 429 without Discord's body.
            DiscordTransportError: the connection failed after the retries.
            UnexpectedAnswer: a success whose body is not JSON, or not of the shape expected.
        """
        if self._dead is not None:
            raise self._dead
        json = filtered(json, self._outbound)
        files = [
            Upload(self._outbound(f"files[{n}].filename", f.filename), f.data, f.content_type)
            for n, f in enumerate(files)
        ]
        repeatable = route.method in _IDEMPOTENT or (
            isinstance(json, dict) and json.get("enforce_nonce") is True
        )
        body: dict[str, Any] = {"json": json}
        if files:
            body = {
                "data": {"payload_json": jsonlib.dumps(json if json is not None else {})},
                "files": [
                    (f"files[{n}]", (f.filename, f.data, f.content_type))
                    for n, f in enumerate(files)
                ],
            }
        rate_limited_tries = 0
        error_tries = 0
        while True:
            ticket = await self._limiter.acquire(route, max_wait=max_wait, keep=keep)
            headers: Mapping[str, str] | None = None
            status: int | None = None
            banned = False
            ban_for: float | None = None
            try:
                response = await self._http.request(
                    route.method,
                    route.path,
                    params=params,
                    headers={"Authorization": f"Bot {self._token.reveal()}"},
                    **body,
                )
                headers, status = response.headers, response.status_code
                banned = status == 429 and is_cloudflare_ban(response)
                ban_for = ban_seconds(response) if banned else None
            except httpx.TransportError as exc:
                never_sent = isinstance(
                    exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout
                )
                if (repeatable or never_sent) and error_tries < MAX_ERROR_RETRIES:
                    error_tries += 1
                    log.warning("%s failed (%s); retry %d", route, type(exc).__name__, error_tries)
                    await self._sleep(backoff(error_tries))
                    continue
                raise DiscordTransportError(
                    f"{route.method} {route.template}: could not reach Discord "
                    f"({type(exc).__name__}: {exc}). Check the network and DISCORD_API_BASE"
                ) from exc
            finally:
                await self._limiter.release(
                    ticket, headers, status=status, cloudflare=banned, ban_for=ban_for
                )

            self._answered_at = time.monotonic()
            self._read_clock(headers)
            log.debug("%s %s -> %d", route.method, route.template, status)
            if status < 300:
                return decoded(response, route, expect)
            if status == 429:
                asked, is_global = parse_429(response, route)
                retry_after = await self._limiter.on_429(
                    ticket, retry_after=asked, is_global=is_global
                )
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
                await self._sleep(backoff(error_tries))
                continue
            error = http_error(response, route)
            if isinstance(error, Unauthorized):
                self._dead = error
                log.error("%s", error)
            raise error

    # ---- users and gateway ------------------------------------------------------------------

    async def get_current_user(self) -> User:
        """The bot's own user (``GET /users/@me``): the cheapest token check."""
        return cast(User, await self.request(Route.of("GET", "/users/@me"), expect=ONE))

    async def get_user(self, user_id: str) -> User:
        """A user by id."""
        route = Route.of("GET", "/users/{user_id}", user_id=user_id)
        return cast(User, await self.request(route, expect=ONE))

    async def open_dm(self, user_id: str) -> Channel:
        """The bot's DM channel with a user (``POST /users/@me/channels`` opens it, or returns
        the same one again, with its ``last_message_id``)."""
        route = Route.of("POST", "/users/@me/channels")
        return cast(Channel, await self.request(route, json={"recipient_id": user_id}, expect=ONE))

    async def send_direct_message(
        self, user_id: str, text: str, *, allowed_mentions: Mapping[str, Any] | None = None
    ) -> list[Message]:
        """Send ``text`` to a user by direct message.

        Raises:
            Forbidden: code 50007 when the user accepts no direct messages from the bot.
        """
        channel = await self.open_dm(user_id)
        return await self.send_text(channel["id"], text, allowed_mentions=allowed_mentions)

    async def get_current_application(self) -> dict[str, Any]:
        """The bot's application (its ``flags`` tell which privileged intents are enabled)."""
        route = Route.of("GET", "/applications/@me")
        return cast(dict[str, Any], await self.request(route, expect=ONE))

    async def get_guild(self, guild_id: str) -> dict[str, Any]:
        """A guild, with its roles and owner."""
        route = Route.of("GET", "/guilds/{guild_id}", guild_id=guild_id)
        return cast(dict[str, Any], await self.request(route, expect=ONE))

    async def get_guild_member(self, guild_id: str, user_id: str) -> dict[str, Any]:
        """A member of a guild, with the ids of their roles."""
        route = Route.of(
            "GET", "/guilds/{guild_id}/members/{user_id}", guild_id=guild_id, user_id=user_id
        )
        return cast(dict[str, Any], await self.request(route, expect=OBJECT))

    async def get_gateway_bot(self) -> GatewayBot:
        """The gateway URL and how many identifies are left (``session_start_limit``)."""
        route = Route.of("GET", "/gateway/bot")
        return cast(GatewayBot, await self.request(route, expect=Shape(keys=("url",))))

    # ---- channels and threads ---------------------------------------------------------------

    def as_sent(self, where: str, text: str) -> str:
        """``text`` as it would leave in a request (through the ``outbound`` filter): for a
        text that must be known exactly before it is sent (a signed presence record)."""
        return self._outbound(where, text)

    async def get_channel(self, channel_id: str) -> Channel:
        """A channel or thread."""
        route = Route.of("GET", "/channels/{channel_id}", channel_id=channel_id)
        return cast(Channel, await self.request(route, expect=ONE))

    async def trigger_typing(self, channel_id: str) -> None:
        """Show "bot is typing..." in a channel for about ten seconds."""
        route = Route.of("POST", "/channels/{channel_id}/typing", channel_id=channel_id)
        await self.request(route)
