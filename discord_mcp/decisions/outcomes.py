"""How a decision ends for the owner and the agent: its card shows the outcome, and its answer
is handed over.

- The card: once a decision is final its card is edited to show the outcome (retried a few
  times; recovery retries later), recorded once (``final_shown``), and the question's thread is
  archived when nothing else is open there (:mod:`~discord_mcp.decisions.threads`).
- Answer first: when a call of this process waits on a decision this process just resolved,
  the card's edit waits until that call's answer has left (at most :data:`ANSWER_FIRST_S`).
- Handing over: an agent received the final result (``delivered``), a call of the asking
  session has it in hand (``asker_waiting``), or the answer of a session that is gone is given
  to the session that asks for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from discord_mcp.decisions import kinds
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.decisions.threads import archive_if_done
from discord_mcp.errors import DiscordError, NotFound, StateError, Unauthorized
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)

FINAL_EDIT_RETRIES = (1.0, 5.0, 30.0)
"""Pauses before retrying a failed final edit of a card; recovery retries later ones."""
ANSWER_FIRST_S = 2.0
"""When a call of this process waits on a decision this process just resolved, the card shows
the outcome once that call's answer has left (or after this long): the agent's answer first.
The edit (a request and its rate-limit bookkeeping) would otherwise compete with it; with
twenty sessions answered at once, that is a good part of the machine's work."""


class Outcomes:
    """The ends of one process's decisions (see the module's docstring).

    Args:
        rest: the Discord REST client.
        store: the decision files.
        sleep: how to pause between retries of a final edit.
        lease: this process's lease name: it becomes the asker of an answer it takes over.
        answer_first: the longest the card's outcome waits for a waiting call of this process
            to hand the answer over.
    """

    def __init__(
        self,
        *,
        rest: RestClient,
        store: DecisionStore,
        sleep: Callable[[float], Awaitable[None]],
        lease: str | None,
        answer_first: float = ANSWER_FIRST_S,
    ) -> None:
        self._rest = rest
        self._store = store
        self._sleep = sleep
        self._lease = lease
        self._answer_first = answer_first
        self._handed: dict[str, asyncio.Event] = {}
        """Decisions resolved here while a call waited: set once their answer has left."""

    def expect_handover(self, decision_id: str) -> asyncio.Event:
        """A call of this process waits on ``decision_id``: its card waits for the answer to
        leave (:meth:`mark_delivered` sets the event)."""
        return self._handed.setdefault(decision_id, asyncio.Event())

    # ---- the card -------------------------------------------------------------------------

    async def show_final_after(self, decision: Decision, handed: asyncio.Event | None) -> None:
        """Show the outcome, once the waiting call's answer has left (:data:`ANSWER_FIRST_S`)."""
        if handed is not None:
            try:
                async with asyncio.timeout(self._answer_first):
                    await handed.wait()
            except TimeoutError:
                pass
            finally:
                self._handed.pop(decision.id, None)
        await self.show_final(decision)

    async def _show_final(self, decision: Decision) -> None:
        """Edit the card to show the outcome, once; raises if Discord refuses."""
        try:
            await self._rest.edit_message(
                decision.thread_id,
                decision.card_message_id,
                content=kinds.render_final(decision),
                components=[],
                allowed_mentions={"parse": []},
            )
        except NotFound:
            log.warning("the card of decision %s is gone; nothing to edit", decision.id)
        await self.record_final_shown(decision.id)

    async def record_final_shown(self, decision_id: str) -> None:
        """The card shows the outcome: record it, and archive the question's thread if nothing
        else is open there (:mod:`~discord_mcp.decisions.threads`). Only the process that
        records it archives: others that showed the same outcome send no second request."""
        stored, recorded = await self._store.aupdate(
            decision_id,
            lambda current: None if current.final_shown else current.replace(final_shown=True),
        )
        if recorded:
            await archive_if_done(self._store, self._rest, stored)

    async def show_final(self, decision: Decision) -> None:
        """Show the outcome on the card, retrying a failed edit a few times (then recovery
        retries it on the next start)."""
        if not decision.card_message_id:
            return
        for pause in (*FINAL_EDIT_RETRIES, None):
            try:
                await self._show_final(decision)
                return
            except Unauthorized:
                raise
            except (DiscordError, StateError) as exc:
                if pause is None:
                    log.warning("showing the outcome of decision %s failed: %s", decision.id, exc)
                    return
                await self._sleep(pause)

    # ---- handing the answer over ------------------------------------------------------------

    async def mark_delivered(self, decision: Decision) -> Decision:
        """Record that an agent received this final result."""
        handed = self._handed.get(decision.id)
        if handed is not None:
            handed.set()  # the card may show the outcome now
        if not decision.is_final or decision.delivered:
            return decision

        def change(current: Decision) -> Decision | None:
            return current.replace(delivered=True) if current.is_final else None

        stored, _ = await self._store.aupdate(decision.id, change)
        return stored

    async def mark_taken(self, decision: Decision) -> Decision:
        """Record that a call of the asking session has the final answer in hand (its response
        is about to leave): :attr:`Decision.asker_waiting`."""

        def change(current: Decision) -> Decision | None:
            return None if current.asker_waiting else current.replace(asker_waiting=True)

        stored, _ = await self._store.aupdate(decision.id, change)
        return stored

    async def deliver_if_away(
        self, decision: Decision, *, until_sent: bool = False
    ) -> Decision | None:
        """The answer of a decision whose asker is gone and that nobody waits on, for this
        session; None if it belongs to a live session (or was delivered already).

        ``until_sent``: this process becomes its asker instead of marking it delivered; the
        caller marks it (:meth:`mark_delivered`) once the answer has left.
        """
        if not decision.is_final or decision.delivered:
            return None
        adopt = self._lease if until_sent else None
        return await self._store.adeliver_if_away(decision.id, adopt=adopt)
