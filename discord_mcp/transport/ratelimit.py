"""Discord's REST rate limits, obeyed before Discord has to enforce them.

Theory (https://discord.com/developers/docs/topics/rate-limits):

* Every route belongs to a *bucket*. Discord names it in ``X-RateLimit-Bucket`` (an opaque hash;
  several routes may share one), and each bucket is split per *major parameter*: channel, guild,
  webhook. Until the first response names the hash, the method and path template stand in.
* A bucket allows ``X-RateLimit-Limit`` requests per fixed window. Each response says how many
  are left (``X-RateLimit-Remaining``), when the window ends (``X-RateLimit-Reset``, epoch
  seconds, which identifies the window) and how long that is from now
  (``X-RateLimit-Reset-After``). We count in seconds on the monotonic clock from the moment the
  response arrived, which is never earlier than Discord's own reset: waiting on it cannot 429.
* On top, a bot may send about 50 requests per second in total (the *global* limit). Interaction
  callbacks are exempt from everything; interaction followups from the global limit.
* A 429 carries ``retry_after`` in its JSON body; ``global: true`` means every request must
  pause. A 429 without that body comes from Cloudflare and means a temporary IP ban (handled by
  the REST client, which fails fast).

Policy here: requests wait *before* they are sent when a bucket is empty; a bucket whose limit
is not known yet lets one request through and holds the rest until its response tells the limit,
so a burst on a new bucket cannot overrun it. Waiting longer than the caller's bound raises
:class:`~discord_mcp.errors.RateLimited` instead of sleeping. The clock and sleep are injected so
the tests run on a fake clock.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from discord_mcp.errors import RateLimited
from discord_mcp.transport.routes import Route

log = logging.getLogger(__name__)

GLOBAL_REQUESTS_PER_SECOND = 50
"""Discord's documented global limit per bot token."""

_UNLIMITED = -1
"""A bucket whose responses carry no rate-limit headers: nothing to wait for."""

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(slots=True)
class _Bucket:
    limit: int | None = None
    """None until a response tells us; ``_UNLIMITED`` for routes without headers."""
    remaining: int = 0
    reset_at: float = 0.0
    """Monotonic time at which the current window ends."""
    window: float = 0.0
    """Discord's ``X-RateLimit-Reset`` of the current window, to tell windows apart."""
    in_flight: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    changed: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(frozen=True, slots=True)
class Ticket:
    """Permission to send one request; hand it back to :meth:`RateLimiter.release`."""

    bucket: _Bucket | None
    route: Route


