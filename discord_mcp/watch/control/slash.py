"""Slash commands through the gateway: INTERACTION_CREATE type 2 runs a command, type 4 asks
for autocomplete (decision cards' clicks are the decisions' own, see ``decisions/live.py``).

Theory (Discord's interactions/receiving-and-responding). An interaction must be answered
within 3 seconds, once. A command gets :data:`DEFER_AFTER_S` to finish: if it does, its reply is
the answer (type 4); if not, the answer is "thinking..." (type 5) and the reply replaces it
when ready (the original response is edited; longer text continues in follow-ups). Replies are
ephemeral: only the owner who typed the command sees them. Autocomplete answers at once
(type 8) from what the daemon has in memory. Each interaction is served in its own task, so
the gateway's reading loop never waits for a command.

With other machines sharing the bot (:mod:`discord_mcp.team`), each command is first asked
whose it is: this machine answers it at once (deferring before the team's cutoff rather than
at :data:`DEFER_AFTER_S`), at its later turn when nobody did, or not at all.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from discord_mcp.errors import DiscordError
from discord_mcp.team.desk import TeamDesk
from discord_mcp.team.routing import Turn
from discord_mcp.transport.chunking import split_message
from discord_mcp.watch.control.base import Reply, Request
from discord_mcp.watch.control.dispatch import Dispatcher, error_text, user_name
from discord_mcp.watch.control.suggest import suggestions

log = logging.getLogger(__name__)

APPLICATION_COMMAND, AUTOCOMPLETE = 2, 4
SUB_COMMAND, SUB_COMMAND_GROUP = 1, 2
DEFER_AFTER_S = 1.5
"""How long a command may run before the answer becomes "thinking..." (Discord allows 3 s)."""
COMMAND_LIMIT_S = 14 * 60.0
"""The interaction token lives 15 minutes: a reply after that could not be shown."""


def parse(data: dict[str, Any]) -> tuple[Request, str | None, str]:
    """The request, the focused option's name (autocomplete) and its typed value."""
    body = data.get("data") or {}
    path = [str(body.get("name") or "")]
    options = body.get("options") or []
    while options and options[0].get("type") in (SUB_COMMAND, SUB_COMMAND_GROUP):
        path.append(str(options[0].get("name") or ""))
        options = options[0].get("options") or []
    values: dict[str, str] = {}
    focused, typed = None, ""
    for option in options:
        value = option.get("value")
        values[str(option.get("name"))] = "" if value is None else str(value)
        if option.get("focused"):
            focused, typed = str(option.get("name")), values[str(option.get("name"))]
    member = data.get("member") if isinstance(data.get("member"), dict) else None
    user = (member or {}).get("user") or data.get("user") or {}
    request = Request(
        command=" ".join(path),
        options=values,
        user_id=str(user.get("id") or ""),
        user_name=user_name(user),
        channel_id=str(data.get("channel_id") or ""),
        via="slash",
    )
    return request, focused, typed


class SlashCommands:
    """Serves the application command and autocomplete interactions."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        *,
        defer_after: float = DEFER_AFTER_S,
        team: TeamDesk | None = None,
    ) -> None:
        self._dispatcher = dispatcher
        self._defer_after = defer_after
        self.team = team
        """The machines sharing the bot: whose each command is (None: this machine alone)."""
        self._tasks: set[asyncio.Task[None]] = set()

    @staticmethod
    def handles(data: dict[str, Any]) -> bool:
        return data.get("type") in (APPLICATION_COMMAND, AUTOCOMPLETE)

    async def on_interaction(self, data: dict[str, Any]) -> None:
        """Start serving ``data`` and return at once."""
        received = asyncio.get_running_loop().time()
        task = asyncio.create_task(
            self._serve(data, received), name=f"interaction-{data.get('id')}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, data: dict[str, Any], received: float) -> None:
        try:
            if data.get("type") == AUTOCOMPLETE:
                await self._autocomplete(data)
            else:
                await self._command(data, received)
        except DiscordError as exc:
            log.warning("answering interaction %s failed: %s", data.get("id"), exc)
        except Exception:
            log.exception("serving interaction %s failed", data.get("id"))

    async def _autocomplete(self, data: dict[str, Any]) -> None:
        request, focused, typed = parse(data)
        if self.team is not None:
            turn = self._turn(request, focused or "")
            if turn.act != "now":
                return  # another machine's to offer (autocomplete cannot be probed)
        controls = self._dispatcher.controls
        choices: list[tuple[str, str]] = []
        if focused and self._dispatcher.is_owner(request.user_id):
            try:
                choices = suggestions(
                    controls, request.command, focused, typed, request.options, request.channel_id
                )
            except Exception:
                log.exception("suggesting for /%s failed", request.command)
        await controls.rest.suggest(str(data["id"]), str(data["token"]), choices)

    def _turn(self, request: Request, focused: str | None) -> Turn:
        """This machine's turn for ``request``; a stranger's is refused by whichever machine
        answers what any machine may."""
        assert self.team is not None
        if not self._dispatcher.is_owner(request.user_id):
            return self.team.anyone_turn(autocomplete=focused is not None)
        return self.team.turn(request.command, request.options, request.channel_id, focused=focused)

    async def _command(self, data: dict[str, Any], received: float) -> None:
        request, _, _ = parse(data)
        rest = self._dispatcher.controls.rest
        interaction, token = str(data["id"]), str(data["token"])
        if self._dispatcher.controls.guild_id is None and data.get("guild_id"):
            self._dispatcher.controls.guild_id = str(data["guild_id"])
        defer_after: float | None = self._defer_after
        note = None
        if self.team is not None:
            turn = self.team.turn(
                request.command, request.options, request.channel_id, focused=None
            )
            if turn.act == "never":
                return
            if turn.act == "probe":
                if not await self.team.slot_came(data, turn, received):
                    return  # another machine answered
                log.info("/%s: answering at turn %d, nobody did", request.command, turn.slot)
                defer_after = 0.0
            else:
                defer_after = self.team.defer_after(received, self._defer_after)
                if defer_after is None:
                    log.warning(
                        "/%s came too late to answer first: left to another machine",
                        request.command,
                    )
                    return
            if turn.instead is not None:
                text = f"{turn.instead}\n-# answered by `{self.team.me}`"
                await rest.reply_to_interaction(interaction, token, text, ephemeral=True)
                return
            note = turn.note
        work = asyncio.create_task(self._dispatcher.dispatch(request))
        done, _ = await asyncio.wait({work}, timeout=defer_after)
        if work in done:
            reply = _noted(work.result(), note)
            chunks = _chunks(reply)
            await rest.reply_to_interaction(
                interaction, token, chunks[0], ephemeral=not reply.public
            )
        else:
            await rest.defer_interaction(interaction, token, ephemeral=True)
            try:
                async with asyncio.timeout(COMMAND_LIMIT_S):
                    reply = await work
            except TimeoutError:
                reply = Reply(error_text("E_TIMEOUT", "the command took too long; see /status"))
            chunks = _chunks(_noted(reply, note))
            await rest.edit_interaction_reply(str(data["application_id"]), token, chunks[0])
        for chunk in chunks[1:]:
            await rest.follow_up(
                str(data["application_id"]), token, chunk, ephemeral=not reply.public
            )


def _noted(reply: Reply, note: str | None) -> Reply:
    """The reply with the team's note (a project two machines host) below it."""
    if not note:
        return reply
    return Reply(f"{reply.text}\n-# {note}", public=reply.public, quiet_in_text=reply.quiet_in_text)


def _chunks(reply: Reply) -> list[str]:
    return split_message(reply.text) or ["Done."]
