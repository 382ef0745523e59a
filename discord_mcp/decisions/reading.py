"""Reading a decision's thread: replies and reactions judged once, whichever way they arrive.

The same judgement (each card's kind, :mod:`~discord_mcp.decisions.kinds`) serves REST polling
and live gateway events; a message that another card of the thread may be meant for is judged
against all of them (:mod:`~discord_mcp.decisions.routing`). Storing a verdict is also its
claim: a message another process (or an earlier poll) already judged is skipped, so no reply is
posted twice and no answer applied twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from discord_mcp.config import Settings
from discord_mcp.decisions import kinds
from discord_mcp.decisions.answers import IGNORE, Verdict
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.posting import Poster
from discord_mcp.decisions.routing import reference, route
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.wire import Message

log = logging.getLogger(__name__)


class ThreadReader:
    """Judges what happens in decision threads, for one process.

    Args:
        resolved: called with a decision this reader just resolved (wake the waiters, show the
            outcome on the card).
    """

    def __init__(
        self,
        *,
        settings: Settings,
        rest: RestClient,
        store: DecisionStore,
        poster: Poster,
        resolved: Callable[[Decision], None],
    ) -> None:
        self._settings = settings
        self._rest = rest
        self._store = store
        self._poster = poster
        self._resolved = resolved

    def owners(self, decision: Decision) -> frozenset[str]:
        """Who may answer ``decision``: the owners of the process that asked it."""
        return frozenset(decision.owner_ids) or self._settings.owner_ids

    async def read(self, decision: Decision) -> Decision:
        """Look at the thread once: new replies after the cursor, then reactions on the card."""
        if decision.is_final:
            return decision
        if not decision.card_message_id:
            # Its poster died before the card was recorded: adopt the card or post it.
            decision = await self._poster.post(decision, fresh=False)
            if decision.is_final or not decision.card_message_id:
                return decision
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
            decision = await self.judge_message(decision, dict(message), advance=True)
            if decision.is_final:
                return decision
        if decision.reaction_emojis:
            if card is None:
                card = await self._rest.get_message(decision.thread_id, decision.card_message_id)
            decision = await self._poll_reactions(decision, card)
        return decision

    async def judge_message(
        self, decision: Decision, message: dict[str, Any], *, advance: bool
    ) -> Decision:
        """Judge one thread message once, whether it came by polling or live.

        ``advance``: polling reads in order, so it moves the cursor; a live event only marks
        the message as handled, so a message missed live is still found by the next poll.
        """
        message_id = str(message.get("id") or "0")
        if decision.handled(message_id):
            return decision
        alone = kinds.judge_message(decision, message, self.owners(decision))
        if alone.kind == "ignore" and not reference(message):
            return await self._apply(decision, alone, message_id=message_id, advance=advance)
        # It may be for another card of the thread: judge it against all of them, and apply
        # every card's verdict (each once, by whichever process comes first).
        others = await self._store.ain_thread(decision.thread_id)
        cards = [d for d in others if d.id != decision.id] + [decision]
        verdicts = route(message, cards, self.owners)
        for other in cards[:-1]:
            if other.id in verdicts and verdicts[other.id].kind != "ignore":
                await self._apply(other, verdicts[other.id], message_id=message_id, advance=False)
        verdict = verdicts.get(decision.id, IGNORE)
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
                decision = await self.judge_reaction(decision, user["id"], name, emoji)
                if decision.is_final:
                    return decision
        return decision

    async def judge_reaction(
        self, decision: Decision, user_id: str, username: str, emoji: str
    ) -> Decision:
        """Judge a reaction on the card (a stranger's is recorded once)."""
        owners = self.owners(decision)
        if user_id not in owners and any(
            a.user_id == user_id and a.via == "reaction" for a in decision.refused
        ):
            return decision  # already recorded; polling sees the same reaction every time
        verdict = kinds.judge_reaction(decision, user_id, username, emoji, owners)
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

        stored, written = await self._store.aupdate(decision.id, change)
        if not written:
            return stored
        if verdict.kind == "resolve":
            log.info("decision %s answered via %s", decision.id, stored.via)
            self._resolved(stored)
        elif verdict.reply:
            await self._rest.create_message(
                stored.thread_id, verdict.reply, allowed_mentions={"parse": []}, reply_to=message_id
            )
        return stored
