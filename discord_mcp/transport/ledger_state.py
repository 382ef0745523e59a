"""What a rate-limit ledger knows (:mod:`discord_mcp.transport.ledger`, its theory and
operations): each bucket's window and its requests in flight, the routes' hashes and limits, the
global budget, Cloudflare's ban, the buckets shared with other machines; the document a file
ledger stores; and the tickets that name reservations.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from discord_mcp.transport.ban import BanState

FORMAT_VERSION = 1

_tickets = itertools.count(1)


def new_ticket() -> str:
    """A reservation's id, unique on the machine: ``<pid>:<n>``."""
    return f"{os.getpid()}:{next(_tickets)}"


def ticket_pid(ticket: str) -> int:
    """The process that made the reservation ``ticket`` (0 if the id is not ours)."""
    head, _, _ = ticket.partition(":")
    return int(head) if head.isdigit() else 0


@dataclass(slots=True)
class BucketState:
    """One bucket for one major parameter."""

    limit: int | None = None
    """None until a response tells it; :data:`UNLIMITED` for routes without headers."""
    remaining: int = 0
    reset_at: float = 0.0
    """Ledger time at which the current window ends (0: not known yet)."""
    window: float = 0.0
    """Discord's ``X-RateLimit-Reset`` of the current window, to tell windows apart."""
    in_flight: dict[str, float] = field(default_factory=dict)
    """Reservations without a response yet: ticket -> ledger time they lapse."""


@dataclass(slots=True)
class LedgerState:
    """Everything a ledger knows; see the module's theory."""

    hashes: dict[str, str] = field(default_factory=dict)
    """``method template`` -> Discord's bucket hash."""
    limits: dict[str, int] = field(default_factory=dict)
    """Bucket name (hash, or ``method template``) -> its limit per window."""
    buckets: dict[str, BucketState] = field(default_factory=dict)
    global_until: float = 0.0
    global_sent: list[float] = field(default_factory=list)
    """Ledger times of the global-limited sends of the last second, oldest first."""
    ban: BanState = field(default_factory=BanState)
    """Cloudflare's ban and the invalid-request count (:mod:`~discord_mcp.transport.ban`)."""
    shared: dict[str, float] = field(default_factory=dict)
    """Bucket name -> ledger time until which other machines are known to spend it too."""
    sharers: int = 1
    """How many machines share the token (this one included), as its discord-watch last saw."""

    def to_json(self) -> dict[str, Any]:
        """The document a file ledger stores (``version`` 1)."""
        return {
            "version": FORMAT_VERSION,
            "hashes": dict(self.hashes),
            "limits": dict(self.limits),
            "buckets": {
                key: {
                    "limit": b.limit,
                    "remaining": b.remaining,
                    "reset_at": b.reset_at,
                    "window": b.window,
                    "in_flight": dict(b.in_flight),
                }
                for key, b in self.buckets.items()
            },
            "global_until": self.global_until,
            "global_sent": list(self.global_sent),
            "ban": self.ban.to_json(),
            "shared": dict(self.shared),
            "sharers": self.sharers,
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> LedgerState:
        """Read :meth:`to_json`'s document.

        Raises:
            ValueError: the document is not one (wrong version, fields or types).
        """
        if document.get("version") != FORMAT_VERSION:
            raise ValueError(f"version {document.get('version')!r}")
        try:
            buckets = {
                str(key): BucketState(
                    limit=None if b["limit"] is None else int(b["limit"]),
                    remaining=int(b["remaining"]),
                    reset_at=float(b["reset_at"]),
                    window=float(b["window"]),
                    in_flight={str(t): float(e) for t, e in b["in_flight"].items()},
                )
                for key, b in document["buckets"].items()
            }
            return cls(
                hashes={str(k): str(v) for k, v in document["hashes"].items()},
                limits={str(k): int(v) for k, v in document["limits"].items()},
                buckets=buckets,
                global_until=float(document["global_until"]),
                global_sent=sorted(float(t) for t in document["global_sent"]),
                ban=BanState.from_json(document.get("ban")),
                shared={str(k): float(v) for k, v in (document.get("shared") or {}).items()},
                sharers=max(1, int(document.get("sharers", 1))),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed ledger: {exc!r}") from None

    def forget_windows(self) -> None:
        """Drop every time-dependent entry, keeping hashes and limits (the clock restarted)."""
        self.buckets.clear()
        self.shared.clear()
        self.global_until = 0.0
        self.global_sent.clear()
        # The ban's times are on the old clock too; a ban still on shows again at the first
        # request (which records it for everyone).
        self.ban = BanState()