class RateLimiter:
    """Per-bucket and global gates for one bot token.

    Args:
        clock: monotonic seconds (injectable for tests).
        sleep: how to wait (injectable for tests).
        global_per_second: the global request budget.
    """

    def __init__(
        self,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        global_per_second: int = GLOBAL_REQUESTS_PER_SECOND,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._global_per_second = global_per_second
        self._buckets: dict[str, _Bucket] = {}
        self._hashes: dict[str, str] = {}
        self._global_until = 0.0
        self._global_sent: deque[float] = deque()

    def _key(self, route: Route) -> str:
        return f"{self._hashes.get(route.key, route.key)}:{route.major}"

    def _bucket(self, route: Route) -> _Bucket:
        key = self._key(route)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket()
        return bucket

    async def acquire(self, route: Route, *, max_wait: float) -> Ticket:
        """Wait until ``route`` may be sent without a 429.

        Raises:
            RateLimited: the wait would exceed ``max_wait`` seconds.
        """
        if not route.rate_limited:
            return Ticket(None, route)
        bucket = self._bucket(route)
        async with bucket.lock:
            while True:
                delay = self._bucket_delay(bucket)
                if delay is None:
                    break
                if delay > max_wait:
                    raise RateLimited(
                        method=route.method,
                        route=route.template,
                        retry_after=delay,
                        is_global=False,
                    )
                if delay > 0:
                    log.debug("bucket %s empty: waiting %.3fs", route.key, delay)
                    await self._sleep(delay)
                else:
                    # The window is over but requests are still in flight: their responses
                    # tell us the new window. Wait for one, bounded by max_wait.
                    bucket.changed.clear()
                    try:
                        async with asyncio.timeout(max_wait):
                            await bucket.changed.wait()
                    except TimeoutError:
                        raise RateLimited(
                            method=route.method,
                            route=route.template,
                            retry_after=max_wait,
                            is_global=False,
                        ) from None
            if route.global_limited:
                await self._wait_global(route, max_wait)
            bucket.remaining -= 1
            bucket.in_flight += 1
        return Ticket(bucket, route)

    def _bucket_delay(self, bucket: _Bucket) -> float | None:
        """None when a request may go now; else seconds to sleep (0: wait for a response)."""
        now = self._clock()
        if bucket.limit is None or bucket.limit == _UNLIMITED:
            if bucket.remaining <= 0 and bucket.reset_at > now:
                return bucket.reset_at - now  # a 429 told us how long to wait
            if bucket.limit == _UNLIMITED:
                return None
            # Unknown limit: one probe at a time until a response tells us the limit.
            return None if bucket.in_flight == 0 else 0.0
        if now >= bucket.reset_at and bucket.remaining <= 0:
            bucket.remaining = bucket.limit - bucket.in_flight
        if bucket.remaining > 0:
            return None
        return max(bucket.reset_at - now, 0.0)

    async def _wait_global(self, route: Route, max_wait: float) -> None:
        while True:
            now = self._clock()
            delay = self._global_until - now
            sent = self._global_sent
            while sent and now - sent[0] >= 1.0:
                sent.popleft()
            if len(sent) >= self._global_per_second:
                delay = max(delay, sent[0] + 1.0 - now)
            if delay <= 0:
                sent.append(now)
                return
            if delay > max_wait:
                raise RateLimited(
                    method=route.method, route=route.template, retry_after=delay, is_global=True
                )
            await self._sleep(delay)

    def release(self, ticket: Ticket, headers: Mapping[str, str] | None) -> None:
        """Record a response (or a failed send, with ``headers=None``) for ``ticket``."""
        bucket = ticket.bucket
        if bucket is None:
            return
        bucket.in_flight = max(bucket.in_flight - 1, 0)
        if bucket.limit is None and bucket.remaining < 0:
            bucket.remaining = 0  # probes of an unknown bucket do not use up a window
        if headers is not None:
            self._update(ticket.route, bucket, headers)
        bucket.changed.set()

    def _update(self, route: Route, bucket: _Bucket, headers: Mapping[str, str]) -> None:
        bucket_hash = headers.get("x-ratelimit-bucket")
        if bucket_hash and self._hashes.get(route.key) != bucket_hash:
            self._hashes[route.key] = bucket_hash
            # Routes that share a hash share a bucket; the first one seen keeps its state.
            self._buckets.setdefault(self._key(route), bucket)
        try:
            limit = int(headers["x-ratelimit-limit"])
            remaining = int(headers["x-ratelimit-remaining"])
            reset_after = float(headers["x-ratelimit-reset-after"])
        except (KeyError, ValueError):
            if bucket.limit is None:
                bucket.limit = _UNLIMITED
            return
        now = self._clock()
        try:
            window = float(headers["x-ratelimit-reset"])
        except (KeyError, ValueError):
            window = time.time() + reset_after
        if bucket.limit in (None, _UNLIMITED):
            bucket.limit = limit
            bucket.remaining = limit - bucket.in_flight
        bucket.limit = limit
        if window > bucket.window + 1e-3:
            # A newer window than we knew of: its end is now + reset_after.
            bucket.window = window
            bucket.reset_at = now + reset_after
            bucket.remaining = min(bucket.remaining, remaining)
        elif abs(window - bucket.window) <= 1e-3:
            bucket.remaining = min(bucket.remaining, remaining)
        # An older window's straggler tells us nothing about the current one.

    def on_429(self, ticket: Ticket, *, retry_after: float, is_global: bool) -> None:
        """Discord refused ``ticket``'s request; close the right gate for ``retry_after``."""
        now = self._clock()
        if is_global:
            self._global_until = max(self._global_until, now + retry_after)
            log.warning("global rate limit hit: pausing every request for %.2fs", retry_after)
            return
        bucket = ticket.bucket
        if bucket is not None:
            bucket.remaining = 0
            bucket.reset_at = max(bucket.reset_at, now + retry_after)
            log.warning("rate limited on %s: retrying in %.2fs", ticket.route.key, retry_after)
