"""What a machine knows of the others: live or away, and when it may answer first."""

from __future__ import annotations

from dataclasses import replace

from discord_mcp.team.records import MachineRecord
from discord_mcp.team.roster import AWAY_AFTER_S, JOIN_GRACE_S, SELF_MARGIN_S, Roster
from discord_mcp.watch.control.machines import machines_lines, projects_elsewhere


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def seen(name: str, at: float, **fields: object) -> MachineRecord:
    base = MachineRecord(name=name, instance=f"{name}00", up_since=at, seen_at=at)
    return replace(base, **fields)  # type: ignore[arg-type]


def written(roster: Roster, at: float) -> None:
    roster.wrote(seen(roster.me, at, instance=roster.instance))


def test_a_machine_not_seen_for_three_minutes_is_away_and_shown_so() -> None:
    clock = Clock()
    roster = Roster("laptop", clock=clock)
    written(roster, clock.now)
    roster.saw(seen("server", clock.now, projects=("api",)))
    clock.now += AWAY_AFTER_S - 1
    assert [r.name for r in roster.live_others()] == ["server"]
    assert "`server` (seen 2 min ago) · projects `api`" in "\n".join(machines_lines(roster))
    clock.now += 2
    assert roster.live_others() == []
    assert roster.live_names() == ["laptop"]
    status = "\n".join(machines_lines(roster))
    assert "`server` (**away**, last seen 3 min ago)" in status
    assert "`laptop` (this one)" in status
    assert projects_elsewhere(roster) == []  # an away machine's projects are not offered


def test_the_newest_record_of_a_machine_wins() -> None:
    clock = Clock()
    roster = Roster("laptop", clock=clock)
    roster.saw(seen("server", clock.now - 10, projects=("new",)))
    roster.saw(seen("server", clock.now - 100, projects=("old",)))
    assert roster.hosts("new") == ["server"]
    assert roster.hosts("old") == []


def test_alone_a_machine_claims_at_once() -> None:
    roster = Roster("laptop", clock=Clock())
    assert roster.claimable()  # before its first record even: nobody else could answer


def test_joining_live_machines_it_claims_once_each_has_read_its_record() -> None:
    clock = Clock()
    roster = Roster("laptop", clock=clock)
    roster.saw(seen("server", clock.now))
    assert not roster.claimable()  # its record is not written yet
    written(roster, clock.now)
    assert not roster.claimable()  # server has not read it yet
    roster.saw(seen("server", clock.now + 1, knows=("laptop/someone-else",)))
    assert not roster.claimable()  # server knows an earlier run of laptop, not this one
    roster.saw(seen("server", clock.now + 2, knows=(roster.signature,)))
    assert roster.claimable()


def test_a_record_without_what_it_knows_counts_after_the_grace() -> None:
    clock = Clock()
    roster = Roster("laptop", clock=clock)
    written(roster, clock.now)
    roster.saw(seen("server", clock.now))  # an older server: no "knows"
    assert not roster.claimable()
    clock.now += JOIN_GRACE_S
    roster.saw(seen("server", clock.now))
    written(roster, clock.now)
    assert roster.claimable()


def test_a_machine_stops_claiming_before_the_others_call_it_away() -> None:
    clock = Clock()
    roster = Roster("laptop", clock=clock)
    written(roster, clock.now)
    roster.saw(seen("server", clock.now, knows=(roster.signature,)))
    assert roster.claimable()
    assert roster.fresh()
    clock.now += AWAY_AFTER_S - SELF_MARGIN_S  # its own writes failed meanwhile
    roster.saw(seen("server", clock.now, knows=(roster.signature,)))
    assert not roster.fresh()
    assert not roster.claimable()


def test_another_machine_writing_in_our_name_is_a_conflict_until_it_stops() -> None:
    clock = Clock()
    roster = Roster("laptop", clock=clock)
    # Our previous run's record, read before our first write: not a rival.
    roster.saw(seen("laptop", clock.now + 5, instance="0ld0"))
    assert roster.conflict is None
    written(roster, clock.now + 10)
    roster.saw(seen("laptop", clock.now + 5, instance="0ld0"))  # still the old one
    assert roster.conflict is None
    roster.saw(seen("laptop", clock.now + 70, instance="beef"))  # written after ours
    assert roster.conflict is not None
    assert not roster.claimable()
    written(roster, clock.now + 75)
    assert roster.conflict is not None  # it stays until the rival is quiet for 3 minutes
    clock.now += 70 + AWAY_AFTER_S
    assert roster.conflict is None
