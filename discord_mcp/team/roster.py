"""What this machine knows of the others: their presence records, and whether each is live.

A machine is *live* while its record was written less than :data:`AWAY_AFTER_S` ago by
Discord's clock (the record's ``edited_timestamp``), else *away*. Records arrive from the
presence thread's history (read once a minute) and from the gateway (every edit is a
MESSAGE_UPDATE to every session of the bot).

Whether this machine may *claim* (answer at once, before anyone else looked) is judged more
strictly than the others judge it, so that two machines never both claim: it stops claiming
:data:`SELF_MARGIN_S` before the others would call it away, and it claims nothing every live
machine might claim too until each of them has read its record: each record lists the
machines (name and instance) its writer has read (``knows``), and a record without that list
counts after :data:`JOIN_GRACE_S` (longer than one presence read). A machine alone claims at
once. Another live machine with this machine's name is a *conflict*: nothing is claimed until it
is resolved (the log and ``/status`` say so).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from discord_mcp.team.records import MachineRecord

log = logging.getLogger(__name__)

AWAY_AFTER_S = 180.0
"""A machine whose record was not written for this long is away (three presence writes)."""
SELF_MARGIN_S = 30.0
"""A machine stops claiming this long before the others would call it away: the clocks of two
machines may disagree by less than this."""
JOIN_GRACE_S = 90.0
"""After its first record, a machine whose record a live one may not have read yet claims
nothing for this long: every machine reads the presence thread at least once a minute."""


@dataclass(frozen=True, slots=True)
class Machine:
    """A machine as this one sees it now."""

    name: str
    live: bool
    record: MachineRecord | None
    """None for this machine before its first record was written."""
    this: bool = False


class Roster:
    """The machines sharing the bot, as this one knows them.

    Args:
        me: this machine's name.
        clock: the wall clock (Unix seconds; tests inject one).
    """

    def __init__(self, me: str, *, clock: Callable[[], float] = time.time) -> None:
        self.me = me
        self.clock = clock
        self.instance = secrets.token_hex(6)
        """This run of the machine's daemon: a record of this name with another instance,
        written after ours, is another machine using our name."""
        self.up_since = clock()
        self.own: MachineRecord | None = None
        """This machine's record as last written (its ``seen_at`` is Discord's)."""
        self.first_written_at: float | None = None
        """When this run first wrote its record, by this machine's clock."""
        self._rival_at: float | None = None
        """When another machine last wrote a record in this machine's name (Discord's time)."""
        self._others: dict[str, MachineRecord] = {}

    # ---- what arrives ---------------------------------------------------------------------

    def saw(self, record: MachineRecord) -> None:
        """A record read from Discord (history or a live event)."""
        if record.name == self.me:
            self._saw_own_name(record)
            return
        known = self._others.get(record.name)
        if known is None or record.seen_at >= known.seen_at:
            self._others[record.name] = record

    def _saw_own_name(self, record: MachineRecord) -> None:
        """A record of this machine's name: ours, our previous run's (written before our first
        write), or another machine's that uses our name (written after it)."""
        if record.instance == self.instance or not record.instance or self.own is None:
            return
        if record.seen_at <= self.own.seen_at + 1.0:
            return
        if self._rival_at is None or self.clock() - self._rival_at >= AWAY_AFTER_S:
            log.error(
                "another machine also calls itself %r (it wrote a presence record after ours): "
                "until one of them is renamed (DISCORD_MCP_MACHINE), this one answers only what "
                "is its own (its run threads, jobs, schedules and cards)",
                self.me,
            )
        self._rival_at = max(self._rival_at or 0.0, record.seen_at)

    @property
    def conflict(self) -> str | None:
        """Why this machine claims nothing: another live machine writes records in its name."""
        if self._rival_at is None or self.clock() - self._rival_at >= AWAY_AFTER_S:
            return None
        return f"another live machine is also named `{self.me}`"

    def wrote(self, record: MachineRecord) -> None:
        """This machine's record was written (``seen_at``: Discord's timestamp of the write)."""
        self.own = record
        if self.first_written_at is None:
            self.first_written_at = self.clock()

    def forget(self, name: str) -> None:
        self._others.pop(name, None)

    # ---- what is known ----------------------------------------------------------------------

    def is_live(self, record: MachineRecord, now: float | None = None) -> bool:
        now = self.clock() if now is None else now
        return now - record.seen_at < AWAY_AFTER_S

    def others(self) -> list[MachineRecord]:
        """Every other machine with a record, live or away, by name."""
        return [self._others[name] for name in sorted(self._others)]

    def live_others(self) -> list[MachineRecord]:
        now = self.clock()
        return [r for r in self.others() if self.is_live(r, now)]

    def others_known(self) -> bool:
        """Whether any other machine ever wrote a record (live or away): then threads the bot
        opened that this machine does not know are another machine's."""
        return bool(self._others)

    def live_names(self) -> list[str]:
        """This machine and every live one, by name: the order in which they answer."""
        return sorted({self.me, *(r.name for r in self.live_others())})

    def machines(self) -> list[Machine]:
        """Every machine, this one included, by name."""
        now = self.clock()
        found = [Machine(r.name, self.is_live(r, now), r) for r in self.others()]
        found.append(Machine(self.me, True, self.own, this=True))
        return sorted(found, key=lambda m: m.name)

    def record(self, name: str) -> MachineRecord | None:
        return self.own if name == self.me else self._others.get(name)

    def hosts(self, project: str) -> list[str]:
        """The other live machines whose record lists ``project``, by name."""
        return [r.name for r in self.live_others() if r.hosts(project)]

    @property
    def signature(self) -> str:
        """This run as other records list it in ``knows``."""
        return f"{self.me}/{self.instance}"

    def knows(self) -> tuple[str, ...]:
        """The live machines this one has read, for its own record's ``knows``."""
        return tuple(f"{r.name}/{r.instance}" for r in self.live_others() if r.instance)

    def fresh(self) -> bool:
        """Whether the others surely see this machine as live: its record was written, and
        not so long ago that a clock running ahead of ours could call it away."""
        if self.own is None or self.conflict is not None:
            return False
        return self.clock() - self.own.seen_at < AWAY_AFTER_S - SELF_MARGIN_S

    def claimable(self) -> bool:
        """Whether this machine may answer at once what it is first in line for (and what
        every machine is in line for): alone, or fresh and known to every live machine."""
        if self.conflict is not None:
            return False
        others = self.live_others()
        if not others:
            return True  # alone: nobody else could answer
        if not self.fresh() or self.first_written_at is None:
            return False
        if all(self.signature in r.knows for r in others):
            return True
        return self.clock() - self.first_written_at >= JOIN_GRACE_S

    def seen_words(self, name: str) -> str:
        """How long ago a machine was seen, for people ("40 s ago", "away for 5 min")."""
        record = self.record(name)
        if record is None or not record.seen_at:
            return "never seen"
        age = max(0.0, self.clock() - record.seen_at)
        words = _duration(age)
        return f"away, last seen {words} ago" if age >= AWAY_AFTER_S else f"seen {words} ago"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{int(seconds)} s"
    if seconds < 90 * 60:
        return f"{int(seconds // 60)} min"
    if seconds < 36 * 3600:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} days"
