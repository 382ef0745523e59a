"""Asking, waiting, cancelling: the decision lifecycle against Discord and the state directory.

Waiting is bounded. A waiting call returns when the decision is final or when its bound runs
out, and the decision stays pending in its file either way: a client timeout or a cancelled call
never reads as "no". While it waits it polls the thread over REST every poll interval, and it
watches the decision's file, so an answer found by another process (another agent's server, the
watch daemon, the gateway holder) ends the wait too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from discord_mcp.config import Settings
from discord_mcp.decisions import cards
from discord_mcp.decisions.answers import Verdict, judge_message, judge_reaction
from discord_mcp.decisions.interactive import (
    card_components,
)
from discord_mcp.decisions.model import Decision, new_decision_id, utc_now
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DecisionError, DiscordError, StateError, Unauthorized
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.wire import Message

log = logging.getLogger(__name__)

FILE_WATCH_INTERVAL_S = 0.05
"""How often a waiting call looks at its decision file for another process's answer."""
THREAD_AUTO_ARCHIVE_MIN = 10080
SAFETY_POLL_S = 30.0
CARD_GRACE_S = 60.0
"""How long a decision without a recorded card is given before it counts as never posted."""
"""With a live gateway, polling only catches what a holder handover might have missed."""
"""Decision threads stay listed for a week; an answer may take that long."""

