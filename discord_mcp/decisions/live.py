"""Live events for decisions: what a process does with the gateway's events and clicks.

With several machines on one bot every machine's gateway receives every click
(:mod:`discord_mcp.team`): a card's ``custom_id`` names the machine that asked, and only that
machine answers. A card from before machines had names is answered where its decision file is;
a machine that does not have it waits for its turn (``unheld``: the watch daemon's team gives
each machine its own; the last one otherwise) and says it does not know the card only when
nobody answered meanwhile. A process that is not ``discord-watch`` holding the gateway says
commands go to ``discord-watch`` the same way, at the last turn.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from discord_mcp import i18n
from discord_mcp.decisions import kinds
from discord_mcp.decisions.clicks import already
from discord_mcp.decisions.interactive import UPDATE_MESSAGE, ephemeral, parse_custom_id
from discord_mcp.decisions.service import DecisionService
from discord_mcp.errors import DecisionError, DiscordError, StateError
from discord_mcp.team.deadline import created_on
from discord_mcp.team.probe import my_turn_came
from discord_mcp.team.routing import LAST_SLOT, NOW, Turn
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)

APPLICATION_COMMAND, AUTOCOMPLETE = 2, 4
NO_WATCH = (
    "Commands are answered by `discord-watch`, and it does not hold this machine's Discord "
    "connection right now. Start it on that machine (`discord-watch run`, or `discord-watch` "
    "alone), or if it is starting, try again "
    "in a few seconds. Text commands (`!status`, `!start ...`) wait for it instead."
)


class DecisionEvents:
    """A :class:`~discord_mcp.relay.link.LiveHandler` for decisions.

    Replies and reactions go to the decision service; a click on a decision card is answered
    here, with the callback Discord requires within 3 seconds.
    """

    def __init__(
        self,
        service: DecisionService,
        rest: RestClient,
        *,
        unheld: Callable[[], Turn] | None = None,
    ) -> None:
        self._service = service
        self._rest = rest
        self._unheld = unheld

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        await self._service.on_event(name, data)

    async def on_interaction(self, data: dict[str, Any]) -> None:
        loop = asyncio.get_running_loop()
        created = created_on(data, now=loop.time(), wall_now=time.time())
        if data.get("type") == AUTOCOMPLETE:
            return  # discord-watch's, wherever it runs (and it cannot be probed)
        if data.get("type") == APPLICATION_COMMAND:
            if await self._last_turn(data, created):
                await self._no_commands_here(data)
            return
        click = parse_custom_id(str((data.get("data") or {}).get("custom_id") or ""))
        if click is None:
            return  # not a decision card's component
        if click.decision_id.startswith("run_"):
            # A run's changes card (issue 35): discord-watch answers it; when it does not hold
            # the gateway here, say so rather than leave the owner without an answer.
            mine = click.machine in (None, self._service.machine)
            if mine and await self._last_turn(data, created):
                await self._no_commands_here(data)
            return
        here = self._service.store.path(click.decision_id).exists()
        if click.machine is not None and click.machine != self._service.machine and not here:
            return  # another machine's card: it answers
        # A card from before machines had names, not asked here (perhaps another machine's),
        # or asked here under another name (a process of this machine configured otherwise):
        # answered at this machine's turn, only when nobody answered meanwhile.
        doubtful = (click.machine is None and not here) or (
            click.machine is not None and click.machine != self._service.machine
        )
        if doubtful and not await self._turn(data, created):
            return
        body = await answer_click(self._service, data)
        if body is None:
            return
        # An UPDATE_MESSAGE (7) answer is the card showing the outcome of a resolving click.
        resolved = body["type"] == UPDATE_MESSAGE and parse_custom_id(
            str((data.get("data") or {}).get("custom_id") or "")
        )
        try:
            await self._rest.create_interaction_response(
                str(data["id"]), str(data["token"]), int(body["type"]), body.get("data")
            )
        except DiscordError as exc:
            log.warning("answering a click failed: %s", exc)
            if resolved:  # the card was not updated by the response: edit it instead
                await self._service.show_final(self._service.store.load(resolved.decision_id))
            return
        if resolved:
            await self._service.record_final_shown(resolved.decision_id)

    async def _last_turn(self, data: dict[str, Any], created: float) -> bool:
        """Wait for the last turn; whether nobody answered the interaction meanwhile."""
        return await my_turn_came(self._rest, data, Turn("probe", LAST_SLOT), created)

    async def _turn(self, data: dict[str, Any], created: float) -> bool:
        """For a card that may be another machine's: whether this machine answers it."""
        turn = self._unheld() if self._unheld is not None else Turn("probe", LAST_SLOT)
        if turn.act == "never":
            return False
        if turn == NOW:
            return True
        return await my_turn_came(self._rest, data, turn, created)

    async def _no_commands_here(self, data: dict[str, Any]) -> None:
        """A slash command reached a process that is not ``discord-watch`` (which answers them
        and, when it runs, holds the gateway), and no other machine's ``discord-watch`` answered
        it: say so within Discord's 3 s, privately, rather than leave the owner with "The
        application did not respond"."""
        try:
            await self._rest.create_interaction_response(
                str(data["id"]), str(data["token"]), 4, ephemeral(NO_WATCH)["data"]
            )
        except DiscordError as exc:
            log.warning("answering a command while discord-watch is away failed: %s", exc)


async def answer_click(service: DecisionService, data: dict[str, Any]) -> dict[str, Any] | None:
    """The callback body for a click on (or modal from) a decision card; None if not ours.

    Runs in the gateway holder, whoever asked: it must answer within Discord's 3 seconds.
    """
    click = parse_custom_id(str((data.get("data") or {}).get("custom_id") or ""))
    if click is None:
        return None
    member = data.get("member") if isinstance(data.get("member"), dict) else None
    user = (member or {}).get("user") or data.get("user") or {}
    user_id = str(user.get("id") or "")
    username = str(user.get("global_name") or user.get("username") or user_id)
    try:
        decision = service.store.load(click.decision_id)
    except (DecisionError, StateError):
        return ephemeral(i18n.text(_language(data), "live.unknown"))
    if decision.is_final:
        return ephemeral(already(decision))
    try:
        kind = kinds.of(decision)
    except StateError:
        return ephemeral(i18n.text(_language(data), "live.unknown"))
    return await kind.answer_click(service, decision, data, click.part, user_id, username)


def _language(interaction: dict[str, Any]) -> str:
    """The clicker's Discord app language (``ko``, ``zh-CN``...), for a decision unknown here."""
    language = str(interaction.get("locale") or "").split("-")[0].lower()
    return language if i18n.is_language(language) else i18n.FALLBACK
