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
* On top, a bot may send about 50 requests per second in total (the *global* limit; we keep to
  :data:`GLOBAL_REQUESTS_PER_SECOND`, a tenth below). Interaction callbacks are exempt from
  everything; interaction followups from the global limit.
* A 429 carries ``retry_after`` in its JSON body (or, when the body lacks it, the
  ``Retry-After`` header says it); ``global: true`` means every request must pause. A 429 that
  did not come through Discord's proxy (no ``Via`` header) or is not JSON is Cloudflare's error
  page and means a temporary IP ban: recorded in the ledger for as long as its ``Retry-After``
  says (at most an hour), it holds every request of every process
  (:mod:`~discord_mcp.transport.ban`), and a request that would wait for it longer than its
  bound fails at once with :class:`~discord_mcp.errors.CloudflareBanned`. Its end is logged
  once, by the process whose request found it over. The invalid answers that lead to a ban (401,
  403, unshared 429) are counted there too, with a warning at a quarter and three quarters.

Policy here: requests wait *before* they are sent when a bucket is empty; a bucket whose limit
is not known yet lets one request through and holds the rest until its response tells the limit,
so a burst on a new bucket cannot overrun it. Waiting longer than the caller's bound raises
:class:`~discord_mcp.errors.RateLimited` instead of sleeping. The clock and sleep are injected so
the tests run on a fake clock.

The limits belong to the token, not to a process: the counts live in a *ledger*
(:mod:`~discord_mcp.transport.ledger`) that every process of a state directory shares when it is
the file-backed one (:mod:`~discord_mcp.transport.shared_ledger`), so twenty sessions that ask at
once share one channel's bucket instead of each spending it. This module does the waiting: one
request per route and process asks the ledger at a time, sleeps what it is told, and wakes early
when a response of its own process (or, for a shared ledger, a look every ``poll_interval``)
may have opened the bucket.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from discord_mcp.errors import CloudflareBanned, RateLimited
from discord_mcp.transport import ledger as book
from discord_mcp.transport import waits
from discord_mcp.transport.ban import BAN_S, INVALID_LIMIT, INVALID_WINDOW_S, Answered
from discord_mcp.transport.ledger import Grant, Hold, Ledger, LedgerState, MemoryLedger
from discord_mcp.transport.routes import Route

log = logging.getLogger(__name__)

DISCORD_GLOBAL_PER_SECOND = 50
"""Discord's documented global limit per bot token."""
GLOBAL_REQUESTS_PER_SECOND = 45
"""What we allow ourselves of it: a tenth below, because a request is counted here when its
place is reserved and by Discord when it arrives, and the network and the scheduler (twenty
processes on two cores) move some arrivals into Discord's next second. At exactly 50, one
request in a few thousand came back a global 429 (``bench/scale.py`` at 20 sessions)."""

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(slots=True)
class _Waiters:
    """This process's requests on one route: one asks the ledger at a time, and a response
    wakes the one waiting for it."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    users: int = 0


@dataclass(frozen=True, slots=True)
class Ticket:
    """Permission to send one request; hand it back to :meth:`RateLimiter.release`."""

    route: Route
    key: str | None
    """The bucket it was reserved in (None: the route is not rate limited)."""
    id: str = ""
    probe: bool = False
    """The one request sent to see whether Cloudflare's ban is over."""