Progress = Callable[[float, Decision], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Question:
    """What an agent asks (validated by :meth:`DecisionService.ask`)."""

    question: str
    context: str | None = None
    options: tuple[str, ...] = ()
    thread_id: str | None = None
    timeout_seconds: float | None = None
    on_timeout: str | None = None
    mention: bool = False
    session: str = "agent"


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
    ) -> None:
        self._settings = settings
        self._live = live
        self._watch_all = watch_all
        self._waiting: dict[str, int] = {}
        self._rest = rest
        self._store = store
        self._background = background
        self._clock = clock
        self._changed: dict[str, asyncio.Event] = {}
        self._poll_locks: dict[str, asyncio.Lock] = {}

    @property
    def store(self) -> DecisionStore:
        """The decision files this service works on."""
        return self._store

    # ---- asking -----------------------------------------------------------------------------

    async def ask(self, q: Question) -> tuple[Decision, bool]:
        """Post a question, or find the same question already pending.

        Returns the decision and whether it is new (False: an identical pending question of this
        project was found and is returned instead of a duplicate).

        Raises:
            DecisionError: the question or its options are not acceptable (the message says why).
            DiscordError: Discord refused the thread or the card.
        """
        q = _validated(q)
        for existing in self._store.all():
            if (
                existing.status == "pending"
                and existing.project == self._settings.project_name
                and _same_question(existing, q)
            ):
                return existing, False
        decision_id = new_decision_id()
        asked_in = q.thread_id or self._settings.thread_id
        if asked_in:
            thread = await self._rest.get_channel(asked_in)
            thread_id = thread["id"]
            channel_id = thread.get("parent_id") or thread_id
        else:
            name = f"{self._settings.project_name} · {q.session} · {q.question}"
            thread = await self._rest.create_thread(
                self._settings.channel_id, name, auto_archive_duration=THREAD_AUTO_ARCHIVE_MIN
            )
            thread_id, channel_id = thread["id"], self._settings.channel_id
        guild_id = thread.get("guild_id") or "@me"
        deadline = None
        if q.timeout_seconds is not None:
            deadline = (datetime.now(UTC) + timedelta(seconds=q.timeout_seconds)).isoformat(
                timespec="milliseconds"
            )
        draft = Decision(
            id=decision_id,
            project=self._settings.project_name,
            session=q.session,
            question=q.question,
            context=q.context,
            options=q.options,
            channel_id=channel_id,
            thread_id=thread_id,
            card_message_id="",
            thread_url=f"https://discord.com/channels/{guild_id}/{thread_id}",
            asked_at=utc_now(),
            deadline=deadline,
            on_timeout=q.on_timeout,
            mention=q.mention,
            reaction_emojis=cards.reaction_emojis(q.options),
        )
        owners = self._settings.owner_ids
        draft = draft.replace(owner_ids=tuple(sorted(owners)))
        # The file exists before the card, so a click on the card always finds its decision.
        self._store.create(draft)
        live = self._live()
        try:
            card = await self._rest.create_message(
                thread_id,
                cards.render_card(draft, owners, buttons=live),
                components=card_components(decision_id, draft.options) if live else None,
                allowed_mentions={"users": sorted(owners)} if q.mention else {"parse": []},
            )
        except BaseException:
            self._store.discard(decision_id)
            raise
        decision, _ = self._store.update(
            decision_id,
            lambda current: current.replace(card_message_id=card["id"], seen_message_id=card["id"]),
        )
        log.info("asked decision %s in thread %s", decision.id, thread_id)
        if decision.reaction_emojis:
            self._background.spawn(self._add_reactions(decision), f"reactions-{decision.id}")
        return decision, True

    async def _add_reactions(self, decision: Decision) -> None:
        for emoji in decision.reaction_emojis:
            if self._store.load(decision.id).is_final:
                return
            await self._rest.add_reaction(decision.thread_id, decision.card_message_id, emoji)

    # ---- waiting ----------------------------------------------------------------------------

    async def wait(
        self,
        decision_id: str,
        *,
        max_wait: float,
        progress: Progress | None = None,
        progress_every: float = 20.0,
    ) -> Decision:
        """Wait up to ``max_wait`` seconds for the decision to become final.

        Returns the decision: final, or still pending when the bound ran out. Cancelling the
        call (a client timeout, Esc) leaves the decision pending; nothing is lost.
        """
        self._waiting[decision_id] = self._waiting.get(decision_id, 0) + 1
        try:
            return await self._wait(decision_id, max_wait, progress, progress_every)
        finally:
            self._waiting[decision_id] -= 1
            if not self._waiting[decision_id]:
                del self._waiting[decision_id]

    def _poll_interval(self) -> float:
        if self._live():
            return max(self._settings.poll_interval, SAFETY_POLL_S)
        return self._settings.poll_interval

    async def _wait(
        self, decision_id: str, max_wait: float, progress: Progress | None, progress_every: float
    ) -> Decision:
        start = self._clock()
        next_poll = start
        next_progress = start + progress_every
        stamp = self._store.stamp(decision_id)
        while True:
            decision = self._store.load(decision_id)
            if decision.is_final:
                return decision
            if decision.deadline_passed(datetime.now(UTC)):
                return await self.expire(decision)
            now = self._clock()
            if now >= next_poll:
                decision = await self.poll(decision)
                if decision.is_final:
                    return decision
                next_poll = self._clock() + self._poll_interval()
            now = self._clock()
            if now - start >= max_wait:
                return decision
            if progress is not None and now >= next_progress:
                await progress(now - start, decision)
                next_progress = now + progress_every
            wake = min(next_poll, start + max_wait, next_progress if progress else next_poll)
            if decision.deadline:
                left = (
                    datetime.fromisoformat(decision.deadline) - datetime.now(UTC)
                ).total_seconds()
                wake = min(wake, now + max(left, 0.0))
            stamp = await self._until_changed(decision_id, stamp, max(wake - now, 0.0))

    async def _until_changed(
        self, decision_id: str, stamp: tuple[int, int, int] | None, seconds: float
    ) -> tuple[int, int, int] | None:
        """Sleep up to ``seconds``, returning early when the decision's file changes."""
        event = self._changed.setdefault(decision_id, asyncio.Event())
        end = self._clock() + seconds
        while True:
            current = self._store.stamp(decision_id)
            if current != stamp:
                return current
            left = end - self._clock()
            if left <= 0:
                return current
            event.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(left, FILE_WATCH_INTERVAL_S)):
                    await event.wait()

    def notify_waiters(self, decision_id: str) -> None:
        """Wake this process's calls waiting on ``decision_id`` (it just changed)."""
        event = self._changed.get(decision_id)
        if event is not None:
            event.set()

    # ---- polling ----------------------------------------------------------------------------

    async def poll(self, decision: Decision) -> Decision:
        """Look at the thread once (new replies, reactions on the card) and act on them.

        Errors talking to Discord are logged and the decision returned unchanged, except a
        wrong token, which stops everything.
        """
        lock = self._poll_locks.setdefault(decision.id, asyncio.Lock())
        async with lock:
            try:
                return await self._poll(self._store.load(decision.id))
            except Unauthorized:
                raise
            except DiscordError as exc:
                log.warning("polling decision %s failed: %s", decision.id, exc)
                return self._store.load(decision.id)

    async def _adopt_card(self, decision: Decision) -> Decision:
        """A decision whose process died between posting its card and recording the card's id:
        find the card in the thread by the decision id printed on it. If it never got there,
        nobody could answer: withdraw it, saying why (never read as an answer)."""
        marker = f"decision `{decision.id}`"
        page = await self._rest.list_messages(decision.thread_id, limit=100)
        cards_found = [m for m in page if m["author"].get("bot") and marker in m["content"]]
        if cards_found:
            card_id = min(cards_found, key=lambda m: int(m["id"]))["id"]

            def adopt(current: Decision) -> Decision | None:
                if current.card_message_id:
                    return None
                return current.replace(card_message_id=card_id, seen_message_id=card_id)

            stored, _ = self._store.update(decision.id, adopt)
            return stored
        asked = datetime.fromisoformat(decision.asked_at)
        if datetime.now(UTC) - asked < timedelta(seconds=CARD_GRACE_S):
            return decision  # still being posted by its process
        stored, won = self._store.finish(
            decision.id,
            status="cancelled",
            cancel_reason="the question never reached Discord (its process stopped first)",
            answered_at=utc_now(),
        )
        if won:
            self.notify_waiters(decision.id)
        return stored

    def owners(self, decision: Decision) -> frozenset[str]:
        """Who may answer ``decision``: the owners of the process that asked it."""
        return frozenset(decision.owner_ids) or self._settings.owner_ids

    async def _poll(self, decision: Decision) -> Decision:
        if decision.is_final:
            return decision
        if not decision.card_message_id:
            adopted = await self._adopt_card(decision)
            if adopted.is_final or not adopted.card_message_id:
                return adopted
            decision = adopted
        cursor = int(decision.seen_message_id or decision.card_message_id)
        # One request usually does: the newest page holds the replies after the cursor *and* the
        # card with its reactions, since decision threads are short. Only when more than a page
        # arrived since the cursor do we read forward from it and fetch the card separately.
        page = await self._rest.list_messages(decision.thread_id, limit=100)
        card = next((m for m in page if m["id"] == decision.card_message_id), None)
        if len(page) == 100 and all(int(m["id"]) > cursor for m in page):
            page = await self._rest.list_messages(decision.thread_id, after=str(cursor), limit=100)
            card = None
        messages = [m for m in page if int(m["id"]) > cursor]
        for message in sorted(messages, key=lambda m: int(m["id"])):
            decision = await self._judge_message(decision, dict(message), advance=True)
            if decision.is_final:
                return decision
        if decision.reaction_emojis:
            if card is None:
                card = await self._rest.get_message(decision.thread_id, decision.card_message_id)
            decision = await self._poll_reactions(decision, card)
        return decision

    async def _judge_message(
        self, decision: Decision, message: dict[str, Any], *, advance: bool
    ) -> Decision:
        """Judge one thread message once, whether it came by polling or live.

        ``advance``: polling reads in order, so it moves the cursor; a live event only marks
        the message as handled, so a message missed live is still found by the next poll.
        """
        message_id = str(message.get("id") or "0")
        if decision.handled(message_id):
            return decision
        verdict = judge_message(decision, message, self.owners(decision), None)
        return await self._apply(decision, verdict, message_id=message_id, advance=advance)

    async def _poll_reactions(self, decision: Decision, card: Message) -> Decision:
        for reaction in card.get("reactions", []):
            emoji = reaction.get("emoji", {}).get("name") or ""
            others = reaction.get("count", 0) - (1 if reaction.get("me") else 0)
            if emoji not in decision.reaction_emojis or others <= 0:
                continue
            users = await self._rest.list_reaction_users(
                decision.thread_id, decision.card_message_id, emoji
            )
            for user in users:
                if user.get("bot"):
                    continue
                name = str(user.get("global_name") or user.get("username") or user["id"])
                decision = await self._judge_reaction(decision, user["id"], name, emoji)
                if decision.is_final:
                    return decision
        return decision

    async def _judge_reaction(
        self, decision: Decision, user_id: str, username: str, emoji: str
    ) -> Decision:
        owners = self.owners(decision)
        if user_id not in owners and any(
            a.user_id == user_id and a.via == "reaction" for a in decision.refused
        ):
            return decision  # already recorded; polling sees the same reaction every time
        verdict = judge_reaction(decision, user_id, username, emoji, owners)
        return await self._apply(decision, verdict)

    async def _apply(
        self,
        decision: Decision,
        verdict: Verdict,
        *,
        message_id: str | None = None,
        advance: bool = True,
    ) -> Decision:
        """Store a verdict under the decision's lock, then do its Discord part.

        The store update is also the claim: a message another process (or an earlier poll)
        already judged is skipped, so no reply is posted twice and no answer applied twice.
        """
        changes = dict(verdict.changes)

        def change(current: Decision) -> Decision | None:
            if current.is_final:
                return None
            if message_id is not None:
                if current.handled(message_id):
                    return None
                if advance:
                    changes["seen_message_id"] = message_id
                    changes["handled_message_ids"] = tuple(
                        m for m in current.handled_message_ids if int(m) > int(message_id)
                    )
                else:
                    changes["handled_message_ids"] = (*current.handled_message_ids, message_id)
            return current.replace(**changes) if changes else None

        stored, written = self._store.update(decision.id, change)
        if not written:
            return stored
        if verdict.kind == "resolve":
            log.info("decision %s answered via %s", decision.id, stored.via)
            self.notify_waiters(decision.id)
            self._background.spawn(self._show_final(stored), f"final-{decision.id}")
        elif verdict.reply:
            await self._rest.create_message(
                stored.thread_id, verdict.reply, allowed_mentions={"parse": []}, reply_to=message_id
            )
        return stored

    # ---- live events (from the gateway, directly or through the spool) ----------------------

    def _watched(self) -> list[Decision]:
        if self._watch_all:
            return [d for d in self._store.all() if d.status == "pending"]
        found = []
        for decision_id in list(self._waiting):
            with contextlib.suppress(DecisionError, StateError):
                found.append(self._store.load(decision_id))
        return found

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        """A live gateway event: replies and reactions for the decisions this process watches."""
        if name == "MESSAGE_CREATE":
            thread_id = str(data.get("channel_id") or "")
            for decision in self._watched():
                if decision.thread_id == thread_id and decision.card_message_id:
                    await self._locked_judge_message(decision, data)
        elif name == "MESSAGE_REACTION_ADD":
            message_id = str(data.get("message_id") or "")
            for decision in self._watched():
                if decision.card_message_id == message_id:
                    member = data.get("member") if isinstance(data.get("member"), dict) else {}
                    user = (member or {}).get("user") or {}
                    if user.get("bot"):
                        continue
                    emoji = (data.get("emoji") or {}).get("name") or ""
                    user_id = str(data.get("user_id") or user.get("id") or "")
                    name_ = str(user.get("global_name") or user.get("username") or user_id)
                    async with self._poll_locks.setdefault(decision.id, asyncio.Lock()):
                        current = self._store.load(decision.id)
                        await self._judge_reaction(current, user_id, name_, emoji)

    async def _locked_judge_message(self, decision: Decision, message: dict[str, Any]) -> None:
        async with self._poll_locks.setdefault(decision.id, asyncio.Lock()):
            try:
                current = self._store.load(decision.id)
                await self._judge_message(current, message, advance=False)
            except Unauthorized:
                raise
            except DiscordError as exc:
                log.warning("live answer for %s failed: %s", decision.id, exc)

    async def _show_final(self, decision: Decision) -> None:
        await self._rest.edit_message(
            decision.thread_id,
            decision.card_message_id,
            content=cards.render_final(decision),
            components=[],
            allowed_mentions={"parse": []},
        )

    # ---- ending -----------------------------------------------------------------------------

    async def expire(self, decision: Decision) -> Decision:
        """The agent's own deadline passed: mark it expired and say so on the card."""
        stored, won = self._store.finish(decision.id, status="expired", answered_at=utc_now())
        if won:
            self.notify_waiters(decision.id)
            self._background.spawn(self._show_final(stored), f"final-{decision.id}")
        return stored

    async def cancel(self, decision_id: str, reason: str | None) -> Decision:
        """Withdraw a question; the card says so and waiting calls return ``cancelled``."""
        stored, won = self._store.finish(
            decision_id, status="cancelled", cancel_reason=reason, answered_at=utc_now()
        )
        if won:
            self.notify_waiters(decision_id)
            await self._show_final(stored)
        return stored

    def mark_delivered(self, decision: Decision) -> Decision:
        """Record that an agent received this final result."""
        if not decision.is_final or decision.delivered:
            return decision

        def change(current: Decision) -> Decision | None:
            return current.replace(delivered=True) if current.is_final else None

        stored, _ = self._store.update(decision.id, change)
        return stored

    async def recover(self, *, all_projects: bool = False) -> list[Decision]:
        """Look once at every open decision of this project (after a restart, or on request).

        Answers given while no server was running are found in the threads' history.
        ``all_projects``: every project's decisions (the watch daemon).
        """
        found: list[Decision] = []
        for decision in self._store.all():
            if decision.is_final:
                continue
            if not all_projects and decision.project != self._settings.project_name:
                continue
            if decision.deadline_passed(datetime.now(UTC)):
                found.append(await self.expire(decision))
            else:
                found.append(await self.poll(decision))
        return found


