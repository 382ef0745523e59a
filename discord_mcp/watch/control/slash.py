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
whose it is: this machine answers it at once, at its later turn when nobody did, or not at all;
and it always acknowledges first ("thinking...") and runs the command only once that
succeeded, so two machines never both run it. Times run from the interaction's creation (its
snowflake), and a command that can no longer be acknowledged by
:data:`~discord_mcp.team.deadline.DEADLINE_S` (one replayed late after a RESUME) is not run.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from discord_mcp.errors import DiscordError, DiscordHTTPError
from discord_mcp.team.deadline import DEADLINE_S, created_on
from discord_mcp.team.desk import TeamDesk
from discord_mcp.team.routing import CUTOFF_S, Turn
from discord_mcp.transport.chunking import split_message
from discord_mcp.watch.control.base import Reply, Request
from discord_mcp.watch.control.dispatch import Dispatcher, error_text, user_name
from discord_mcp.watch.control.suggest import suggestions

log = logging.getLogger(__name__)

APPLICATION_COMMAND, AUTOCOMPLETE = 2, 4
SUB_COMMAND, SUB_COMMAND_GROUP = 1, 2
DEFER_AFTER_S = 1.5
"""How long a command may run before the answer becomes "thinking..." (Discord allows 3 s)."""
SECOND_ACKNOWLEDGEMENT = frozenset({40060, 10062})
"""Discord's refusals of an acknowledgement another one came before: 40060, or 10062 once the
interaction's 3 seconds are over."""
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
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._dispatcher = dispatcher
        self._defer_after = defer_after
        self._wall = wall
        self.team = team
        """The machines sharing the bot: whose each command is (None: this machine alone)."""
        self._tasks: set[asyncio.Task[None]] = set()

    @staticmethod
    def handles(data: dict[str, Any]) -> bool:
        return data.get("type") in (APPLICATION_COMMAND, AUTOCOMPLETE)

    async def on_interaction(self, data: dict[str, Any]) -> None:
        """Start serving ``data`` and return at once."""
        created = created_on(data, now=asyncio.get_running_loop().time(), wall_now=self._wall())
        task = asyncio.create_task(self._serve(data, created), name=f"interaction-{data.get('id')}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, data: dict[str, Any], created: float) -> None:
        try:
            if data.get("type") == AUTOCOMPLETE:
                await self._autocomplete(data)
            else:
                await self._command(data, created)
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

    async def _command(self, data: dict[str, Any], created: float) -> None:
        request, _, _ = parse(data)
        rest = self._dispatcher.controls.rest
        interaction, token = str(data["id"]), str(data["token"])
        if self._dispatcher.controls.guild_id is None and data.get("guild_id"):
            self._dispatcher.controls.guild_id = str(data["guild_id"])
        loop = asyncio.get_running_loop()
        left = created + DEADLINE_S - loop.time()
        if left <= 0:
            # Replayed after a RESUME, or held up on the way: Discord fails it at 3 s anyway,
            # and a command run now would act while its owner saw "The application did not
            # respond". Never run what cannot be acknowledged.
            log.warning(
                "/%s came %.1f s after Discord made it: too late to answer, not run",
                request.command,
                DEADLINE_S - left,
            )
            return
        if self.team is None:
            await self._alone(request, data, min(self._defer_after, left))
            return
        turn = self.team.turn(request.command, request.options, request.channel_id, focused=None)
        if turn.act == "never":
            return
        if turn.act == "probe":
            if not await self.team.slot_came(data, turn, created):
                return  # another machine answered, or it is too late
            log.info("/%s: answering at turn %d, nobody did", request.command, turn.slot)
        elif self.team.roster.live_others() and loop.time() > created + CUTOFF_S:
            log.warning(
                "/%s came too late to answer first: left to another machine", request.command
            )
            return
        if turn.instead is not None:
            text = f"{turn.instead}\n-# answered by `{self.team.me}`"
            await self._acknowledged(
                request, rest.reply_to_interaction(interaction, token, text, ephemeral=True)
            )
            return
        note = turn.note
        if turn.act == "now" and not self.team.roster.live_others() and self.team.settled():
            await self._alone(request, data, min(self._defer_after, left), note)
            return
        # Other machines may answer too (or, before this machine's second presence read, one
        # started with it may be unknown yet): the command runs only once its acknowledgement
        # succeeded, so a refused one (another machine's came first) runs nothing.
        if not await self._acknowledged(
            request, rest.defer_interaction(interaction, token, ephemeral=True)
        ):
            return
        reply = await self._finish(self._run(request, data))
        await self._answer_deferred(data, _noted(reply, note))

    async def _alone(
        self, request: Request, data: dict[str, Any], defer_after: float, note: str | None = None
    ) -> None:
        """No other machine can answer: the command runs at once, its reply the answer when it
        is ready within ``defer_after``, else "thinking..." first."""
        rest = self._dispatcher.controls.rest
        interaction, token = str(data["id"]), str(data["token"])
        work = asyncio.create_task(self._run(request, data))
        done, _ = await asyncio.wait({work}, timeout=max(defer_after, 0.0))
        if work in done:
            reply = _noted(work.result(), note)
            chunks = _chunks(reply)
            await rest.reply_to_interaction(
                interaction, token, chunks[0], ephemeral=not reply.public
            )
            await self._follow_up(data, chunks[1:], reply)
            return
        await rest.defer_interaction(interaction, token, ephemeral=True)
        await self._answer_deferred(data, _noted(await self._finish(work), note))

    async def _run(self, request: Request, data: dict[str, Any]) -> Reply:
        """The command's effect, logged: a command run on two machines, or on none, shows in
        their logs (bench/discord_budgets.py counts it so)."""
        log.info("/%s: running interaction %s", request.command, data.get("id"))
        return await self._dispatcher.dispatch(request)

    async def _acknowledged(self, request: Request, acknowledging: Awaitable[None]) -> bool:
        """Send an acknowledgement; False when Discord refused it as a second one (40060, or
        10062 once its time is over): another machine answered first."""
        try:
            await acknowledging
        except DiscordHTTPError as exc:
            if exc.code in SECOND_ACKNOWLEDGEMENT:
                log.info("/%s: another machine answered first (%d)", request.command, exc.code)
                return False
            raise
        return True

    async def _finish(self, work: Awaitable[Reply]) -> Reply:
        try:
            async with asyncio.timeout(COMMAND_LIMIT_S):
                return await work
        except TimeoutError:
            return Reply(error_text("E_TIMEOUT", "the command took too long; see /status"))

    async def _answer_deferred(self, data: dict[str, Any], reply: Reply) -> None:
        chunks = _chunks(reply)
        rest = self._dispatcher.controls.rest
        await rest.edit_interaction_reply(
            str(data["application_id"]), str(data["token"]), chunks[0]
        )
        await self._follow_up(data, chunks[1:], reply)

    async def _follow_up(self, data: dict[str, Any], chunks: list[str], reply: Reply) -> None:
        rest = self._dispatcher.controls.rest
        for chunk in chunks:
            await rest.follow_up(
                str(data["application_id"]), str(data["token"]), chunk, ephemeral=not reply.public
            )


def _noted(reply: Reply, note: str | None) -> Reply:
    """The reply with the team's note (a project two machines host) below it."""
    if not note:
        return reply
    return Reply(f"{reply.text}\n-# {note}", public=reply.public, quiet_in_text=reply.quiet_in_text)


def _chunks(reply: Reply) -> list[str]:
    return split_message(reply.text) or ["Done."]
