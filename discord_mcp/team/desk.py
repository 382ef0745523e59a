"""The team desk: what the watch daemon consults before it acknowledges or answers anything.

It puts together the roster (:mod:`~.roster`), the presence record (:mod:`~.presence`), the
routing rules (:mod:`~.routing`) and the probe (:mod:`~.probe`) for one machine, and answers
the daemon's questions: is this command mine, now or at which turn; is this thread another
machine's; which machines are there, with what.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from discord_mcp.errors import DiscordError
from discord_mcp.state.files import off_loop
from discord_mcp.team import probe
from discord_mcp.team.presence import Presence
from discord_mcp.team.roster import Roster
from discord_mcp.team.routing import (
    NEVER,
    Holdings,
    Turn,
    autocomplete_turn,
    target_of,
    turn_for,
    unheld_turn,
)
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.routes import Route

log = logging.getLogger(__name__)

WARM_AFTER_S = 1.0
"""A machine whose last request is older than this opens a connection when an interaction
arrives that it may have to probe (pools close idle connections after a few seconds)."""
FIRST_READ_WITHIN_S = 10.0
"""At start, how long the daemon waits for the first read of the presence thread before it
answers anything (meanwhile, or when it failed, it answers as if alone)."""


class TeamDesk:
    """One machine's view of the machines sharing the bot, and its turns.

    Args:
        roster: the machines as this one knows them.
        presence: this machine's record in Discord (and everyone's, read).
        holdings: what this machine has (projects, run threads, jobs, schedules).
        rest: the REST client (for probes and replies to text commands).
        main_channel: the configured channel.
        clock: the event loop's clock by default (the time an interaction was created is
            read on it).
    """

    def __init__(
        self,
        *,
        roster: Roster,
        presence: Presence,
        holdings: Holdings,
        rest: RestClient,
        main_channel: str,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.roster = roster
        self.presence = presence
        self.holdings = holdings
        self._rest = rest
        self._main = main_channel
        self._clock = clock
        self._sleep = sleep
        self._warming: set[asyncio.Task[None]] = set()

    @property
    def me(self) -> str:
        return self.roster.me

    def now(self) -> float:
        return (self._clock or asyncio.get_running_loop().time)()

    # ---- turns ------------------------------------------------------------------------------

    def turn(
        self, command: str, options: Mapping[str, str], channel_id: str, *, focused: str | None
    ) -> Turn:
        """This machine's turn for a slash command, or (``focused``) its autocomplete."""
        if focused is not None:
            # What is being typed names nothing yet: route by the other options.
            options = {k: v for k, v in options.items() if k != focused}
        target = target_of(command, options, channel_id, main_channel=self._main)
        if focused is not None:
            return autocomplete_turn(target, self.roster, self.holdings)
        return turn_for(target, self.roster, self.holdings)

    def anyone_turn(self, *, autocomplete: bool = False) -> Turn:
        """The turn for what any one machine may do (refusing a stranger, a notice)."""
        return self.turn("", {}, self._main, focused="" if autocomplete else None)

    def settled(self) -> bool:
        """Whether this machine read the presence records twice: before its second read, a
        machine started at the same moment as this one may be unknown to it."""
        return self.presence.reads >= 2

    def unheld_turn(self) -> Turn:
        """The turn for a click on a card from before machines had names, not asked here."""
        return unheld_turn(self.roster)

    async def slot_came(self, interaction: dict[str, Any], turn: Turn, created: float) -> bool:
        """Wait for ``turn``'s slot (``created``: when Discord made the interaction, on
        :meth:`now`'s clock); True when nobody answered it meanwhile."""
        self.warm()
        return await probe.my_turn_came(
            self._rest, interaction, turn, created, clock=self._clock, sleep=self._sleep
        )

    def warm(self) -> None:
        """Make sure a connection to Discord is open by this machine's slot: a probe that
        first has to open one (TCP and TLS, a few hundred milliseconds to the real Discord)
        can miss the deadline. A cheap request now, when the pool may have closed its idle
        connections, leaves one open for the probe."""
        if self._rest.idle_for() < WARM_AFTER_S:
            return
        task = asyncio.get_running_loop().create_task(self._warm_up(), name="team-warm")
        self._warming.add(task)
        task.add_done_callback(self._warming.discard)

    async def _warm_up(self) -> None:
        with contextlib.suppress(DiscordError):
            await self._rest.request(Route.of("GET", "/users/@me"), max_wait=0.0)

    async def text_slot_came(self, message: Mapping[str, Any], turn: Turn) -> bool:
        """For a ``!`` command: wait for ``turn``'s slot; True when no machine replied to it."""
        if turn.act != "probe":
            return turn.act == "now"
        await self._sleep(probe.text_delay(turn))
        channel_id, message_id = str(message["channel_id"]), str(message["id"])
        try:
            after = await self._rest.list_messages(channel_id, after=message_id, limit=50)
        except DiscordError as exc:
            log.warning("could not tell whether !command %s was answered: %s", message_id, exc)
            return False
        for reply in after:
            reference = reply.get("message_reference")
            replied_to = str(reference.get("message_id") or "") if reference else ""
            if reply["author"].get("bot") and replied_to == message_id:
                return False
        return True

    # ---- threads ----------------------------------------------------------------------------

    def foreign_thread(self, thread: Mapping[str, Any], *, mine: bool) -> bool:
        """Whether a thread under the channel is not this machine's to watch: the presence
        thread always; with other machines around, a thread the bot opened that this machine
        does not know as its own (``mine``: a run thread or a question's thread of its own)."""
        if self.presence.is_presence_thread(thread):
            return True
        if mine or not self.roster.others_known():
            return False
        bot = self.presence.bot_id
        owner = str(thread.get("owner_id") or "")
        return bool(bot) and owner == bot

    async def our_thread(
        self,
        thread_id: str,
        mine: bool | Callable[[str], Sequence[object]],
        thread: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether a thread under the channel, not watched yet, is this machine's to watch:
        not the presence thread, nor (with other machines around) a thread the bot opened that
        is not this machine's (``mine``: it is, or a lookup of its questions in the thread,
        read off the event loop; ``thread``: the thread if just read, else it is asked for)."""
        if thread_id in self.presence.threads:
            return False
        if not self.roster.others_known():
            return True
        if thread is None:
            try:
                thread = await self._rest.get_channel(thread_id)
            except DiscordError:
                return False
        if not isinstance(mine, bool):
            mine = bool(await off_loop(mine, thread_id))
        return not self.foreign_thread(thread, mine=mine)

    def on_event(self, name: str, data: Mapping[str, Any]) -> None:
        self.presence.on_event(name, data)

    # ---- what the machines have -------------------------------------------------------------

    def project_hosts(self, project: str) -> list[str]:
        """The other live machines hosting ``project``."""
        return self.roster.hosts(project)

    def all_projects(self) -> list[tuple[str, str]]:
        """(project, machine) of every other live machine's projects."""
        return [(p, r.name) for r in self.roster.live_others() for p in r.projects]


__all__ = ["NEVER", "TeamDesk"]
