"""Gateway sessions: what each identified client is owed, and the identify budget.

A session begins with a successful IDENTIFY and outlives its connections. Every dispatch it is
entitled to (by intents and shard) gets the session's next sequence number and is kept, so a
RESUME on a new connection can replay what the client missed. While no connection is attached
(dropped, closed with a code other than 1000/1001, told to reconnect) dispatches keep being
numbered and kept for ``gateway_resume_timeout`` seconds; after that, or after a 1000/1001
close from the client, the session is gone and a RESUME of it gets op 9.

:class:`SessionRegistry` listens to the state's events (one listener for all sessions), so
every change made through REST, the control API or an interaction reaches the gateway in the
order it happened. :class:`IdentifyBudget` is ``session_start_limit``.
"""

from __future__ import annotations

import secrets
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from discord_mcp.emulator.intents import (
    MESSAGE_CONTENT,
    carries_content,
    is_direct,
    required_intent,
    withhold_content,
)
from discord_mcp.emulator.models import DM, FLAG_EPHEMERAL
from discord_mcp.emulator.store import Event, Store

REPLAY_LIMIT = 10_000
"""Dispatches kept per session; a RESUME from before the oldest kept one gets op 9."""

IDENTIFY_INTERVAL = 5.0
"""Seconds between two identifies with ``max_concurrency`` 1 (times ``rate_limit_scale``)."""

BUDGET_WINDOW = 86_400.0
"""``session_start_limit`` resets this many seconds after the first identify it counted."""

_NOT_REPLAYED = frozenset({"READY", "RESUMED"})


class Outlet(Protocol):
    """A gateway connection, as a session sees it."""

    def send(self, payload: dict[str, Any]) -> None:
        """Queue one gateway payload for the client (never blocks)."""

    def close(self, code: int, reason: str = "") -> None:
        """Close the connection with a websocket close code (never blocks)."""


@dataclass
class GatewayStats:
    """Gateway counters, merged into ``GET /_emulator/state`` stats.

    ``gateway_identifies`` and ``gateway_resumes`` count the IDENTIFY and RESUME payloads
    received, refused ones included (a client that spins on either shows up here);
    ``gateway_dispatches`` counts numbered dispatches, replays not counted twice.
    """

    gateway_identifies: int = 0
    gateway_resumes: int = 0
    gateway_connections_open: int = 0
    gateway_connections_total: int = 0
    gateway_heartbeats: int = 0
    gateway_dispatches: int = 0


@dataclass(frozen=True)
class Dispatch:
    seq: int
    type: str
    data: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        return {"op": 0, "d": self.data, "s": self.seq, "t": self.type}


class Session:
    """One identified session: its intents, shard, sequence and kept dispatches."""

    def __init__(self, session_id: str, intents: int, shard: tuple[int, int] | None) -> None:
        self.id = session_id
        self.intents = intents
        self.shard = shard
        self.seq = 0
        self.kept: deque[Dispatch] = deque(maxlen=REPLAY_LIMIT)
        self.outlet: Outlet | None = None
        self.resumable_until: float | None = None

    def owns_guild(self, guild_id: str) -> bool:
        """Whether this session's shard receives the guild's events (``(id >> 22) % count``)."""
        if self.shard is None:
            return True
        shard_id, count = self.shard
        return (int(guild_id) >> 22) % count == shard_id

    def owns_dms(self) -> bool:
        """Direct messages go to shard 0 only."""
        return self.shard is None or self.shard[0] == 0

    def replay_after(self, seq: int) -> list[Dispatch] | None:
        """The dispatches after ``seq`` a RESUME replays, or None if some are no longer kept."""
        if self.kept and seq < self.kept[0].seq - 1:
            return None
        return [d for d in self.kept if d.seq > seq and d.type not in _NOT_REPLAYED]

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.id,
            "intents": self.intents,
            "seq": self.seq,
            "connected": self.outlet is not None,
            "shard": None if self.shard is None else list(self.shard),
        }


