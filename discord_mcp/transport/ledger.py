"""The rate-limit ledger: what every process of one bot token knows about Discord's limits.

Theory
------
Discord counts a bot token's requests wherever they come from. Twenty ``discord-mcp`` processes
on one machine that each kept their own counts would each think a channel's thread bucket
(5 per 5 s) was theirs, and together send twenty. So the counts live in a *ledger* that the
:class:`~discord_mcp.transport.ratelimit.RateLimiter` of each process consults before it sends:

* per bucket (``hash:major``, or ``method template:major`` until Discord names the hash): the
  limit, how many requests are left in the window, when the window ends, Discord's own name for
  the window (``X-RateLimit-Reset``), and the requests in flight;
* the hash of each route and the limit of each bucket, so a bucket seen by one process, or for
  another channel, starts with its limit known instead of one probe at a time;
* the global budget: when a global 429 lifts, and the sends of the last second.

A request *reserves* its place (:func:`reserve`: the bucket's remaining count goes down, an
in-flight entry and a global send are written) and is *settled* by its response
(:func:`settle`: the entry goes, Discord's headers correct the counts). A reservation is never
a lock: nothing is held across the request. An entry whose process died, or that is older than
:data:`RESERVATION_S`, is forgotten (:func:`forget`), so a process killed mid-request never
blocks the others for long; the request it may have sent still counts in the window's remaining
count. A bucket whose window is over and which has nothing in flight is dropped: its next
window starts full, with its limit remembered.

The operations are pure functions of a :class:`LedgerState` and a time; a :class:`Ledger` runs
them atomically: :class:`MemoryLedger` for one process (and tests), and
:class:`~discord_mcp.transport.shared_ledger.FileLedger` for every process of a state directory.
Times are the ledger's own clock (``time.monotonic``, the same for every process of a machine);
what a ledger hands back is durations.

Several machines (each its own state directory, so its own ledger) may share one bot token
(:mod:`discord_mcp.team`): their ledgers cannot see each other's requests, only Discord's
headers can, and those lag. A 429 on a bucket whose ledger allowed the request is the sign:
the bucket is *shared* for :data:`SHARED_FOR_S`, and while the machine knows how many machines
share the token (``sharers``, written by its ``discord-watch`` from the presence records), it
takes at most its share of each window (``limit // sharers``), so that together they stay
within the limit and a request refused once is not refused again. The global limit (50
requests a second) is the bot's too: each machine takes its share of it (``// sharers``).

A request that can wait (a streamed edit, :mod:`discord_mcp.watch.edits`) asks to *keep* part
of its bucket's window for the others (:func:`reserve`'s ``keep``): it goes only while more
than that many are left, so the writers that cannot wait (a card's outcome, a progress card,
the final status) still find room in the same window.

The ledger also keeps Cloudflare's ban and the count of invalid answers that leads to one
(:mod:`~discord_mcp.transport.ban`): :func:`reserve` and :func:`admit` (for the routes without a
rate limit, such as interaction callbacks) hold every request while a ban is known, and let one
probe through when it should be over.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

from discord_mcp.transport import ban as edge
from discord_mcp.transport.ban import Answered, BanStatus
from discord_mcp.transport.ledger_state import BucketState as BucketState
from discord_mcp.transport.ledger_state import LedgerState as LedgerState
from discord_mcp.transport.ledger_state import new_ticket as new_ticket
from discord_mcp.transport.ledger_state import ticket_pid as ticket_pid
from discord_mcp.transport.routes import Route
from discord_mcp.transport.waits import ROUTE_CAP_S, cap_waits, capped

RESERVATION_S = 30.0
"""The longest a request's reservation is honoured without its response: longer than one
attempt can take (connect 10 s, then 15 s for the answer), so only a process that died or hung
loses it."""
GLOBAL_WINDOW_S = 1.0
"""Discord's global limit counts the requests of the last second."""
UNLIMITED = -1
"""The limit of a bucket whose responses carry no rate-limit headers."""
SHARED_FOR_S = 600.0
"""After a 429 its ledger did not foresee, a bucket is shared with other machines this long."""
RATE_LIMIT_HEADERS = (
    "x-ratelimit-bucket",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "x-ratelimit-reset-after",
    "x-ratelimit-scope",
)
"""The response headers the ledger reads (lower case)."""

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Grant:
    """The request may go now; settle ``ticket`` in bucket ``key`` with its response.

    ``probe``: it is the one request sent to see whether Cloudflare's ban is over.
    """

    key: str
    probe: bool = False


