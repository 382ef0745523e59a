"""Who answers what: of several machines that all receive every interaction, exactly one answers.

Theory. Discord delivers every INTERACTION_CREATE to every gateway session of the bot, one per
machine, and takes exactly one answer: a second acknowledgement is refused with 40060. So each
machine decides on its own, from the same facts, whether the interaction is its to answer:

* A card's click names its machine in its ``custom_id``: that machine answers, no other
  (:mod:`discord_mcp.decisions.live`).
* A command that names a machine (``machine:``) goes to it; one that names a project goes to
  the machine hosting it (the lowest name when two do, and the answer says so); one about a
  run thread, a job or a schedule goes to the machine that has it; any other goes to the first
  live machine by name.
* The one it goes to answers *now* (before :data:`CUTOFF_S`, or not at all). Every other live
  machine has a *slot* (:data:`SLOT_S`): it waits until then, asks Discord whether the
  interaction was acknowledged (:mod:`~discord_mcp.team.probe`), and only if not answers
  itself: with the command when any machine may run it, or with a sentence saying which
  machine did not answer. So a machine that died is replaced from the next command on, within
  Discord's 3 seconds. Times run from the interaction's creation (its snowflake,
  :mod:`~discord_mcp.team.deadline`), not its arrival, so every machine counts the same
  slots, and an interaction replayed late is not answered after Discord gave up on it.
* A command's effect runs only once its acknowledgement succeeded (the machine defers first,
  then runs it): a probe that raced another machine's acknowledgement meets 40060 (or 10062)
  and runs nothing, so no command runs twice.
* Only a machine sure that every other one agrees claims *now* (:meth:`Roster.claimable`);
  in doubt it waits for the last slot. Autocomplete, which cannot be probed, is answered only
  by a machine that claims.

This module is pure: it reads the roster and what this machine has (:class:`Holdings`) and
returns a :class:`Turn`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from discord_mcp.team.roster import Roster

CUTOFF_S = 0.8
"""The machine whose turn is *now* acknowledges within this long of the interaction's creation,
or stays silent (a later slot answers)."""
SLOT_S: Mapping[int, float] = {1: 1.3, 2: 1.8, 3: 2.3}
"""When each later turn looks (seconds after the interaction's creation). The last one leaves
its probe and acknowledgement the 700 ms left of Discord's 3 seconds."""
LAST_SLOT = 3
TEXT_SLOT_S = 5.0
"""For a ``!`` text command, how long each later turn waits for a reply before answering."""

THREAD_BOUND = frozenset(
    {
        "session close",
        "session rename",
        "status",
        "tool",
        "model",
        "retry",
        "stop",
        "cancel",
        "logs",
        "diff",
        "schedule add",
    }
)
"""Commands about the run thread they are typed in (when they name no session, job or
project)."""


class Holdings(Protocol):
    """What this machine has, for the routing of commands that name something."""

    def project(self, name: str) -> bool: ...

    def session(self, thread_id: str) -> bool: ...

    def job(self, job_id: str) -> bool: ...

    def schedule(self, schedule_id: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class Target:
    """What a command is about: ``anyone`` (any machine may answer), or the ``machine``,
    ``project``, ``session``, ``job``, ``schedule`` or ``thread`` (the run thread it was typed
    in) named by ``name``."""

    kind: Literal["anyone", "machine", "project", "session", "job", "schedule", "thread"]
    name: str = ""
    command: str = ""


@dataclass(frozen=True, slots=True)
class Turn:
    """When this machine answers: ``now``, at ``slot`` if nobody did (``probe``), or ``never``.

    ``instead``: when answering, say this rather than run the command (it belongs to a machine
    that did not answer, or is away). ``note``: a line to add to the answer (a project hosted
    twice).
    """

    act: Literal["now", "probe", "never"]
    slot: int = 0
    instead: str | None = None
    note: str | None = None


NOW = Turn("now")
NEVER = Turn("never")


def target_of(
    command: str, options: Mapping[str, str], channel_id: str, *, main_channel: str
) -> Target:
    """What ``command`` (``"project add"``, ``"status"``) with ``options`` is about."""

    def given(name: str) -> str:
        return str(options.get(name) or "").strip()

    if given("machine"):
        return Target("machine", given("machine").lower())
    if given("project") and command != "project add":
        return Target("project", given("project"))
    if given("session"):
        return Target("session", given("session"))
    if given("job"):
        return Target("job", given("job"))
    if given("schedule"):
        return Target("schedule", given("schedule"))
    if command in THREAD_BOUND and channel_id and channel_id != main_channel:
        return Target("thread", channel_id, command)
    return Target("anyone", command=command)


def turn_for(target: Target, roster: Roster, have: Holdings) -> Turn:
    """This machine's turn for a command about ``target``."""
    names = roster.live_names()
    if roster.conflict is not None:
        # Another live machine has our name: it would take the same turns. Fail closed: only
        # what is ours alone (a run thread, a job, a schedule of this state directory).
        return NOW if _held(target, have) else NEVER
    if not roster.live_others():
        # Alone: nobody else could answer. A project only an away machine has is said so.
        if target.kind == "project" and not have.project(target.name):
            away = [r.name for r in roster.others() if r.hosts(target.name)]
            if away:
                words = f"`{target.name}` is on {_list(away)}, which is away"
                return Turn("now", instead=f"{words} ({roster.seen_words(away[0])}).")
        return NOW
    if target.kind == "anyone":
        if names[0] == roster.me:
            return NOW if roster.claimable() else Turn("probe", LAST_SLOT)
        return _later(names[1:], roster.me)
    # What only this machine has is claimed at once, while the others surely see it live.
    mine_now = NOW if roster.fresh() else Turn("probe", LAST_SLOT)
    if target.kind == "machine":
        if target.name == roster.me:
            return mine_now
        line = [n for n in names if n != target.name]
        return _later(line, roster.me, instead=_machine_silent(roster, target.name))
    if target.kind == "project":
        return _project_turn(target.name, roster, have, names)
    if _held(target, have):
        return mine_now
    # Whoever has it answers at once; the others do not know who that is: they take their
    # turns in name order. Perhaps nobody has it (``/status`` in a question's thread shows
    # everything, as anywhere).
    if target.kind == "thread":
        instead = None if target.command == "status" else _not_a_run_thread(roster)
    else:
        instead = _nobody_has(roster, target)
    return _later(names, roster.me, instead=instead)


def _held(target: Target, have: Holdings) -> bool:
    """Whether this machine has the run thread, job or schedule ``target`` names."""
    if target.kind in ("session", "thread"):
        return have.session(target.name)
    if target.kind == "job":
        return have.job(target.name)
    if target.kind == "schedule":
        return have.schedule(target.name)
    return False


def unheld_turn(roster: Roster) -> Turn:
    """The turn for something that may be another machine's, which this one does not have (a
    card from before machines had names, whose decision is not here): whoever has it answers
    at once; the others, in name order, say it is unknown when nobody did."""
    if not roster.live_others():
        return NOW
    if roster.conflict is not None:
        return NEVER
    return _later(roster.live_names(), roster.me)


def autocomplete_turn(target: Target, roster: Roster, have: Holdings) -> Turn:
    """Autocomplete cannot be probed (its answer leaves no message): only a claim answers it."""
    turn = turn_for(target, roster, have)
    return NOW if turn.act == "now" else NEVER


def _project_turn(project: str, roster: Roster, have: Holdings, names: list[str]) -> Turn:
    hosts = sorted({*roster.hosts(project), *([roster.me] if have.project(project) else [])})
    if roster.me in hosts:
        index = hosts.index(roster.me)
        note = None
        if len(hosts) > 1:
            note = (
                f"`{project}` is a project on {_list(hosts)}: `{hosts[0]}` answers for it (the "
                "first name). Rename one of them to use both."
            )
        if index == 0:
            sole = len(hosts) == 1 and roster.fresh()
            if sole or roster.claimable():
                return Turn("now", note=note)
            return Turn("probe", LAST_SLOT, note=note)
        return _later(hosts[1:], roster.me, note=note)
    # Not hosted here: after the hosts, in name order, say who did not answer.
    line = hosts[1:] + [n for n in names if n not in hosts]
    instead = None  # nobody has it: the command itself says so, here as anywhere
    if hosts:
        words = f"`{project}` is on {_list(hosts)}, which did not answer"
        instead = f"{words} ({roster.seen_words(hosts[0])}): it may be down."
    return _later(line, roster.me, instead=instead)


def _later(
    line: list[str], me: str, *, instead: str | None = None, note: str | None = None
) -> Turn:
    """The turn of ``me`` in ``line``, the machines after the one that answers at once (in
    order): slot 1 for the first, 2 for the second, none after (two later turns are plenty;
    the last slot is for a first in line in doubt)."""
    slot = line.index(me) + 1 if me in line else LAST_SLOT
    if slot >= LAST_SLOT:
        return NEVER
    return Turn("probe", slot, instead=instead, note=note)


def _machine_silent(roster: Roster, name: str) -> str:
    if roster.record(name) is None:
        known = _list(roster.live_names())
        return f"No machine is named `{name}` (machines: {known})."
    return f"`{name}` did not answer ({roster.seen_words(name)}): it may be down."


def _not_a_run_thread(roster: Roster) -> str:
    away = [r.name for r in roster.others() if not roster.is_live(r)]
    hint = f" (away: {_list(away)})" if away else ""
    return (
        "No machine that answered runs a session in this thread: use it in a run thread, or "
        f"its machine may be down{hint}."
    )


def _nobody_has(roster: Roster, target: Target) -> str:
    away = [r.name for r in roster.others() if not roster.is_live(r)]
    hint = f" (away: {_list(away)})" if away else ""
    return (
        f"No machine that answered has the {target.kind} `{target.name}`: it may be on a "
        f"machine that is down{hint}."
    )


def _list(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)
