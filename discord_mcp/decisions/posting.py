"""Putting a question in Discord: its thread and its card, once, whatever crashes in between.

Asking is three steps, each recorded before the next, so a crash between any two leaves a
decision that recovery finishes instead of one that nobody can answer:

1. the decision file, as a draft (no thread yet when a new thread is wanted). A full disk fails
   here, before anything reaches Discord: no empty thread is left behind;
2. the thread (unless the question goes to an existing thread), recorded on the decision;
3. the card, recorded on the decision.

Whoever posts holds the decision's ``.post`` claim (:meth:`DecisionStore.try_posting`), which
nobody waits for: another process finding a decision without a card while the claim is free
knows its poster died, and finishes the job. Before posting a card again it looks for one in
the thread by the decision id printed on every card, so a card whose id was never recorded is
adopted, not duplicated.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import urlsplit

from discord_mcp.config import Settings
from discord_mcp.decisions import kinds
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DecisionError, DiscordError, NotFound, OutOfScope, StateError
from discord_mcp.outbound.scope import refusal
from discord_mcp.tasks import Background
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)

THREAD_AUTO_ARCHIVE_MIN = 1440
"""A question's thread leaves the list after a day without activity, and is archived as soon as
its question is done (:mod:`~discord_mcp.decisions.threads`): Discord allows 1000 active threads
per server. An answer may still come later: writing in an archived thread reopens it."""
THREAD_TYPES = frozenset({10, 11, 12})
"""Announcement, public and private threads: where a question may be asked."""


def web_base(api_base: str) -> str:
    """Where people open links: discord.com for Discord, the emulator's own page otherwise."""
    parts = urlsplit(api_base)
    host = parts.hostname or ""
    if host == "discord.com" or host.endswith(".discord.com"):
        return "https://discord.com"
    return f"{parts.scheme}://{parts.netloc}"


def card_marker(decision_id: str) -> str:
    """The text every card of ``decision_id`` carries (how a lost card is found again)."""
    return f"decision `{decision_id}`"


