"""Which decisions' live events one process handles, and which threads it asks the gateway
holder for.

A server handles the live events of the decisions it waits on, and of those whose card it
posted and that no wait here has ended since: between the card and the call that waits on it,
an answer routed here must not be dropped for want of a waiting call. When the server may follow
another process's gateway, it asks the holder for those decisions' threads
(:mod:`~discord_mcp.relay.interest`): from just before the card is posted (:meth:`Listening.asked`,
called by the :class:`~discord_mcp.decisions.posting.Poster`), or from the start of a wait, before
its first poll; and it lets go when the last wait here ends, the post fails, or the decision is
final here. The watch daemon handles every pending decision of the state directory instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DecisionError, StateError
from discord_mcp.relay.interest import Interests


class Listening:
    """The live events of one process's decisions.

    Args:
        store: the decision files.
        waiting: decision id -> calls of this process waiting on it (the service's, read only).
        interests: where the threads are asked for (None: no holder routes to this process, or
            it gets every event).
        everything: handle every pending decision of the state directory (the watch daemon).
    """

    def __init__(
        self,
        store: DecisionStore,
        waiting: Mapping[str, int],
        *,
        interests: Interests | None,
        everything: bool,
    ) -> None:
        self._store = store
        self._waiting = waiting
        self._everything = everything
        self._interests = None if everything else interests
        self._asked: set[str] = set()
        """Cards posted here that no wait here has ended since."""
        self._threads: dict[str, str] = {}
        """Decision id -> the thread asked for on its behalf."""
        self._unrouted: set[str] = set()
        """Decisions whose thread could not be asked for."""
        self._routes: dict[str, tuple[str, str]] = {}
        """(thread id, card message id) of decisions handled here: fixed once the card is
        posted, so a live event is matched without reading every such decision's file."""

    def asked(self, decision: Decision) -> None:
        """The card of ``decision`` is about to be posted from here (its thread is known)."""
        if not self._everything:
            self._asked.add(decision.id)
            self.listen(decision)

    def listen(self, decision: Decision) -> None:
        """Ask for the events of ``decision``'s thread, once, if it has a thread yet."""
        if (
            self._interests is None
            or not decision.thread_id
            or decision.id in self._threads
            or decision.id in self._unrouted
        ):
            return
        if self._interests.want(decision.thread_id):
            self._threads[decision.id] = decision.thread_id
        else:
            self._unrouted.add(decision.id)

    def done(self, decision_id: str) -> None:
        """A wait on ``decision_id`` ended here (or its post failed, or it is final here): its
        events are no longer wanted, unless a call here still waits on it."""
        self._asked.discard(decision_id)
        if decision_id in self._waiting:
            return
        self._unrouted.discard(decision_id)
        self._routes.pop(decision_id, None)
        thread_id = self._threads.pop(decision_id, None)
        if thread_id is not None and self._interests is not None:
            self._interests.drop(thread_id)

    def routed(self, decision_id: str) -> bool:
        """Whether live events of ``decision_id`` reach this process when a gateway is live
        (else its polling keeps the normal pace)."""
        return decision_id not in self._unrouted

    async def matching(self, *, thread_id: str = "", card_id: str = "") -> list[Decision]:
        """The pending decisions handled here whose thread (or card) is this one."""

        def matches(route: tuple[str, str]) -> bool:
            return bool(route[1]) and (route[0] == thread_id if thread_id else route[1] == card_id)

        if self._everything:
            return [
                d
                for d in await self._store.aopen_decisions()
                if d.status == "pending" and matches((d.thread_id, d.card_message_id))
            ]
        found = []
        for decision_id in [*self._waiting, *(self._asked - self._waiting.keys())]:
            with contextlib.suppress(DecisionError, StateError):
                if matches(self._route(decision_id)):
                    found.append(self._store.load(decision_id))
        return found

    def _route(self, decision_id: str) -> tuple[str, str]:
        route = self._routes.get(decision_id)
        if route is None:
            decision = self._store.load(decision_id)
            route = (decision.thread_id, decision.card_message_id)
            if all(route):
                self._routes[decision_id] = route
        return route