def _validated(q: Question) -> Question:
    question = q.question.strip()
    if not question:
        raise DecisionError("question is empty: say what you need the owner to decide")
    if len(question) > 1500:
        raise DecisionError("question is longer than 1500 characters: put details in context")
    options = tuple(" ".join(o.split()) for o in q.options)
    if len(options) > cards.MAX_OPTIONS:
        raise DecisionError(
            f"{len(options)} options given; at most {cards.MAX_OPTIONS} fit. Group them, or ask "
            "without options for a free-text answer"
        )
    if any(not o for o in options):
        raise DecisionError("an option is empty; give every option a short label")
    if any(len(o) > cards.MAX_OPTION_LENGTH for o in options):
        raise DecisionError(
            f"an option is longer than {cards.MAX_OPTION_LENGTH} characters; keep options short "
            "and put explanations in context"
        )
    if len({o.casefold() for o in options}) != len(options):
        raise DecisionError("two options are the same; make every option distinct")
    if q.timeout_seconds is not None and not (0 < q.timeout_seconds <= 30 * 86400):
        raise DecisionError("timeout_seconds must be positive and at most 30 days, or null")
    context = q.context.strip() if q.context else None
    return Question(
        question=question,
        context=context or None,
        options=options,
        thread_id=q.thread_id.strip() if q.thread_id else None,
        timeout_seconds=q.timeout_seconds,
        on_timeout=q.on_timeout.strip() if q.on_timeout else None,
        mention=q.mention,
        session=q.session,
    )


def _same_question(decision: Decision, q: Question) -> bool:
    return " ".join(decision.question.split()).casefold() == " ".join(
        q.question.split()
    ).casefold() and tuple(o.casefold() for o in decision.options) == tuple(
        o.casefold() for o in q.options
    )
