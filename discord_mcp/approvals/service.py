"""Deciding one tool request: a precedent, or the owner's answer, within a bound.

:meth:`ApprovalService.decide` is what every route calls (the ``approve`` tool and the hooks):

1. a session rule, an unused late Allow, or the Allow of the same call's first ask (Codex asks
   twice for one call) answers at once (:mod:`~discord_mcp.approvals.rules`);
2. otherwise the request becomes an approval in the decision store, posted as a card in the
   asking session's thread: the run's thread (``DISCORD_THREAD_ID``), the thread of this
   session's earlier approvals, or a new one. The same request asked again while pending
   reuses it when no other call is waiting on it (a retry after the asker gave up or died,
   or the same call asking again): one card's "Allow once" never answers two calls at once;
3. the wait is the decision service's bounded wait (polling, live events, the file watched);
4. when the bound runs out the approval is marked ``gave_up_at`` (still pending: a late answer
   counts) and the agent is told that no one answered and the tool was not run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from discord_mcp import i18n
from discord_mcp.approvals import cards, unasked
from discord_mcp.approvals.request import ToolRequest, describe
from discord_mcp.approvals.rules import (
    FILE_LIMIT,
    precedent,
    record_handed,
    session_thread,
    use,
)
from discord_mcp.config import Settings
from discord_mcp.decisions import kinds
from discord_mcp.decisions.model import Decision, new_decision_id, utc_now
from discord_mcp.decisions.service import DecisionService, Progress
from discord_mcp.errors import DiscordError, NotFound, Unauthorized
from discord_mcp.state.files import off_loop
from discord_mcp.state.leases import lease_alive
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)

How = Literal["owner", "rule", "late", "second ask", "timeout", "elsewhere"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """The answer for the asking CLI.

    ``behavior``: run the tool or not. ``message``: for a denial, the reason the agent reads.
    ``how``: the owner answered, a session rule, a late Allow or the first ask's Allow did
    (``second ask``), no one answered in time (``timeout``), or it was answered elsewhere
    (at the terminal).
    """

    behavior: Literal["allow", "deny"]
    message: str
    how: How
    decision: Decision | None = None


class ApprovalService:
    """Approvals for one process, on top of its decision service.

    Args:
        resume: requests come from a ``discord-watch`` run, which a late Allow resumes.
    """

    def __init__(
        self,
        *,
        settings: Settings,
        decisions: DecisionService,
        rest: RestClient,
        lease: str | None = None,
        resume: bool = False,
    ) -> None:
        self._settings = settings
        self._decisions = decisions
        self._rest = rest
        self._lease = lease
        self._resume = resume
        self._claimed: set[str] = set()
        """Approvals a call of this process asked or took over and has not finished with: no
        other call may take them, even before the first begins to wait (its card is posting)."""

    @property
    def decisions(self) -> DecisionService:
        return self._decisions

    async def decide(
        self,
        request: ToolRequest,
        *,
        max_wait: float,
        label: str,
        progress: Progress | None = None,
        elsewhere: Callable[[], Awaitable[str]] | None = None,
        deadline: float | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> Outcome:
        """Answer ``request``: from a precedent, else from the owner within ``max_wait``.

        ``elsewhere``: completes (with the reason to show on the card) when the CLI got its
        answer another way, e.g. at the terminal; the approval is then closed as cancelled.
        ``deadline`` (``time.monotonic``): the wait ends by then at the latest, however long the
        card took to post (a hook must answer before its CLI's timeout).
        ``extra``: more fields stored with the approval (an ACP agent's options).
        """
        store = self._decisions.store
        found = await off_loop(precedent, store, request)
        if found is not None and await off_loop(use, store, found, request):
            log.info(
                "approval for %s answered by %s %s", request.tool_name, found.how, found.decision.id
            )
            return Outcome("allow", "", found.how, found.decision)
        max_wait = _until(deadline, max_wait)
        try:
            decision = await self.ask(request, max_wait=max_wait, label=label, extra=extra)
        except BaseException as exc:  # the call is blocked: a run's result must say so
            await self._not_asked(request, exc)
            raise
        try:
            return await self._wait_for(request, decision, max_wait, progress, elsewhere, deadline)
        finally:
            self._claimed.discard(decision.id)

    async def _wait_for(
        self,
        request: ToolRequest,
        decision: Decision,
        max_wait: float,
        progress: Progress | None,
        elsewhere: Callable[[], Awaitable[str]] | None,
        deadline: float | None,
    ) -> Outcome:
        store = self._decisions.store
        max_wait = _until(deadline, max_wait)
        waiting = asyncio.create_task(
            self._decisions.wait(
                decision.id, max_wait=max_wait, progress=progress, progress_every=20.0
            )
        )
        try:
            if elsewhere is not None:
                decision = await self._race(decision, waiting, elsewhere)
            if not decision.is_final and not waiting.done():
                decision = await waiting
            elif waiting.done() and not waiting.cancelled():
                decision = waiting.result()
        finally:
            if not waiting.done():
                await cancel_and_wait(waiting, within=5)
        if decision.status == "cancelled":
            return outcome_of(decision)
        if not decision.is_final:
            decision = await self.give_up(decision)
        if decision.is_final:
            decision = await self._decisions.mark_delivered(decision)
            if decision.status == "answered" and decision.answer == "allow":
                decision = await off_loop(record_handed, store, decision.id, request)
        return outcome_of(decision)

    async def _race(
        self,
        decision: Decision,
        waiting: asyncio.Task[Decision],
        elsewhere: Callable[[], Awaitable[str]],
    ) -> Decision:
        """Wait for the owner or for ``elsewhere``; the approval as it stands afterwards."""
        other = asyncio.create_task(_awaited(elsewhere))
        try:
            await asyncio.wait({waiting, other}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            await cancel_and_wait(other, within=5)
        if waiting.done() or other.cancelled() or other.exception() is not None:
            return decision
        await cancel_and_wait(waiting, within=5)
        return await self.answered_elsewhere(decision.id, other.result())

    async def ask(
        self,
        request: ToolRequest,
        *,
        max_wait: float,
        label: str,
        extra: Mapping[str, Any] | None = None,
    ) -> Decision:
        """Post the approval (or find the same request pending) and return it."""
        settings = self._settings
        action = await off_loop(describe, request)
        thread_id, channel_id, guild_id = "", settings.channel_id, ""
        asked_in = settings.thread_id or await off_loop(
            session_thread, self._decisions.store, request, settings.owns
        )
        if asked_in:
            poster = self._decisions.poster
            thread_id, parent_id, guild_id = await poster.existing_thread(asked_in)
            channel_id = parent_id or thread_id
        approval = {
            **request.to_json(),
            "action": dataclasses.asdict(action),
            "wait_seconds": max_wait,
            "resume": self._resume,
            **(extra or {}),
        }
        # The owner's language, as far as an approval shows it: the agent's own reason.
        language = i18n.choose(settings.language, action.reason or "")
        draft = Decision(
            id=new_decision_id(),
            project=settings.project_name,
            session=label,
            question=cards.summary(approval["action"], request.tool_name, language),
            context=None,
            options=cards.OPTIONS,
            channel_id=channel_id,
            thread_id=thread_id,
            card_message_id="",
            thread_url=self._decisions.poster.thread_url(guild_id, thread_id) if thread_id else "",
            asked_at=utc_now(),
            mention=True,  # the agent is blocked on this: the owner's phone buzzes
            reaction_emojis=cards.REACTIONS,
            owner_ids=tuple(sorted(settings.owner_ids)),
            asker_lease=self._lease,
            kind="approval",
            approval=approval,
            language=language,
            project_key=settings.project_key,
            machine=settings.machine,
        )
        fingerprint = request.fingerprint()
        store = self._decisions.store

        def reusable(pending: Decision) -> bool:
            """The same request of the same session, in the same thread, asked again while
            no other call waits on it (its Allow would answer that call too)."""
            stored = pending.approval or {}
            if (
                pending.kind != "approval"
                or stored.get("fingerprint") != fingerprint
                or not settings.owns(pending)
                or (thread_id and pending.thread_id != thread_id)
            ):
                return False
            if request.tool_use_id and stored.get("tool_use_id") == request.tool_use_id:
                return True  # the same call, asking again
            if pending.id in self._claimed or store.waited_on(pending.id):
                return False
            asker = pending.asker_lease
            if asker == self._lease or not lease_alive(store.home, asker):
                self._claimed.add(pending.id)  # under the store's lock: one call takes it
                return True
            return False

        self._claimed.add(draft.id)
        existing: Decision | None = None
        try:
            existing = await store.acreate_unless_pending(
                draft, reusable, max_bytes=FILE_LIMIT, containing=fingerprint.encode()
            )
            if existing is not None:
                self._claimed.discard(draft.id)  # not made: the call took ``existing`` over
            return await self._asked_on(draft, existing, max_wait)
        except BaseException:
            # Not asked: the call is blocked (decide says so), its approval free for the next.
            self._claimed.discard(draft.id if existing is None else existing.id)
            raise

    async def _asked_on(
        self, draft: Decision, existing: Decision | None, max_wait: float
    ) -> Decision:
        """The approval a call waits on: its new card, or the one it took over."""
        if existing is None:
            return await self._decisions.poster.post(draft, fresh=True)
        if not existing.card_message_id:
            return await self._decisions.poster.post(existing, fresh=False)
        if existing.gave_up_at:  # asked again: waiting again
            existing = await self._show_pending(existing, gave_up_at=None, wait_seconds=max_wait)
        if self._lease and existing.asker_lease != self._lease:
            existing, _ = await self._decisions.store.aupdate(
                existing.id,
                lambda current: (
                    current.replace(asker_lease=self._lease) if not current.is_final else None
                ),
            )
        return existing

    async def _not_asked(self, request: ToolRequest, exc: BaseException) -> None:
        """Note a call blocked before its card existed (:mod:`.unasked`); never raises."""
        thread_id = self._settings.thread_id
        if not thread_id:
            return
        given = request.tool_input
        detail = given.get("command") or given.get("file_path") or given.get("path") or ""
        try:
            await off_loop(
                unasked.record,
                self._settings.home,
                thread_id,
                request.tool_name,
                str(detail),
                exc,
            )
        except (Exception, asyncio.CancelledError):  # the ask's own error is what counts
            log.warning("could not note the call %s not run", request.tool_name)

    async def give_up(self, decision: Decision) -> Decision:
        """Stop waiting: the approval stays open, the card says no one answered in time."""
        stored = await self._show_pending(decision, gave_up_at=utc_now())
        log.info("approval %s: no answer within %s", stored.id, cards.wait_words(stored))
        return stored

    async def _show_pending(self, decision: Decision, **changes: object) -> Decision:
        def change(current: Decision) -> Decision | None:
            if current.is_final:
                return None
            approval = dict(current.approval or {})
            if "wait_seconds" in changes:
                approval["wait_seconds"] = changes["wait_seconds"]
            return current.replace(
                gave_up_at=changes.get("gave_up_at", current.gave_up_at), approval=approval
            )

        stored, written = await self._decisions.store.aupdate(decision.id, change)
        if not written or not stored.card_message_id:
            return stored
        owners = stored.owner_ids or tuple(sorted(self._settings.owner_ids))
        try:
            await self._rest.edit_message(
                stored.thread_id,
                stored.card_message_id,
                content=kinds.render_card(stored, owners, buttons=stored.card_buttons),
                components=kinds.components(stored) if stored.card_buttons else None,
                allowed_mentions={"parse": []},
            )
        except Unauthorized:
            raise
        except (DiscordError, NotFound) as exc:
            log.warning("could not update the card of approval %s: %s", stored.id, exc)
        return stored

    async def answered_elsewhere(self, decision_id: str, where: str) -> Decision:
        """The CLI decided without us (the person answered at the terminal): close the card."""
        return await self._decisions.cancel(decision_id, where)


def outcome_of(decision: Decision) -> Outcome:
    """What the asking CLI is told for an approval as it stands."""
    if decision.status == "answered" and decision.answer == "allow":
        return Outcome("allow", "", "owner", decision)
    if decision.status == "answered":
        message = "The owner denied this tool call in Discord"
        message += f", saying: {decision.note}" if decision.note else "."
        message += " Do not retry it as it is; take another approach or ask the owner."
        return Outcome("deny", message, "owner", decision)
    if decision.status == "cancelled":
        return Outcome("deny", decision.cancel_reason or "withdrawn", "elsewhere", decision)
    return Outcome("deny", timeout_message(decision), "timeout", decision)


def timeout_message(decision: Decision) -> str:
    """The reason given when no one answered: never a refusal."""
    approval = decision.approval or {}
    later = (
        "if the owner allows it later, this session is resumed with a message saying so"
        if approval.get("resume")
        else "if the owner allows it later, the same call will run without asking when you retry it"
    )
    return (
        f"No one answered this approval request in Discord within {cards.wait_words(decision)}, "
        f"so the tool was not run. This is not a refusal: the request stays open ({later}). "
        "Carry on with work that does not need it, or stop and say what waits for approval."
    )


def _until(deadline: float | None, wait: float) -> float:
    """``wait``, cut to what is left before ``deadline``."""
    return wait if deadline is None else max(0.0, min(wait, deadline - time.monotonic()))


async def _awaited(make: Callable[[], Awaitable[str]]) -> str:
    return await make()
