"""The emulator's own rate limits: fixed windows per (bucket, major parameter), as Discord has.

Theory
------
Discord limits each route *bucket* separately for each *major parameter*: the channel id for
``/channels/{channel_id}/...``, the guild id for guild routes, the webhook id and token for
webhook routes. ``POST /channels/1/messages`` and ``POST /channels/2/messages`` share a bucket
(the same ``X-RateLimit-Bucket`` hash, which never contains the id) but count separately.
Routes without a major parameter count per bot. Each limit is a fixed window: the first request
opens it, ``limit`` requests fit in it, and it closes ``per`` seconds after it opened. Every
limited response says where the window stands (``X-RateLimit-Limit``, ``-Remaining``,
``-Reset`` as Unix seconds, ``-Reset-After`` as seconds, ``-Bucket``); a request past the limit
gets a 429 with ``retry_after`` (the rest of the window) and ``X-RateLimit-Scope: user``.

On top, a **global** limit of 50 requests per second per bot (interaction callbacks and
webhook followups are exempt) answers 429 with ``"global": true``,
``X-RateLimit-Global: true`` and ``X-RateLimit-Scope: global``. Separately Cloudflare counts
**invalid requests** (401, 403 and 429 answers, except 429s of scope ``shared``): 10,000 in 10
minutes gets the client banned, which shows as a 429 with an HTML body and none of Discord's
headers (no ``X-RateLimit-*``, no ``Via``). The ban lasts about an hour, and a request sent
during it makes it worse: here each one starts its hour again, so only a client that stops
sending sees it lift.

Every window (route, global, invalid-request, ban) is multiplied by ``scale`` when it is
measured, so changing the scale at run time also shortens or lengthens windows already open.

The emulator's route table (Discord publishes no table; these follow its long-observed
limits, and a client must read the headers anyway):

=====================================================  ===========  ==========  ==============
route                                                  limit        window (s)  major
=====================================================  ===========  ==========  ==============
POST   /channels/{channel_id}/messages                 5            5           channel
PATCH  /channels/{channel_id}/messages/{message_id}    5            5           channel
DELETE /channels/{channel_id}/messages/{message_id}    5            5           channel
GET    /channels/{channel_id}/messages                 5            1           channel
GET    /channels/{channel_id}/messages/{message_id}    5            1           channel
PUT/DELETE .../reactions/{emoji_name}/@me (one bucket) 1            0.25        channel
GET    .../reactions/{emoji_name}                      5            1           channel
POST   .../messages/{message_id}/threads               5            5           channel
POST   /channels/{channel_id}/threads                  5            5           channel
GET    /channels/{channel_id}/threads/archived/public  5            1           channel
GET    /channels/{channel_id}                          5            1           channel
PATCH  /channels/{channel_id}                          5            5           channel
POST   /channels/{channel_id}/typing                   5            5           channel
GET    /users/@me, /users/{user_id}                    5            1           (per bot)
POST   /users/@me/channels                             5            1           (per bot)
GET    /applications/@me                               5            1           (per bot)
GET    /oauth2/applications/@me                        5            1           (per bot)
GET    /guilds/{guild_id}                              5            1           guild
GET    /guilds/{guild_id}/roles, .../roles/{role_id}   5            1           guild
GET    /guilds/{guild_id}/members/{user_id}            5            1           guild
GET    /gateway/bot                                    5            5           (per bot)
POST   /webhooks/{webhook_id}/{webhook_token}          5            2           webhook+token
PATCH  /webhooks/.../messages/@original                5            2           webhook+token
POST   /interactions/{id}/{token}/callback             none (and no global limit)
=====================================================  ===========  ==========  ==============

Webhook routes are outside the global limit too.

One hidden sub-limit is modelled, because a long-running bot meets it: editing a message older
than an hour (:data:`OLD_EDITS`, 3 per 6 s per channel, as bot authors observe it; Discord
documents only its error code) is refused past it with a 429 whose JSON body carries code 30046
"Maximum number of edits to messages older than 1 hour reached", while the route's own headers
still show room (a sub-rate-limit). Messages age with the emulator's clock (``idle.py``).
Not modelled: the other sub-limits (channel renames 2 per 10 minutes, old-message deletes),
which surface only as 429s; use a fault (``POST /_emulator/faults``) to script one.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    """``requests`` per ``per`` seconds (before scaling), counted in ``bucket``."""

    bucket: str
    requests: int
    per: float


ROUTE_LIMITS: dict[str, Limit] = {
    "POST /channels/{channel_id}/messages": Limit("messages:create", 5, 5.0),
    "PATCH /channels/{channel_id}/messages/{message_id}": Limit("messages:edit", 5, 5.0),
    "DELETE /channels/{channel_id}/messages/{message_id}": Limit("messages:delete", 5, 5.0),
    "GET /channels/{channel_id}/messages": Limit("messages:list", 5, 1.0),
    "GET /channels/{channel_id}/messages/{message_id}": Limit("messages:get", 5, 1.0),
    "PUT /channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me": Limit(
        "reactions:own", 1, 0.25
    ),
    "DELETE /channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me": Limit(
        "reactions:own", 1, 0.25
    ),
    "GET /channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}": Limit(
        "reactions:list", 5, 1.0
    ),
    "POST /channels/{channel_id}/messages/{message_id}/threads": Limit("threads:from", 5, 5.0),
    "POST /channels/{channel_id}/threads": Limit("threads:create", 5, 5.0),
    "GET /channels/{channel_id}/threads/archived/public": Limit("threads:archived", 5, 1.0),
    "GET /channels/{channel_id}": Limit("channels:get", 5, 1.0),
    "PATCH /channels/{channel_id}": Limit("channels:edit", 5, 5.0),
    "POST /channels/{channel_id}/typing": Limit("channels:typing", 5, 5.0),
    "GET /users/@me": Limit("users:get", 5, 1.0),
    "GET /users/{user_id}": Limit("users:get", 5, 1.0),
    "POST /users/@me/channels": Limit("users:dm", 5, 1.0),
    "GET /applications/@me": Limit("applications:current", 5, 1.0),
    "GET /oauth2/applications/@me": Limit("applications:me", 5, 1.0),
    "GET /guilds/{guild_id}": Limit("guilds:get", 5, 1.0),
    "GET /guilds/{guild_id}/roles": Limit("guilds:roles", 5, 1.0),
    "GET /guilds/{guild_id}/roles/{role_id}": Limit("guilds:roles", 5, 1.0),
    "GET /guilds/{guild_id}/members/{user_id}": Limit("guilds:member", 5, 1.0),
    "GET /gateway/bot": Limit("gateway:bot", 5, 5.0),
    "POST /webhooks/{webhook_id}/{webhook_token}": Limit("webhooks:execute", 5, 2.0),
    "PATCH /webhooks/{webhook_id}/{webhook_token}/messages/@original": Limit(
        "webhooks:edit", 5, 2.0
    ),
}

OLD_EDITS = Limit("messages:edit_old", 3, 6.0)
"""Edits of messages older than :data:`OLD_MESSAGE_SECONDS`, per channel."""
OLD_MESSAGE_SECONDS = 3600.0
OLD_EDITS_CODE = 30046
OLD_EDITS_MESSAGE = "Maximum number of edits to messages older than 1 hour reached. Try again later"

GLOBAL_WINDOW_SECONDS = 1.0
INVALID_WINDOW_SECONDS = 600.0
BAN_SECONDS = 3600.0
"""How long a Cloudflare ban lasts after the last request sent during it (Discord: "about an
hour")."""
_PRUNE_ABOVE = 4096


def bucket_hash(bucket: str) -> str:
    """The opaque ``X-RateLimit-Bucket`` value of a bucket (never contains an id)."""
    return hashlib.sha256(f"discord-mcp-emulator:{bucket}".encode()).hexdigest()[:32]


@dataclass
class _Window:
    opened: float
    count: int = 0


@dataclass(frozen=True)
class Verdict:
    """The outcome of counting one request: allowed or not, and where its window stands."""

    allowed: bool
    limit: int
    remaining: int
    reset_after: float
    bucket_hash: str | None = None

    def headers(self, wall_now: float) -> dict[str, str]:
        """The five ``X-RateLimit-*`` headers (for a route bucket)."""
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": f"{wall_now + self.reset_after:.3f}",
            "X-RateLimit-Reset-After": f"{self.reset_after:.3f}",
        }
        if self.bucket_hash is not None:
            headers["X-RateLimit-Bucket"] = self.bucket_hash
        return headers


