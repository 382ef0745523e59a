"""How much of a wait Discord asks for is believed.

Theory: a 429's ``retry_after`` and a response's ``X-RateLimit-Reset-After`` go into the ledger
every process of the state directory obeys (:mod:`~discord_mcp.transport.ledger`), so one absurd
value would hold every hook and every session of the machine for as long as it says: a single
``{"retry_after": 99999, "global": true}`` once made every hook refuse for 27 hours. Discord's
documented limits are short, so a longer wait is not taken at its word:

* the global limit (50 requests per second) resets within seconds: a global wait is at most
  :data:`GLOBAL_CAP_S`;
* a route's window lasts seconds, at most ten minutes (a channel's name: 2 edits per 10
  minutes): a longer wait is suspicious, and kept at :data:`ROUTE_CAP_S`;
* a 429 asking for more than :data:`BAN_ABOVE_S` (an hour) is no rate limit but a ban, and is
  handled as Cloudflare's (:mod:`~discord_mcp.transport.ban`): nothing is sent for an hour, then
  one request checks whether it is over;
* a value that is not a finite number (``NaN``, ``Infinity``, which Python's JSON reader accepts)
  is as suspicious as the longest wait: the cap. Below zero is zero.

A wait cut short costs at most one more 429 per cap, which Discord counts as an invalid request
(:mod:`~discord_mcp.transport.ban` counts them too and warns long before a ban); a wait believed
whole could stop the machine for a day.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from discord_mcp.transport.ban import BAN_S

if TYPE_CHECKING:
    from discord_mcp.transport.ledger_state import LedgerState

GLOBAL_CAP_S = 60.0
"""The longest global wait believed: Discord's global limit resets within seconds."""
ROUTE_CAP_S = 600.0
"""The longest wait on one route's bucket believed: the longest window Discord is known to use
(renaming a channel or thread: twice per ten minutes)."""
BAN_ABOVE_S = BAN_S
"""A 429 asking for longer than this (an hour) is handled as a ban."""


def capped(seconds: float, cap: float) -> float:
    """``seconds`` within ``[0, cap]``; a value that is not a finite number is ``cap``."""
    if not math.isfinite(seconds):
        return cap
    return min(max(seconds, 0.0), cap)


def is_ban(retry_after: float) -> bool:
    """Whether a 429's ``retry_after`` is so long (or infinite) that it is handled as a ban."""
    return retry_after > BAN_ABOVE_S  # False for NaN: that one is only capped


def believed(retry_after: float, *, is_global: bool) -> float:
    """The part of a 429's ``retry_after`` that is waited (the caller handles :func:`is_ban`
    first)."""
    return capped(retry_after, GLOBAL_CAP_S if is_global else ROUTE_CAP_S)


def cap_waits(state: LedgerState, now: float) -> bool:
    """Cut every wait ``state`` holds to its cap from ``now`` (a NaN too): a ledger written by
    an older version, or damaged, holds nobody longer than a fresh 429 could. True if one was
    cut (a shared ledger then stores the cut, or the cap would slide with every look)."""
    cut = False
    if not state.global_until <= now + GLOBAL_CAP_S:
        state.global_until, cut = now + GLOBAL_CAP_S, True
    for bucket in state.buckets.values():
        if not bucket.reset_at <= now + ROUTE_CAP_S:
            bucket.reset_at, cut = now + ROUTE_CAP_S, True
    if not state.ban.banned_until <= now + BAN_S:
        state.ban.banned_until, cut = now + BAN_S, True
    return cut
