"""Asking, waiting, cancelling: the decision lifecycle against Discord and the state directory.

Waiting is bounded. A waiting call returns when the decision is final or when its bound runs
out, and the decision stays pending in its file either way: a client timeout or a cancelled call
never reads as "no". While it waits it polls the thread over REST every poll interval, and it
watches the decision's file, so an answer found by another process (another agent's server, the
watch daemon, the gateway holder) ends the wait too. Posting the question is
:mod:`~discord_mcp.decisions.posting`'s job.

With a gateway, live events answer first; a server that follows another process's gateway gets
those of the threads it asked for (:mod:`~discord_mcp.decisions.listening`). Polling is then a
slow safety net, except where the route could not be recorded.

Every state change goes through the store's async methods, off the event loop, and no lock is
held while Discord is asked anything: one process serves every waiting call of its session.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from discord_mcp import i18n
from discord_mcp.config import Settings
from discord_mcp.decisions import cards
from discord_mcp.decisions.archive import RESHOW_FINAL_DAYS
from discord_mcp.decisions.callers import Caller, check_caller
from discord_mcp.decisions.hearing import Hearing
from discord_mcp.decisions.listening import Listening
from discord_mcp.decisions.model import Decision, new_decision_id, utc_now
from discord_mcp.decisions.outcomes import ANSWER_FIRST_S, Outcomes
from discord_mcp.decisions.posting import Poster
from discord_mcp.decisions.questions import Question, same_question, validated
from discord_mcp.decisions.reading import ThreadReader
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import (
    DecisionNotFound,
)
from discord_mcp.relay.fswatch import FileChanges, Subscription, subscribed
from discord_mcp.relay.interest import Interests
from discord_mcp.state.files import off_loop
from discord_mcp.state.leases import lease_alive
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)

FILE_POLL_S = 0.1
"""Without change notifications, how often a waiting call looks at its decision file for another
process's answer: a click answered by the gateway in another process stays within its 150 ms
budget."""
SAFETY_POLL_S = 30.0
"""With a live gateway, polling only catches what a holder handover might have missed."""
LIVE_CHECK_S = 2.0
"""While a card has no buttons, how often a waiting call checks whether a gateway came up."""

Progress = Callable[[float, Decision], Awaitable[None]]


class DecisionService:
    """The decision lifecycle for one project, in one process.

    Args:
        settings: the validated settings (owners, channel, project, poll interval).
        rest: the Discord REST client.
        store: the decision files.
        background: where follow-up work (reactions, card edits) runs.
        clock: monotonic seconds (injectable).
        live: whether a gateway session is live on this machine (cards get buttons, polling
            becomes a slow safety net).
        watch_all: handle live events for every pending decision of the state directory, not
            only the ones this process waits on (the watch daemon does).
        lease: this process's lease name (:class:`~discord_mcp.state.leases.ProcessLease`),
            recorded on the decisions it asks.
        sleep: how to pause between retries (injectable).
        changes: file change notifications (None: look at decision files every ``file_poll``).
        file_poll: seconds between looks at a decision file without notifications.
        on_change: called (synchronously) with the id of each decision this process changes
            to a final state (the watch daemon resumes runs on a late Allow).
        answer_first: the longest the card's outcome waits for a waiting call of this process
            to hand the answer over (:data:`~.outcomes.ANSWER_FIRST_S`).
        interests: where this process says which threads' live events it wants (a server that
            may follow another process's gateway); None: it gets every event (the daemon), or
            none (no gateway).
    """

    def __init__(
        self,
        *,
        settings: Settings,
        rest: RestClient,
        store: DecisionStore,
        background: Background,
        clock: Callable[[], float] = time.monotonic,
        live: Callable[[], bool] = lambda: False,
        watch_all: bool = False,
        lease: str | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        changes: FileChanges | None = None,
        file_poll: float = FILE_POLL_S,
        on_change: Callable[[str], None] | None = None,
        answer_first: float = ANSWER_FIRST_S,
        interests: Interests | None = None,
    ) -> None:
        self._settings = settings
        self._changes = changes
        self._file_poll = file_poll
        self.on_change = on_change
        """Called with a decision's id whenever this process resolved or ended it."""
        self._live = live
        self._lease = lease
        self._sleep = sleep
        self._waiting: dict[str, int] = {}
        self._listening = Listening(store, self._waiting, interests=interests, everything=watch_all)
        self._rest = rest
        self._store = store
        self._background = background
        self._clock = clock
        self._changed: dict[str, asyncio.Event] = {}
        self.file_looks = 0
        """How many times a waiting call woke to look at its decision file (tests count them)."""
        self.outcomes = Outcomes(
            rest=rest, store=store, sleep=sleep, lease=lease, answer_first=answer_first
        )
        self.poster = Poster(
            settings=settings,
            rest=rest,
            store=store,
            background=background,
            live=live,
            before_card=self._listening.asked,
            not_posted=self._listening.done,
        )
        self.reader = ThreadReader(
            settings=settings, rest=rest, store=store, poster=self.poster, resolved=self._resolved
        )
        self.hearing = Hearing(
            store=store,
            reader=self.reader,
            poster=self.poster,
            listening=self._listening,
            live=live,
            show_final=self.outcomes.show_final,
        )

    @property
    def store(self) -> DecisionStore:
        """The decision files this service works on."""
        return self._store

    @property
    def machine(self) -> str:
        """This machine's name: its cards' clicks are the only ones it answers."""
        return self._settings.machine

    # ---- asking -----------------------------------------------------------------------------

    async def ask(self, q: Question) -> tuple[Decision, bool]:
        """Post a question, or find the same question already pending.

        Returns the decision and whether it is new (False: an identical pending question of this
        project was found and is returned instead of a duplicate; if its card never reached
        Discord because its asker died, the card is posted now).

        Raises:
            DecisionError: the question, its options or its thread are not acceptable (the
                message says why).
            DiscordError: Discord refused the thread or the card.
            StateError: the state directory cannot record it (full, unwritable).
        """
        q = validated(q)
        thread_id, channel_id, guild_id = "", self._settings.channel_id, ""
        asked_in = q.thread_id or self._settings.thread_id
        if asked_in:
            thread_id, parent_id, guild_id = await self.poster.existing_thread(asked_in)
            channel_id = parent_id or thread_id
        deadline = None
        if q.timeout_seconds is not None:
            deadline = (datetime.now(UTC) + timedelta(seconds=q.timeout_seconds)).isoformat(
                timespec="milliseconds"
            )
        draft = Decision(
            id=new_decision_id(),
            project=q.project or self._settings.project_name,
            session=q.session,
            question=q.question,
            context=q.context,
            options=q.options,
            channel_id=channel_id,
            thread_id=thread_id,
            card_message_id="",
            thread_url=self.poster.thread_url(guild_id, thread_id) if thread_id else "",
            asked_at=utc_now(),
            deadline=deadline,
            on_timeout=q.on_timeout,
            mention=q.mention,
            urgent=q.urgent,
            reaction_emojis=cards.reaction_emojis(q.options),
            owner_ids=tuple(sorted(self._settings.owner_ids)),
            asker_lease=self._lease,
            language=i18n.choose(self._settings.language, q.question),
            from_run=self._settings.in_run,
            project_key=self._settings.project_key,
            machine=self._settings.machine,
        )
        settings = self._settings

        def same(d: Decision) -> bool:
            """A retry of this session's question in the same place, never another session's
            or thread's question that happens to read the same."""
            return (
                d.kind == "question"
                and settings.owns(d)
                and d.session == q.session
                and (not asked_in or d.thread_id == thread_id)
                and same_question(d, q)
            )

        existing = await self._store.acreate_unless_pending(draft, same)
        if existing is not None:
            if not existing.card_message_id:
                existing = await self.poster.post(existing, fresh=False)
            elif not lease_alive(self._store.home, existing.asker_lease):
                # Its asker may have died between the card and its reactions (found by
                # bench/chaos): adding a reaction the card has is a no-op.
                self.poster.add_reactions_soon(existing)
            return existing, False
        return await self.poster.post(draft, fresh=True), True

    # ---- waiting ----------------------------------------------------------------------------

    async def wait(
        self,
        decision_id: str,
        *,
        max_wait: float,
        progress: Progress | None = None,
        progress_every: float = 20.0,
        caller: Caller | None = None,
    ) -> Decision:
        """Wait up to ``max_wait`` seconds for the decision to become final.

        Returns the decision: final, or still pending when the bound ran out. Cancelling the
        call (a client timeout, Esc) leaves the decision pending; nothing is lost.

        Raises:
            DecisionNotFound: no such decision.
            NotYourDecision: ``caller`` may not wait on it (:meth:`check_caller`).
        """
        decision = self._store.load(decision_id)  # DecisionNotFound before anything else
        if caller is not None:
            self.check_caller(decision, caller)
        hold = await self._store.ahold_waiting(decision_id)
        self._waiting[decision_id] = self._waiting.get(decision_id, 0) + 1
        try:
            self._listening.listen(decision)  # before the first poll: nothing falls in between
            return await self._wait(decision_id, max_wait, progress, progress_every)
        finally:
            self._waiting[decision_id] -= 1
            if not self._waiting[decision_id]:
                del self._waiting[decision_id]
            self._listening.done(decision_id)
            hold.release()

    def _poll_interval(self, decision_id: str) -> float:
        if self._live() and self._listening.routed(decision_id):
            return max(self._settings.poll_interval, SAFETY_POLL_S)
        return self._settings.poll_interval

    async def _wait(
        self, decision_id: str, max_wait: float, progress: Progress | None, progress_every: float
    ) -> Decision:
        path = self._store.path(decision_id)
        event = self._changed.setdefault(decision_id, asyncio.Event())
        with subscribed(
            self._changes, path.parent, {path.name}, event=event, replaced=True
        ) as watch:
            return await self._wait_watched(decision_id, max_wait, progress, progress_every, watch)

    async def _wait_watched(
        self,
        decision_id: str,
        max_wait: float,
        progress: Progress | None,
        progress_every: float,
        watch: Subscription,
    ) -> Decision:
        start = self._clock()
        next_poll = start
        next_progress = start + progress_every
        next_live_check = start
        stamp = self._store.stamp(decision_id)
        while True:
            decision = self._store.load(decision_id)
            if decision.is_final:
                return decision
            if decision.deadline_passed(datetime.now(UTC)):
                return await self.expire(decision)
            now = self._clock()
            self._listening.listen(decision)  # its thread may have been opened since
            if not decision.card_buttons and now >= next_live_check:
                decision = await self.hearing.upgrade_if_live(decision)
                next_live_check = now + LIVE_CHECK_S
            if now >= next_poll:
                decision = await self.poll(decision)
                if decision.is_final:
                    return decision
                next_poll = self._clock() + self._poll_interval(decision_id)
            now = self._clock()
            if now - start >= max_wait:
                return decision
            if progress is not None and now >= next_progress:
                await progress(now - start, decision)
                next_progress = now + progress_every
            wake = min(next_poll, start + max_wait, next_progress if progress else next_poll)
            if not decision.card_buttons:
                wake = min(wake, next_live_check)
            if decision.deadline:
                left = (
                    datetime.fromisoformat(decision.deadline) - datetime.now(UTC)
                ).total_seconds()
                wake = min(wake, now + max(left, 0.0))
            stamp = await self._until_changed(decision_id, stamp, max(wake - now, 0.0), watch)

    async def _until_changed(
        self,
        decision_id: str,
        stamp: tuple[int, int, int] | None,
        seconds: float,
        watch: Subscription,
    ) -> tuple[int, int, int] | None:
        """Sleep up to ``seconds``, returning early when the decision's file changes."""
        end = self._clock() + seconds
        while True:
            current = self._store.stamp(decision_id)
            if current != stamp:
                return current
            left = end - self._clock()
            if left <= 0:
                return current
            watch.take()
            await watch.wait(left if watch.notified else min(left, self._file_poll))
            self.file_looks += 1

    def owners(self, decision: Decision) -> frozenset[str]:
        """Who may answer ``decision``: the owners of the process that asked it."""
        return self.reader.owners(decision)

    def _resolved(self, decision: Decision) -> None:
        handed = None
        if decision.id in self._waiting:
            handed = self.outcomes.expect_handover(decision.id)
        self._listening.done(decision.id)
        self.notify_waiters(decision.id)
        self._background.spawn(
            self.outcomes.show_final_after(decision, handed), f"final-{decision.id}"
        )

    def notify_waiters(self, decision_id: str) -> None:
        """Wake this process's calls waiting on ``decision_id`` (it just changed)."""
        event = self._changed.get(decision_id)
        if event is not None:
            event.set()
        if self.on_change is not None:
            self.on_change(decision_id)

    # ---- hearing answers (:mod:`~discord_mcp.decisions.hearing`) ---------------------------

    async def poll(self, decision: Decision) -> Decision:
        """Look at the thread once and act on what it holds (:meth:`.Hearing.poll`)."""
        return await self.hearing.poll(decision)

    async def upgrade_cards(self) -> None:
        """Buttons for every pending card that lacks them (:meth:`.Hearing.upgrade_cards`)."""
        await self.hearing.upgrade_cards()

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        """A live gateway event for the decisions this process watches (:mod:`.hearing`)."""
        await self.hearing.on_event(name, data)

    # ---- the outcome and the answer (:mod:`~discord_mcp.decisions.outcomes`) ---------------

    async def show_final(self, decision: Decision) -> None:
        """Show the outcome on the card (:meth:`.Outcomes.show_final`)."""
        await self.outcomes.show_final(decision)

    async def record_final_shown(self, decision_id: str) -> None:
        """The card shows the outcome: record it (:meth:`.Outcomes.record_final_shown`)."""
        await self.outcomes.record_final_shown(decision_id)

    async def mark_delivered(self, decision: Decision) -> Decision:
        """Record that an agent received this final result (:meth:`.Outcomes.mark_delivered`)."""
        return await self.outcomes.mark_delivered(decision)

    async def mark_taken(self, decision: Decision) -> Decision:
        """A call of the asking session has the answer in hand (:meth:`.Outcomes.mark_taken`)."""
        return await self.outcomes.mark_taken(decision)

    async def deliver_if_away(
        self, decision: Decision, *, until_sent: bool = False
    ) -> Decision | None:
        """The answer of a decision whose asker is gone, for this session
        (:meth:`.Outcomes.deliver_if_away`)."""
        return await self.outcomes.deliver_if_away(decision, until_sent=until_sent)

    # ---- ending -----------------------------------------------------------------------------

    async def expire(self, decision: Decision) -> Decision:
        """The agent's own deadline passed: mark it expired and say so on the card."""
        stored, won = await self._store.afinish(
            decision.id, status="expired", answered_at=utc_now()
        )
        if won:
            self._listening.done(decision.id)
            self.notify_waiters(decision.id)
            self._background.spawn(self.show_final(stored), f"final-{decision.id}")
        return stored

    async def cancel(
        self, decision_id: str, reason: str | None, *, caller: Caller | None = None
    ) -> Decision:
        """Withdraw a question; the card says so and waiting calls return ``cancelled``.

        Raises:
            DecisionNotFound: no such decision.
            NotYourDecision: ``caller`` may not cancel it (:meth:`check_caller`).
        """
        if caller is not None:
            self.check_caller(await off_loop(self._store.load, decision_id), caller)
        stored, won = await self._store.afinish(
            decision_id, status="cancelled", cancel_reason=reason, answered_at=utc_now()
        )
        if won:
            self._listening.done(decision_id)
            self.notify_waiters(decision_id)
            await self.show_final(stored)
        return stored

    def check_caller(self, decision: Decision, caller: Caller) -> None:
        """Whether ``caller`` may wait on ``decision``, cancel it and be handed its answer
        (:func:`~discord_mcp.decisions.callers.check_caller`).

        Raises:
            NotYourDecision: with a sentence the calling agent can act on.
        """
        check_caller(self._settings, self._store.home, self._lease, decision, caller)

    async def recover(self, *, all_projects: bool = False) -> list[Decision]:
        """Look once at every open decision of this project (after a restart, or on request).

        Answers given while no server was running are found in the threads' history; cards
        that never reached Discord are posted; outcomes that never reached a card are shown.
        ``all_projects``: every project's decisions (the watch daemon).
        """
        found: list[Decision] = []
        recent = datetime.now(UTC) - timedelta(days=RESHOW_FINAL_DAYS)
        for decision in await self._store.aopen_decisions():
            if not all_projects and not self._settings.owns(decision):
                continue
            if decision.is_final:
                answered = decision.answered_at or decision.asked_at
                if not decision.final_shown and datetime.fromisoformat(answered) >= recent:
                    self._background.spawn(self.show_final(decision), f"final-{decision.id}")
                continue
            try:
                if decision.deadline_passed(datetime.now(UTC)):
                    found.append(await self.expire(decision))
                else:
                    found.append(await self.poll(decision))
            except DecisionNotFound:
                continue
        return found
