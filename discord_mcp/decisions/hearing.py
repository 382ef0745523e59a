"""Hearing a decision's answers: looking at its thread (a poll), live gateway events (replies,
reactions), and buttons for cards posted before a gateway was up.

One lock per decision serializes the looks of this process, so a reply seen by a poll and by a
live event at once is judged once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from discord_mcp.decisions.listening import Listening
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.posting import Poster
from discord_mcp.decisions.reading import ThreadReader
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DiscordError, StateError, Unauthorized

log = logging.getLogger(__name__)


class Hearing:
    """Polls and live events for one process's decisions.

    Args:
        store: the decision files.
        reader: judges what a thread holds.
        poster: posts cards and adds their buttons.
        listening: which decisions' live events this process takes.
        live: whether a gateway session is live on this machine.
        show_final: shows a decision's outcome on its card.
    """

    def __init__(
        self,
        *,
        store: DecisionStore,
        reader: ThreadReader,
        poster: Poster,
        listening: Listening,
        live: Callable[[], bool],
        show_final: Callable[[Decision], Awaitable[None]],
    ) -> None:
        self._store = store
        self._reader = reader
        self._poster = poster
        self._listening = listening
        self._live = live
        self._show_final = show_final
        self._poll_locks: dict[str, asyncio.Lock] = {}

    async def poll(self, decision: Decision) -> Decision:
        """Look at the thread once (new replies, reactions on the card) and act on them.

        Errors talking to Discord are logged and the decision returned unchanged, except a
        wrong token, which stops everything.
        """
        lock = self._poll_locks.setdefault(decision.id, asyncio.Lock())
        async with lock:
            try:
                return await self._reader.read(self._store.load(decision.id))
            except Unauthorized:
                raise
            except (DiscordError, StateError) as exc:
                log.warning("polling decision %s failed: %s", decision.id, exc)
                return self._store.load(decision.id)

    async def upgrade_if_live(self, decision: Decision) -> Decision:
        """Buttons for a card posted before the gateway was up (a failure is retried later)."""
        if not decision.card_message_id or not self._live():
            return decision
        try:
            stored = await self._poster.upgrade(decision)
        except Unauthorized:
            raise
        except DiscordError as exc:
            log.warning("could not add buttons to decision %s: %s", decision.id, exc)
            return decision
        if stored.is_final:  # answered meanwhile: the outcome must win over the question
            await self._show_final(stored)
        return stored

    async def upgrade_cards(self) -> None:
        """Buttons for every pending card of this state directory that lacks them (the gateway
        holder calls it; no-op without a live gateway)."""
        if not self._live():
            return
        for decision in await self._store.aopen_decisions():
            if decision.status == "pending" and not decision.card_buttons:
                await self.upgrade_if_live(decision)

    # ---- live events (from the gateway, directly or through the spool) ----------------------

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        """A live gateway event: replies and reactions for the decisions this process watches."""
        if name == "MESSAGE_CREATE":
            thread_id = str(data.get("channel_id") or "")
            for decision in await self._listening.matching(thread_id=thread_id):
                await self._locked_judge_message(decision, data)
        elif name == "MESSAGE_REACTION_ADD":
            message_id = str(data.get("message_id") or "")
            for decision in await self._listening.matching(card_id=message_id):
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
                        await self._reader.judge_reaction(current, user_id, name_, emoji)

    async def _locked_judge_message(self, decision: Decision, message: dict[str, Any]) -> None:
        async with self._poll_locks.setdefault(decision.id, asyncio.Lock()):
            try:
                current = self._store.load(decision.id)
                await self._reader.judge_message(current, message, advance=False)
            except Unauthorized:
                raise
            except DiscordError as exc:
                log.warning("live answer for %s failed: %s", decision.id, exc)