@dataclass(frozen=True, slots=True)
class Hold:
    """Not yet: wait ``seconds`` (0: until a response in flight tells the new window).

    ``banned``: Cloudflare's ban is why (the caller fails rather than wait an hour).
    """

    seconds: float
    is_global: bool = False
    banned: bool = False


class Ledger(Protocol):
    """Runs ledger operations atomically, for one process or for many."""

    poll_interval: float | None
    """None when every change comes from this process (a local event wakes a waiter); else how
    often a waiter looks again for changes made by other processes."""

    async def apply(self, operation: Callable[[LedgerState, float], _T]) -> _T:
        """Run ``operation(state, now)`` atomically and return its result."""
        ...


class MemoryLedger:
    """A ledger in this process's memory: the single-process case, and tests.

    Args:
        clock: monotonic seconds (a fake clock in tests).
    """

    poll_interval: float | None = None

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.state = LedgerState()

    async def apply(self, operation: Callable[[LedgerState, float], _T]) -> _T:
        now = self._clock()
        forget(self.state, now, alive=lambda _pid: True)
        return operation(self.state, now)


# ---- the operations ---------------------------------------------------------------------------


def bucket_name(state: LedgerState, route: Route) -> str:
    """Discord's hash for ``route`` once a response named it, else its method and template."""
    return state.hashes.get(route.key, route.key)


def bucket_key(state: LedgerState, route: Route) -> str:
    """The bucket ``route`` counts in: its name and its major parameters."""
    return f"{bucket_name(state, route)}:{route.major}"


def _fresh(state: LedgerState, route: Route, share: int | None = None) -> BucketState:
    limit = state.limits.get(bucket_name(state, route))
    full = min(limit, share or limit) if limit is not None and limit > 0 else 0
    return BucketState(limit=limit, remaining=full)


def _bucket_delay(
    bucket: BucketState, now: float, share: int | None = None, keep: int = 0
) -> float | None:
    """None when a request may go now; else seconds to wait (0: wait for a response).

    ``share``: the requests per window this machine may send of a bucket other machines
    spend too (None: the whole window is its own): a new window starts with that many.
    ``keep``: requests of the window this one must leave to others (a request that can wait,
    such as a streamed edit, leaves room for those that cannot); never the whole window.
    """
    if bucket.limit is None or bucket.limit == UNLIMITED:
        if bucket.remaining <= 0 and bucket.reset_at > now:
            return bucket.reset_at - now  # a 429 told us how long to wait
        if bucket.limit == UNLIMITED:
            return None
        # Unknown limit: one probe at a time until a response tells the limit.
        return None if not bucket.in_flight else 0.0
    kept = min(keep, bucket.limit - 1)
    if now >= bucket.reset_at and bucket.remaining <= kept:
        bucket.remaining = min(bucket.limit, share or bucket.limit) - len(bucket.in_flight)
    if bucket.remaining > kept:
        return None
    return max(bucket.reset_at - now, 0.0)