def limited_headers(retry_after: float, *, scope: str, is_global: bool) -> dict[str, str]:
    """Headers every JSON 429 carries besides the bucket's (``Via`` tells it from Cloudflare)."""
    headers = {
        "Retry-After": str(max(1, math.ceil(retry_after))),
        "X-RateLimit-Scope": scope,
        "Via": "1.1 google",
    }
    if is_global:
        headers["X-RateLimit-Global"] = "true"
    return headers


def limited_body(
    retry_after: float, *, is_global: bool, with_retry_after: bool = True
) -> dict[str, object]:
    body: dict[str, object] = {"message": "You are being rate limited.", "global": is_global}
    if with_retry_after:
        body["retry_after"] = retry_after
    body["code"] = 0
    return body


def _ceil_ms(seconds: float) -> float:
    # Round up so a client never sees 0.000 while the window is still open.
    return max(0.0, math.ceil(seconds * 1000) / 1000)


class RateLimiter:
    """Counts requests in fixed windows; not thread-safe (use it from one event loop)."""

    def __init__(
        self,
        *,
        scale: float = 1.0,
        global_limit: int = 50,
        invalid_limit: int = 10_000,
        ban_seconds: float = BAN_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.scale = scale
        self.global_limit = global_limit
        self.invalid_limit = invalid_limit
        self.ban_seconds = ban_seconds
        self._clock = clock
        self._windows: dict[tuple[str, str], _Window] = {}
        self._global: _Window | None = None
        self._invalid: _Window | None = None
        self._ban_started: float | None = None

    def _current(self, window: _Window | None, per: float, now: float) -> _Window:
        if window is None or now >= window.opened + per * self.scale:
            return _Window(opened=now)
        return window

    def _verdict(self, window: _Window, limit: Limit | None, requests: int, per: float) -> Verdict:
        reset_after = _ceil_ms(window.opened + per * self.scale - self._clock())
        return Verdict(
            allowed=window.count <= requests,
            limit=requests,
            remaining=max(0, requests - window.count),
            reset_after=reset_after,
            bucket_hash=None if limit is None else bucket_hash(limit.bucket),
        )

    def take(self, limit: Limit, major: str) -> Verdict:
        """Count a request in ``limit``'s bucket for ``major``; a refused one is not counted."""
        now = self._clock()
        key = (limit.bucket, major)
        window = self._current(self._windows.get(key), limit.per, now)
        self._windows[key] = window
        if window.count >= limit.requests:
            refused = self._verdict(window, limit, limit.requests, limit.per)
            return Verdict(False, refused.limit, 0, refused.reset_after, refused.bucket_hash)
        window.count += 1
        if len(self._windows) > _PRUNE_ABOVE:
            self._prune(now)
        return self._verdict(window, limit, limit.requests, limit.per)

    def peek(self, limit: Limit, major: str) -> Verdict:
        """Where ``limit``'s window for ``major`` stands, without counting a request."""
        now = self._clock()
        window = self._current(self._windows.get((limit.bucket, major)), limit.per, now)
        return self._verdict(window, limit, limit.requests, limit.per)

    def take_global(self) -> Verdict:
        """Count a request against the per-bot global limit."""
        now = self._clock()
        self._global = self._current(self._global, GLOBAL_WINDOW_SECONDS, now)
        if self._global.count >= self.global_limit:
            refused = self._verdict(self._global, None, self.global_limit, GLOBAL_WINDOW_SECONDS)
            return Verdict(False, refused.limit, 0, refused.reset_after)
        self._global.count += 1
        return self._verdict(self._global, None, self.global_limit, GLOBAL_WINDOW_SECONDS)

    def record_invalid(self) -> None:
        """Count a 401, 403 or (non-shared) 429 answer toward the Cloudflare ban."""
        if self.banned():
            return
        now = self._clock()
        self._invalid = self._current(self._invalid, INVALID_WINDOW_SECONDS, now)
        self._invalid.count += 1
        if self._invalid.count >= self.invalid_limit:
            self._ban_started = now
            self._invalid = None

    def invalid_count(self) -> int:
        """Invalid requests counted in the current window."""
        now = self._clock()
        window = self._invalid
        if window is None or now >= window.opened + INVALID_WINDOW_SECONDS * self.scale:
            return 0
        return window.count

    def banned(self) -> bool:
        """Whether the client is in the Cloudflare ban (it lasts ``ban_seconds`` from the last
        request sent during it)."""
        if self._ban_started is None:
            return False
        if self._clock() >= self._ban_started + self.ban_seconds * self.scale:
            self._ban_started = None
            return False
        return True

    def refuse_banned(self) -> bool:
        """Count a request against the ban: True if it is banned (and the ban starts again)."""
        if not self.banned():
            return False
        self._ban_started = self._clock()
        return True

    def ban(self, banned: bool) -> None:
        """Start a ban now (as if the invalid-request limit was reached), or lift it."""
        self._ban_started = self._clock() if banned else None
        self._invalid = None

    def ban_remaining(self) -> float:
        """Seconds until the ban lifts if nothing more is sent (0 when not banned)."""
        if not self.banned() or self._ban_started is None:
            return 0.0
        return max(0.0, self._ban_started + self.ban_seconds * self.scale - self._clock())

    def _prune(self, now: float) -> None:
        limits = {limit.bucket: limit.per for limit in (*ROUTE_LIMITS.values(), OLD_EDITS)}
        for key, window in list(self._windows.items()):
            if now >= window.opened + limits.get(key[0], 0.0) * self.scale:
                del self._windows[key]