class IdentifyBudget:
    """``session_start_limit``: ``total`` identifies per 24 h, one per 5 s (scaled)."""

    def __init__(self, total: int, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.total = total
        self.used = 0
        self.token_reset = False
        self._window_start: float | None = None
        self._last_identify: float | None = None

    def _roll(self) -> None:
        start = self._window_start
        if start is not None and self.clock() - start >= BUDGET_WINDOW:
            self.used = 0
            self._window_start = None

    def remaining(self) -> int:
        self._roll()
        return max(0, self.total - self.used)

    def reset_after_ms(self) -> int:
        self._roll()
        if self._window_start is None:
            return 0
        return max(0, int((self._window_start + BUDGET_WINDOW - self.clock()) * 1000))

    def too_soon(self, interval: float) -> bool:
        """Whether an identify now would exceed ``max_concurrency`` (1 per ``interval`` s)."""
        last = self._last_identify
        return last is not None and self.clock() - last < interval

    def use(self) -> None:
        self._roll()
        now = self.clock()
        if self._window_start is None:
            self._window_start = now
        self.used += 1
        self._last_identify = now

    def set_total(self, total: int) -> None:
        """A fresh budget of ``total`` identifies, for a token that works (the control API's
        ``identify_limit``)."""
        self.total = total
        self.token_reset = False
        self.used = 0
        self._window_start = None

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "remaining": self.remaining(),
            "reset_after": self.reset_after_ms(),
            "max_concurrency": 1,
        }


class SessionRegistry:
    """Every live session, fed from the state's events."""

    def __init__(
        self, store: Store, *, resume_timeout: float, identify_limit: int, stats: GatewayStats
    ) -> None:
        self.store = store
        self.resume_timeout = resume_timeout
        self.stats = stats
        self.budget = IdentifyBudget(identify_limit, store.clock)
        self._sessions: dict[str, Session] = {}
        store.subscribe(self._on_event)

    def start(self, intents: int, shard: tuple[int, int] | None, outlet: Outlet) -> Session:
        """A new session attached to ``outlet``; uses one identify of the budget."""
        self.budget.use()
        session = Session(secrets.token_hex(16), intents, shard)
        session.outlet = outlet
        self._sessions[session.id] = session
        return session

    def dispatch(self, session: Session, type_: str, data: dict[str, Any]) -> None:
        """Number a dispatch for ``session``, keep it, and send it if a connection is attached."""
        session.seq += 1
        entry = Dispatch(session.seq, type_, data)
        session.kept.append(entry)
        self.stats.gateway_dispatches += 1
        if session.outlet is not None:
            session.outlet.send(entry.payload())

    def resumable(self, session_id: str) -> Session | None:
        """The session a RESUME names, if it still exists."""
        self._expire()
        return self._sessions.get(session_id)

    def detach(self, session: Session, *, resumable: bool) -> None:
        """The session's connection is gone: keep it for a resume, or end it."""
        session.outlet = None
        if resumable:
            session.resumable_until = self.store.clock() + self.resume_timeout
        else:
            self._sessions.pop(session.id, None)

    def attach(self, session: Session, outlet: Outlet) -> None:
        session.outlet = outlet
        session.resumable_until = None

    def reset_token(self) -> None:
        """The token is reset (past ``session_start_limit``, or scripted): every session ends
        with 4004 and the token is refused until ``IdentifyBudget.set_total`` gives a new one."""
        self.budget.token_reset = True
        for session in list(self._sessions.values()):
            outlet = session.outlet
            self.detach(session, resumable=False)
            if outlet is not None:
                outlet.close(4004, "Authentication failed.")

    def connected(self) -> list[Session]:
        """Sessions with a connection attached that receive this guild's events."""
        guild_id = self.store.guild.id
        return [
            s for s in self._sessions.values() if s.outlet is not None and s.owns_guild(guild_id)
        ]

    def to_json(self) -> list[dict[str, Any]]:
        self._expire()
        return [session.to_json() for session in self._sessions.values()]

    def _expire(self) -> None:
        now = self.store.clock()
        for session in list(self._sessions.values()):
            until = session.resumable_until
            if session.outlet is None and until is not None and now > until:
                del self._sessions[session.id]

    def _on_event(self, event: Event) -> None:
        data = event.data
        content = carries_content(event.type)
        if content and data.get("flags", 0) & FLAG_EPHEMERAL:
            # Ephemeral responses exist only in the clicking user's client.
            return
        self._expire()
        if event.type == "CHANNEL_CREATE" and data.get("type") == DM:
            return  # Discord no longer tells bots about DM channels they open
        direct = is_direct(event.type, data)
        if not direct and not self.store.bot_in_guild and event.type != "GUILD_DELETE":
            # A bot removed from the guild hears nothing of it (until GUILD_CREATE re-adds it).
            return
        needed = required_intent(event.type, direct=direct)
        guild_id = str(data.get("guild_id") or self.store.guild.id)
        withheld: dict[str, Any] | None = None
        for session in list(self._sessions.values()):
            if needed and not session.intents & needed:
                continue
            if not (session.owns_dms() if direct else session.owns_guild(guild_id)):
                continue
            body = data
            if content and not direct and not session.intents & MESSAGE_CONTENT:
                if withheld is None:
                    withheld = withhold_content(data, self.store.bot.id)
                body = withheld
            self.dispatch(session, event.type, body)