def _share(state: LedgerState, route: Route, now: float) -> int | None:
    """This machine's share of each window of ``route``'s bucket, when other machines spend it
    too (see the module's theory)."""
    name = bucket_name(state, route)
    limit = state.limits.get(name)
    if state.sharers <= 1 or state.shared.get(name, 0.0) <= now or not limit or limit < 1:
        return None
    return max(1, limit // state.sharers)


def _global_delay(state: LedgerState, now: float, per_second: int) -> float:
    # The global limit is the bot's, not the machine's: machines sharing the token (and
    # seeing each other) each take their share of it.
    per_second = max(1, per_second // max(1, state.sharers))
    delay = state.global_until - now
    if len(state.global_sent) >= per_second:
        delay = max(delay, state.global_sent[-per_second] + GLOBAL_WINDOW_S - now)
    return delay


def reserve(
    state: LedgerState,
    now: float,
    *,
    route: Route,
    ticket: str,
    global_per_second: int,
    keep: int = 0,
) -> Grant | Hold:
    """Reserve a place for one request on ``route``, or say how long to wait for one
    (``keep``: leaving that many of the bucket's window to other requests)."""
    banned = edge.blocked(state.ban, now)
    if banned is not None:
        return Hold(banned, banned=True)
    key = bucket_key(state, route)
    share = _share(state, route, now)
    bucket = state.buckets.get(key) or _fresh(state, route, share)
    delay = _bucket_delay(bucket, now, share, keep)
    if delay is not None:
        return Hold(delay)
    if route.global_limited:
        delay = _global_delay(state, now, global_per_second)
        if delay > 0:
            return Hold(delay, is_global=True)
        state.global_sent.append(now)
    bucket.remaining -= 1
    bucket.in_flight[ticket] = now + RESERVATION_S
    state.buckets[key] = bucket
    return Grant(key, probe=edge.take_probe(state.ban, now, ticket))


def admit(state: LedgerState, now: float, *, ticket: str) -> Grant | Hold:
    """For a route without a rate limit (interaction callbacks): only a ban can hold it."""
    banned = edge.blocked(state.ban, now)
    if banned is not None:
        return Hold(banned, banned=True)
    return Grant("", probe=edge.take_probe(state.ban, now, ticket))


def settle_unlimited(
    state: LedgerState,
    now: float,
    *,
    ticket: str,
    status: int | None,
    scope: str | None = None,
    cloudflare: bool = False,
    invalid_limit: int = edge.INVALID_LIMIT,
    ban_for: float | None = None,
) -> Answered:
    """Record the outcome of a request without a rate limit (the ban and the invalid count):
    the warning percentage just passed and the end of a ban, if any (:func:`~.ban.answered`)."""
    return edge.answered(
        state.ban,
        now,
        ticket=ticket,
        status=status,
        scope=scope,
        cloudflare=cloudflare,
        limit=invalid_limit,
        ban_for=ban_for,
    )


def banned(state: LedgerState, now: float) -> None:
    """Discord asked for a wait of over an hour (:mod:`~discord_mcp.transport.waits`): hold every
    request of every process as for Cloudflare's ban (an hour, then one probe)."""
    edge.start_ban(state.ban, now)


def status_of(state: LedgerState, now: float) -> BanStatus:
    """The invalid-request count and the ban, for ``doctor`` (read only)."""
    return edge.status(state.ban, now)


def settle(
    state: LedgerState,
    now: float,
    *,
    route: Route,
    key: str,
    ticket: str,
    headers: Mapping[str, str] | None,
    status: int | None = None,
    cloudflare: bool = False,
    invalid_limit: int = edge.INVALID_LIMIT,
    ban_for: float | None = None,
) -> Answered:
    """Record the response to ``ticket`` (``headers=None``: the request failed unanswered).

    Returns the warning percentage of the invalid-request limit just passed and the end of a
    ban, if any.
    """
    answered = settle_unlimited(
        state,
        now,
        ticket=ticket,
        status=status,
        scope=(headers or {}).get("x-ratelimit-scope"),
        cloudflare=cloudflare,
        invalid_limit=invalid_limit,
        ban_for=ban_for,
    )
    _settle_bucket(state, now, route=route, key=key, ticket=ticket, headers=headers)
    return answered


def _settle_bucket(
    state: LedgerState,
    now: float,
    *,
    route: Route,
    key: str,
    ticket: str,
    headers: Mapping[str, str] | None,
) -> None:
    reserved = state.buckets.get(key)
    # The reservation is where it was made, or where the bucket moved when another response
    # named the route's hash meanwhile.
    for holder in (reserved, state.buckets.get(bucket_key(state, route))):
        if holder is not None:
            holder.in_flight.pop(ticket, None)
    if reserved is not None and reserved.limit is None and reserved.remaining < 0:
        reserved.remaining = 0  # probes of an unknown bucket do not use up a window
    if headers is None:
        return
    bucket_hash = headers.get("x-ratelimit-bucket")
    if bucket_hash and state.hashes.get(route.key) != bucket_hash:
        state.hashes[route.key] = bucket_hash
        # Routes that share a hash share a bucket; the first one seen keeps its state.
        if reserved is not None and bucket_key(state, route) not in state.buckets:
            state.buckets[bucket_key(state, route)] = state.buckets.pop(key)
    bucket = state.buckets.setdefault(bucket_key(state, route), _fresh(state, route))
    _read_headers(bucket, headers, now)
    if bucket.limit is not None:
        state.limits[bucket_name(state, route)] = bucket.limit


def _read_headers(bucket: BucketState, headers: Mapping[str, str], now: float) -> None:
    try:
        limit = int(headers["x-ratelimit-limit"])
        remaining = int(headers["x-ratelimit-remaining"])
        reset_after = capped(float(headers["x-ratelimit-reset-after"]), ROUTE_CAP_S)
    except (KeyError, ValueError):
        if bucket.limit is None:
            bucket.limit = UNLIMITED
        return
    try:
        window = float(headers["x-ratelimit-reset"])
    except (KeyError, ValueError):
        window = time.time() + reset_after
    if bucket.limit in (None, UNLIMITED):
        bucket.remaining = limit - len(bucket.in_flight)
    bucket.limit = limit
    if window > bucket.window + 1e-3:
        # A newer window than we knew of: its end is now + reset_after, counted from the moment
        # the response arrived, never earlier than Discord's own reset.
        bucket.window = window
        bucket.reset_at = now + reset_after
        bucket.remaining = min(bucket.remaining, remaining)
    elif abs(window - bucket.window) <= 1e-3:
        bucket.remaining = min(bucket.remaining, remaining)
    # An older window's straggler tells us nothing about the current one.


def refuse(
    state: LedgerState, now: float, *, route: Route, retry_after: float, is_global: bool
) -> None:
    """Discord answered 429: close the bucket (or, for a global one, everything) for a while."""
    if is_global:
        state.global_until = max(state.global_until, now + retry_after)
        return
    bucket = state.buckets.setdefault(bucket_key(state, route), _fresh(state, route))
    bucket.remaining = 0
    bucket.reset_at = max(bucket.reset_at, now + retry_after)
    # This ledger let the request go: something else spends the bucket (another machine).
    state.shared[bucket_name(state, route)] = now + SHARED_FOR_S


def share_with(state: LedgerState, now: float, *, machines: int) -> None:
    """Say how many machines share the token (this one included), from the presence records."""
    state.sharers = max(1, machines)


def forget(state: LedgerState, now: float, *, alive: Callable[[int], bool]) -> None:
    """Drop what no longer matters: lapsed reservations and those of processes that are gone,
    buckets whose window is over with nothing in flight, global sends older than a second; and
    cut any wait longer than is ever believed (:mod:`~discord_mcp.transport.waits`: a file
    written by an older version, or damaged) to its cap."""
    cap_waits(state, now)
    for key, bucket in list(state.buckets.items()):
        bucket.in_flight = {
            ticket: lapses
            for ticket, lapses in bucket.in_flight.items()
            if lapses > now and alive(ticket_pid(ticket))
        }
        if not bucket.in_flight and now >= bucket.reset_at:
            del state.buckets[key]
    for name, until in list(state.shared.items()):
        if until <= now:
            del state.shared[name]
    first = 0
    while first < len(state.global_sent) and now - state.global_sent[first] >= GLOBAL_WINDOW_S:
        first += 1
    del state.global_sent[:first]
    if state.global_until <= now:
        state.global_until = 0.0
