"""Scripted failures: the next N requests of a route get a chosen status instead of an answer.

Faults are queued per route name (``"POST /channels/{channel_id}/messages"``) and used in the
order they were added. A 429 fault looks like Discord's (JSON body, ``Retry-After``, ``Via``,
the bucket's current headers, so one sent while ``Remaining`` is above 0 is a
"sub-rate-limit") unless ``cloudflare`` asks for the HTML ban page.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any


@dataclass
class RouteFault:
    route: str
    status: int
    remaining: int
    retry_after: float | None = None
    is_global: bool = False
    cloudflare: bool = False
    no_retry_after: bool = False
    scope: str | None = None
    code: int | None = None
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"route": self.route, "status": self.status, "count": self.remaining}
        if self.status == 429:
            data.update(
                retry_after=self.retry_after,
                **{"global": self.is_global},
                cloudflare=self.cloudflare,
                no_retry_after=self.no_retry_after,
                scope=self.scope,
            )
        if self.code is not None:
            data["code"] = self.code
        if self.message is not None:
            data["message"] = self.message
        return data


class FaultBook:
    """Pending route faults, consumed one request at a time."""

    def __init__(self) -> None:
        self._queues: dict[str, deque[RouteFault]] = {}

    def add(self, fault: RouteFault) -> None:
        self._queues.setdefault(fault.route, deque()).append(fault)

    def take(self, route: str) -> RouteFault | None:
        """The fault to apply to this request of ``route``, if one is pending."""
        queue = self._queues.get(route)
        if not queue:
            return None
        fault = queue[0]
        fault.remaining -= 1
        if fault.remaining <= 0:
            queue.popleft()
        return fault

    def clear(self) -> None:
        self._queues.clear()

    def to_json(self) -> list[dict[str, Any]]:
        return [fault.to_json() for queue in self._queues.values() for fault in queue]
