"""Cloudflare's ban, and the count of invalid requests that leads to it, in the shared ledger.

Theory (https://discord.com/developers/docs/topics/rate-limits#invalid-request-limit-aka-cloudflare-bans):

* Discord's edge counts *invalid requests* per IP: answers 401, 403 and 429 (except a 429 with
  ``X-RateLimit-Scope: shared``, which is not the client's fault). More than 10,000 in 10
  minutes and the IP is banned: every request gets a 429 without Discord's JSON body (an HTML
  page from Cloudflare), for about an hour, and a request sent during the ban makes it longer.
* A ban is told from a rate limit by Cloudflare's signs, as discord.py tells them
  (:func:`~discord_mcp.transport.responses.is_cloudflare_ban`): its error page (HTML, no
  ``Via`` header: the answer did not come through Discord's proxy). Its ``Retry-After`` header
  says how long it lasts; without one, :data:`BAN_S`.
* So a ban must stop *every* sender of the machine at once, not only the process that met it:
  the ban is recorded in the ledger every process of the state directory consults before it
  sends (:mod:`~discord_mcp.transport.ledger`). Until the ban's end (at most :data:`BAN_S`
  after the last ban seen) nothing is sent; then one request, the *probe*, goes; the others
  wait for its answer. A probe that meets the ban again starts it again; any other answer
  lifts it, and that one process says so (:attr:`Answered.ban_lasted`): the end of a ban is
  announced once, whichever process sees it.
* The invalid answers are counted in the same ledger, per :data:`INVALID_WINDOW_S`, and a warning
  is logged once per window when the count passes a quarter and three quarters of the limit,
  long before it (``doctor`` shows the count too).

Pure functions of a :class:`BanState` and a time, like the ledger's own operations; the ledger
runs them under its lock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

INVALID_LIMIT = 10_000
"""Discord's invalid requests per :data:`INVALID_WINDOW_S` before the ban."""
INVALID_WINDOW_S = 600.0
BAN_S = 3600.0
"""How long a ban is taken to last after the last request that met it ("about an hour")."""
PROBE_LAPSES_S = 30.0
"""A probe without an answer this long (its process died) lets another one go."""
WARN_AT = (25, 75)
"""Percentages of :data:`INVALID_LIMIT` at which a warning is logged, once per window each."""
INVALID_STATUSES = frozenset({401, 403, 429})


@dataclass(slots=True)
class BanState:
    """The invalid-request count and the ban, as the ledger keeps them (ledger times)."""

    invalid_since: float = 0.0
    """When the current count began (0: no count running)."""
    invalid_count: int = 0
    warned: int = 0
    """The highest of :data:`WARN_AT` already warned about in this window."""
    banned_until: float = 0.0
    """Until when nothing is sent (0: no ban known); after it, one probe."""
    probe: str = ""
    """The ticket of the probe in flight, if any."""
    probe_lapses: float = 0.0
    since: float = 0.0
    """When the current ban was first met (0: none known): how long it lasted is told at its
    end."""

    def to_json(self) -> dict[str, Any]:
        return {
            "invalid_since": self.invalid_since,
            "invalid_count": self.invalid_count,
            "warned": self.warned,
            "banned_until": self.banned_until,
            "probe": self.probe,
            "probe_lapses": self.probe_lapses,
            "since": self.since,
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any] | None) -> BanState:
        """Read :meth:`to_json`'s object (None, from a ledger written before it existed: none).

        Raises:
            ValueError: the object is malformed.
        """
        if document is None:
            return cls()
        try:
            return cls(
                invalid_since=float(document["invalid_since"]),
                invalid_count=int(document["invalid_count"]),
                warned=int(document["warned"]),
                banned_until=float(document["banned_until"]),
                probe=str(document["probe"]),
                probe_lapses=float(document["probe_lapses"]),
                since=float(document.get("since", 0.0)),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed ban record: {exc!r}") from None


@dataclass(frozen=True, slots=True)
class BanStatus:
    """What ``doctor`` and the logs say: invalid requests in the current window, and the ban."""

    invalid: int
    limit: int
    banned_for: float
    """Seconds until a probe may go (0: none to wait for)."""
    probe_due: bool = False
    """A ban has run its course but no request has gone through since: the next one probes."""


@dataclass(frozen=True, slots=True)
class Answered:
    """What recording a request's outcome found: ``warning``, a percentage of the invalid
    requests limit just passed (one of :data:`WARN_AT`); ``ban_lasted``, the seconds a ban
    lasted that this request's answer just lifted (said once, by this process alone)."""

    warning: int | None = None
    ban_lasted: float | None = None


def blocked(ban: BanState, now: float) -> float | None:
    """Seconds to wait because of a ban (None: nothing stops a request).

    Past the ban's end, a request may go as the probe unless one is already out.
    """
    if not ban.banned_until:
        return None
    if now < ban.banned_until:
        return ban.banned_until - now
    if ban.probe and now < ban.probe_lapses:
        return ban.probe_lapses - now
    return None


def take_probe(ban: BanState, now: float, ticket: str) -> bool:
    """Make the request ``ticket`` the probe if a ban has run its course; True if it is."""
    if not ban.banned_until or now < ban.banned_until:
        return False
    ban.probe = ticket
    ban.probe_lapses = now + PROBE_LAPSES_S
    return True


def answered(
    ban: BanState,
    now: float,
    *,
    ticket: str,
    status: int | None,
    scope: str | None,
    cloudflare: bool,
    limit: int = INVALID_LIMIT,
    ban_for: float | None = None,
) -> Answered:
    """Record a request's outcome (``status`` None: no answer came; ``ban_for``: how long a
    ``cloudflare`` ban says it lasts)."""
    lasted = None
    if ban.probe == ticket:
        ban.probe, ban.probe_lapses = "", 0.0
        if status is not None and not cloudflare:
            # The probe went through: the ban is over.
            lasted = max(now - ban.since, 0.0) if ban.since else None
            ban.banned_until, ban.since = 0.0, 0.0
    if cloudflare:
        start_ban(ban, now, ban_for)
    if status not in INVALID_STATUSES or (status == 429 and scope == "shared"):
        return Answered(ban_lasted=lasted)
    if not ban.invalid_since or now >= ban.invalid_since + INVALID_WINDOW_S:
        ban.invalid_since, ban.invalid_count, ban.warned = now, 0, 0
    ban.invalid_count += 1
    passed = [p for p in WARN_AT if ban.invalid_count * 100 >= p * limit and p > ban.warned]
    if not passed:
        return Answered(ban_lasted=lasted)
    ban.warned = max(passed)
    return Answered(ban.warned, lasted)


def start_ban(ban: BanState, now: float, seconds: float | None = None) -> None:
    """Cloudflare refused a request: nothing is sent for ``seconds`` (what its ``Retry-After``
    said; at most, and by default, :data:`BAN_S`), then one probe."""
    lasts = BAN_S if seconds is None else min(max(seconds, 1.0), BAN_S)
    ban.banned_until = max(ban.banned_until, now + lasts)
    ban.probe, ban.probe_lapses = "", 0.0
    if not ban.since:
        ban.since = now


def status(ban: BanState, now: float, *, limit: int = INVALID_LIMIT) -> BanStatus:
    """Where the count and the ban stand."""
    counting = ban.invalid_since and now < ban.invalid_since + INVALID_WINDOW_S
    waiting = max(ban.banned_until - now, 0.0) if ban.banned_until else 0.0
    return BanStatus(
        invalid=ban.invalid_count if counting else 0,
        limit=limit,
        banned_for=waiting,
        probe_due=bool(ban.banned_until) and not waiting,
    )