class Poster:
    """Posts decisions' threads and cards for one process.

    Args:
        live: whether a gateway session is live (cards get buttons).
        before_card: told of a decision whose card is about to be posted (its thread is
            known): a server asks for the thread's live events then, so no answer to the card
            can come before it listens.
        not_posted: told of a decision whose post failed after ``before_card``.
    """

    def __init__(
        self,
        *,
        settings: Settings,
        rest: RestClient,
        store: DecisionStore,
        background: Background,
        live: Callable[[], bool],
        before_card: Callable[[Decision], None] | None = None,
        not_posted: Callable[[str], None] | None = None,
    ) -> None:
        self._before_card = before_card
        self._not_posted = not_posted
        self._settings = settings
        self._rest = rest
        self._store = store
        self._background = background
        self._live = live

    async def existing_thread(self, thread_id: str) -> tuple[str, str, str]:
        """``(thread_id, parent channel id, guild id)`` of a thread an agent asked to use.

        Raises:
            DecisionError: it is not a thread (the main channel's chatter is not an answer).
            OutOfScope: it is not a thread of the project's channel, or it is the machines'
                presence thread (:mod:`discord_mcp.outbound.scope`).
        """
        try:
            thread = await self._rest.get_channel(thread_id)
        except NotFound:
            raise DecisionError(
                f"thread_id {thread_id} does not exist (or the bot cannot see it); omit "
                "thread_id to open a new thread"
            ) from None
        reason = refusal(self._settings, thread)
        if reason is not None:
            raise OutOfScope(reason)
        if thread.get("type") not in THREAD_TYPES:
            raise DecisionError(
                f"thread_id {thread_id} is a channel, not a thread: questions are asked in a "
                "thread of their own. Omit thread_id to open a new thread"
            )
        return thread["id"], str(thread.get("parent_id") or ""), str(thread.get("guild_id") or "")

    def thread_url(self, guild_id: str, thread_id: str) -> str:
        return f"{web_base(self._settings.api_base)}/channels/{guild_id or '@me'}/{thread_id}"

    async def post(self, decision: Decision, *, fresh: bool) -> Decision:
        """Create the thread (if needed) and the card of ``decision``; returns it as stored.

        ``fresh``: the decision was just created by this call (a failure withdraws the draft
        and raises). Otherwise this is recovery: the card is looked for before it is posted,
        and a failure leaves the decision for the next attempt.

        Returns the decision unchanged when another process holds the posting claim.
        """
        claim = self._store.try_posting(decision.id)
        if claim is None:
            return decision
        try:
            current = self._store.load(decision.id)
            if current.card_message_id or current.is_final:
                return current
            try:
                return await self._post(current, fresh=fresh)
            except (DiscordError, StateError):
                if self._not_posted is not None:
                    self._not_posted(current.id)
                if fresh:
                    await self._withdraw_draft(current.id)
                raise
        finally:
            claim.release()

    async def _post(self, decision: Decision, *, fresh: bool) -> Decision:
        adoptable = not fresh and bool(decision.thread_id)  # a card only in an older thread
        if not decision.thread_id:
            decision = await self._open_thread(decision)
        if self._before_card is not None:
            self._before_card(decision)
        if adoptable and (adopted := await self._adopt(decision)) is not None:
            return adopted
        return await self._post_card(decision)

    async def _post_card(self, decision: Decision) -> Decision:
        live = self._live()
        owners = decision.owner_ids or tuple(sorted(self._settings.owner_ids))
        card = await self._rest.create_message(
            decision.thread_id,
            kinds.render_card(decision, owners, buttons=live),
            components=kinds.components(decision) if live else None,
            allowed_mentions={"users": list(owners)} if decision.mention else {"parse": []},
        )
        stored, _ = await self._store.aupdate(
            decision.id,
            lambda current: current.replace(
                card_message_id=card["id"], seen_message_id=card["id"], card_buttons=live
            ),
        )
        log.info("asked decision %s in thread %s", stored.id, stored.thread_id)
        self.add_reactions_soon(stored)
        return stored

    def add_reactions_soon(self, decision: Decision) -> None:
        """Put the card's answer reactions on it, in the background (each one once)."""
        if decision.reaction_emojis and decision.card_message_id:
            self._background.spawn(self._add_reactions(decision), f"reactions-{decision.id}")

    async def _open_thread(self, decision: Decision) -> Decision:
        name = f"{decision.project} · {decision.session} · {decision.question}"
        thread = await self._rest.create_thread(
            self._settings.channel_id, name, auto_archive_duration=THREAD_AUTO_ARCHIVE_MIN
        )
        url = self.thread_url(str(thread.get("guild_id") or ""), thread["id"])
        try:
            stored, _ = await self._store.aupdate(
                decision.id,
                lambda current: current.replace(
                    thread_id=thread["id"], thread_url=url, own_thread=True
                ),
            )
        except StateError:
            await self._abandon_thread(thread["id"])
            raise
        return stored

    async def _abandon_thread(self, thread_id: str) -> None:
        """A thread whose decision could not be recorded: say so, and archive it."""
        try:
            await self._rest.create_message(
                thread_id,
                "This question could not be recorded (the agent's state directory failed), so "
                "it cannot be answered here. The agent was told.",
                allowed_mentions={"parse": []},
            )
            await self._rest.archive_thread(thread_id)
        except DiscordError as exc:
            log.warning("could not close the abandoned thread %s: %s", thread_id, exc)

    async def _adopt(self, decision: Decision) -> Decision | None:
        """The card of a decision whose poster died after posting it, if it is in the thread."""
        marker = card_marker(decision.id)
        page = await self._rest.list_messages(decision.thread_id, limit=100)
        found = [m for m in page if m["author"].get("bot") and marker in m["content"]]
        if not found:
            return None
        card = min(found, key=lambda m: int(m["id"]))
        buttons = bool(card.get("components"))

        def adopt(current: Decision) -> Decision | None:
            if current.card_message_id:
                return None
            return current.replace(
                card_message_id=card["id"], seen_message_id=card["id"], card_buttons=buttons
            )

        stored, _ = await self._store.aupdate(decision.id, adopt)
        log.info("adopted the card of decision %s", stored.id)
        return stored

    async def _withdraw_draft(self, decision_id: str) -> None:
        try:
            await self._store.adiscard(decision_id)
        except StateError as exc:
            log.error("could not remove the draft of decision %s: %s", decision_id, exc)

    async def _add_reactions(self, decision: Decision) -> None:
        for emoji in decision.reaction_emojis:
            if self._store.load(decision.id).is_final:
                return
            await self._rest.add_reaction(decision.thread_id, decision.card_message_id, emoji)

    async def upgrade(self, decision: Decision) -> Decision:
        """Give a card posted without buttons its buttons, now that a gateway is live."""
        if decision.card_buttons or not decision.card_message_id or decision.is_final:
            return decision
        owners = decision.owner_ids or tuple(sorted(self._settings.owner_ids))
        await self._rest.edit_message(
            decision.thread_id,
            decision.card_message_id,
            content=kinds.render_card(decision, owners, buttons=True),
            components=kinds.components(decision),
            allowed_mentions={"parse": []},
        )

        def record(current: Decision) -> Decision | None:
            return None if current.card_buttons else current.replace(card_buttons=True)

        stored, _ = await self._store.aupdate(decision.id, record)
        log.info("gave the card of decision %s its buttons", decision.id)
        return stored