class RateLimiter:
    """Per-bucket and global gates for one bot token.

    Args:
        clock: monotonic seconds for the in-memory ledger (injectable for tests).
        sleep: how to wait (injectable for tests).
        global_per_second: the global request budget.
        ledger: where the counts live; default an in-memory ledger on ``clock`` (one process).
        invalid_limit: Discord's invalid requests per 10 minutes before a ban (tests lower it
            to see the warnings).
    """

    def __init__(
        self,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        global_per_second: int = GLOBAL_REQUESTS_PER_SECOND,
        ledger: Ledger | None = None,
        invalid_limit: int = INVALID_LIMIT,
    ) -> None:
        self._sleep = sleep
        self._invalid_limit = invalid_limit
        self._global_per_second = global_per_second
        self._ledger: Ledger = ledger if ledger is not None else MemoryLedger(clock=clock)
        self._waiters: dict[str, _Waiters] = {}
        self._handing_back: set[asyncio.Future[None]] = set()

    @staticmethod
    def _local_key(route: Route) -> str:
        return f"{route.key}:{route.major}"

    async def acquire(self, route: Route, *, max_wait: float, keep: int = 0) -> Ticket:
        """Wait until ``route`` may be sent without a 429 (``keep``: and with that many of its
        bucket's window left to other requests, :func:`~.ledger.reserve`).

        Raises:
            RateLimited: the wait would exceed ``max_wait`` seconds.
        """
        if not route.rate_limited:
            return await self._admit(route, max_wait)
        local_key = self._local_key(route)
        waiters = self._waiters.get(local_key)
        if waiters is None:
            waiters = self._waiters[local_key] = _Waiters()
        waiters.users += 1
        try:
            async with waiters.lock:
                return await self._reserve(route, waiters, max_wait, keep)
        finally:
            waiters.users -= 1
            if waiters.users == 0:
                del self._waiters[local_key]

    async def _reserve(self, route: Route, waiters: _Waiters, max_wait: float, keep: int) -> Ticket:
        ticket = book.new_ticket()
        reserve = functools.partial(
            book.reserve,
            route=route,
            ticket=ticket,
            global_per_second=self._global_per_second,
            keep=keep,
        )
        loop = asyncio.get_running_loop()
        deadline: float | None = None
        while True:
            waiters.changed.clear()  # before asking: a response from now on wakes us
            outcome = await self._ask(reserve, route, ticket)
            if isinstance(outcome, Grant):
                return Ticket(route, outcome.key, ticket, outcome.probe)
            if outcome.banned:
                await self._wait_out_ban(route, outcome.seconds, max_wait)
                continue
            if outcome.seconds > max_wait:
                raise RateLimited(
                    method=route.method,
                    route=route.template,
                    retry_after=outcome.seconds,
                    is_global=outcome.is_global,
                )
            if outcome.seconds > 0:
                log.debug("%s must wait %.3fs", route.key, outcome.seconds)
                await self._sleep(outcome.seconds)
                continue
            # The window is over (or the limit unknown) and requests are in flight: their
            # responses tell us the new window. Wait for one, bounded by max_wait.
            if deadline is None:
                deadline = loop.time() + max_wait
            left = deadline - loop.time()
            if left <= 0:
                raise RateLimited(
                    method=route.method, route=route.template, retry_after=max_wait, is_global=False
                )
            poll = self._ledger.poll_interval
            try:
                async with asyncio.timeout(left if poll is None else min(left, poll)):
                    await waiters.changed.wait()
            except TimeoutError:
                pass

    async def _admit(self, route: Route, max_wait: float) -> Ticket:
        """A route without a rate limit still waits out Cloudflare's ban."""
        while True:
            ticket = book.new_ticket()
            outcome = await self._ledger.apply(functools.partial(book.admit, ticket=ticket))
            if isinstance(outcome, Grant):
                return Ticket(route, None, ticket, outcome.probe)
            await self._wait_out_ban(route, outcome.seconds, max_wait)

    async def _wait_out_ban(self, route: Route, seconds: float, max_wait: float) -> None:
        """Wait a ban's end out if it is near; fail at once if not (it lasts about an hour)."""
        if seconds > max_wait:
            raise CloudflareBanned(route.method, route.template, seconds=seconds)
        await self._sleep(max(seconds, 0.05))

    async def _ask(
        self, reserve: Callable[[LedgerState, float], Grant | Hold], route: Route, ticket: str
    ) -> Grant | Hold:
        """Ask the ledger for a reservation; if the request is cancelled meanwhile, a place the
        ledger grants anyway (in its worker thread) is handed back instead of held until it
        lapses."""
        asking = asyncio.ensure_future(self._ledger.apply(reserve))
        try:
            return await asyncio.shield(asking)
        except asyncio.CancelledError:
            handing_back = asyncio.ensure_future(self._hand_back(asking, route, ticket))
            self._handing_back.add(handing_back)
            handing_back.add_done_callback(self._handing_back.discard)
            raise

    async def _hand_back(
        self, asking: asyncio.Future[Grant | Hold], route: Route, ticket: str
    ) -> None:
        try:
            outcome = await asking
        except Exception:  # the ledger failed: nothing was reserved
            return
        if isinstance(outcome, Grant):
            await self.release(Ticket(route, outcome.key, ticket), None)

    async def release(
        self,
        ticket: Ticket,
        headers: Mapping[str, str] | None,
        *,
        status: int | None = None,
        cloudflare: bool = False,
        ban_for: float | None = None,
    ) -> None:
        """Record a response (or a failed send, with ``headers=None``) for ``ticket``: its
        rate-limit headers, and its ``status`` for the invalid-request count (``cloudflare``:
        it was Cloudflare's ban, which now holds every process, for ``ban_for`` seconds when
        its headers say so)."""
        known = None
        if headers is not None:
            known = {name: headers[name] for name in book.RATE_LIMIT_HEADERS if name in headers}
        if cloudflare:
            lasts = (
                "an hour" if ban_for is None else f"{min(ban_for, BAN_S):.0f}s (its Retry-After)"
            )
            log.error(
                "Discord's edge (Cloudflare) banned this IP: no process of this state directory "
                "sends anything for %s, then one request checks whether the ban is over",
                lasts,
            )
        answered = Answered()
        if ticket.key is not None:
            answered = await self._ledger.apply(
                functools.partial(
                    book.settle,
                    route=ticket.route,
                    key=ticket.key,
                    ticket=ticket.id,
                    headers=known,
                    status=status,
                    cloudflare=cloudflare,
                    invalid_limit=self._invalid_limit,
                    ban_for=ban_for,
                )
            )
        elif ticket.probe or cloudflare or status in (401, 403, 429):
            answered = await self._ledger.apply(
                functools.partial(
                    book.settle_unlimited,
                    ticket=ticket.id,
                    status=status,
                    scope=(known or {}).get("x-ratelimit-scope"),
                    cloudflare=cloudflare,
                    invalid_limit=self._invalid_limit,
                    ban_for=ban_for,
                )
            )
        if answered.ban_lasted is not None:
            # Only the probe's process sees this: the end of a ban is said once.
            log.warning(
                "Discord's ban of this IP is over: it held every request of this state "
                "directory for %s; sending again",
                _minutes(answered.ban_lasted),
            )
        warning = answered.warning
        if warning is not None:
            log.warning(
                "%d%% of Discord's invalid requests limit is used: %d of the %d invalid requests "
                "(401, 403, 429) allowed in %d minutes were sent from this machine. At the limit "
                "Discord's edge bans the IP for an hour: look for a wrong token, a missing "
                "permission or a retry loop (see `discord-mcp doctor`)",
                warning,
                math.ceil(warning * self._invalid_limit / 100),
                self._invalid_limit,
                int(INVALID_WINDOW_S // 60),
            )
        if ticket.key is None:
            return
        waiters = self._waiters.get(self._local_key(ticket.route))
        if waiters is not None:
            waiters.changed.set()

    async def share_with(self, machines: int) -> None:
        """How many machines share the token (this one included): each takes its share of a
        bucket they are seen to share (:mod:`~discord_mcp.transport.ledger`)."""
        await self._ledger.apply(functools.partial(book.share_with, machines=machines))

    async def on_429(self, ticket: Ticket, *, retry_after: float, is_global: bool) -> float:
        """Discord refused ``ticket``'s request; close the right gate for as long as
        ``retry_after`` is believed (:mod:`~discord_mcp.transport.waits`) and return that.

        Raises:
            CloudflareBanned: ``retry_after`` is over an hour: it is recorded as a ban, which
                holds every process of the state directory by the ban's own rules.
        """
        route = ticket.route
        if waits.is_ban(retry_after):
            await self._ledger.apply(book.banned)
            log.error(
                "Discord asked for a wait of %.0fs on %s (over an hour): handled as a ban, no "
                "process of this state directory sends anything for an hour, then one request "
                "checks whether it is over",
                retry_after,
                route.key,
            )
            raise CloudflareBanned(route.method, route.template, seconds=BAN_S, asked=retry_after)
        wait = waits.believed(retry_after, is_global=is_global)
        if wait != retry_after and retry_after > 0:
            log.warning(
                "Discord asked for a %s wait of %ss on %s; waiting %.0fs, the longest believed",
                "global" if is_global else "route",
                retry_after,
                route.key,
                wait,
            )
        if ticket.key is None and not is_global:
            return wait
        await self._ledger.apply(
            functools.partial(book.refuse, route=route, retry_after=wait, is_global=is_global)
        )
        if is_global:
            log.warning("global rate limit hit: pausing every request for %.2fs", wait)
        else:
            log.warning("rate limited on %s: retrying in %.2fs", route.key, wait)
        return wait


def _minutes(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"
