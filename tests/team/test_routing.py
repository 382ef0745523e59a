"""Who answers what: of the machines that all receive every interaction, exactly one answers at
once, and the others take later turns only for what nobody answered."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from discord_mcp.team.records import MachineRecord
from discord_mcp.team.roster import Roster
from discord_mcp.team.routing import LAST_SLOT, NEVER, NOW, Target, Turn, target_of, turn_for

MAIN = "100000000000000001"
THREAD = "100000000000000002"


@dataclass
class Has:
    projects: set[str] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)
    jobs: set[str] = field(default_factory=set)
    schedules: set[str] = field(default_factory=set)

    def project(self, name: str) -> bool:
        return name in self.projects

    def session(self, thread_id: str) -> bool:
        return thread_id in self.sessions

    def job(self, job_id: str) -> bool:
        return job_id in self.jobs

    def schedule(self, schedule_id: str) -> bool:
        return schedule_id in self.schedules


NOW_AT = 1_800_000_000.0


def team(*machines: tuple[str, tuple[str, ...]]) -> dict[str, Roster]:
    """Rosters of machines that have all read each other: (name, projects) each."""
    rosters = {name: Roster(name, clock=lambda: NOW_AT) for name, _ in machines}
    records = {
        name: MachineRecord(
            name=name,
            instance=rosters[name].instance,
            up_since=NOW_AT,
            projects=projects,
            seen_at=NOW_AT,
            knows=tuple(r.signature for other, r in rosters.items() if other != name),
        )
        for name, projects in machines
    }
    for name, roster in rosters.items():
        roster.wrote(records[name])
        for other, record in records.items():
            if other != name:
                roster.saw(record)
    return rosters


def turns(rosters: dict[str, Roster], target: Target, **has: Has) -> dict[str, Turn]:
    return {name: turn_for(target, r, has.get(name, Has())) for name, r in rosters.items()}


def answering_now(found: dict[str, Turn]) -> list[str]:
    return [name for name, turn in found.items() if turn.act == "now"]


def slots(found: dict[str, Turn]) -> dict[str, int]:
    return {name: turn.slot for name, turn in found.items() if turn.act == "probe"}


def test_what_a_command_is_about() -> None:
    assert target_of("status", {}, MAIN, main_channel=MAIN) == Target("anyone", command="status")
    assert target_of("status", {}, THREAD, main_channel=MAIN) == Target("thread", THREAD, "status")
    assert target_of("help", {}, THREAD, main_channel=MAIN).kind == "anyone"
    assert target_of("start", {"project": "app"}, MAIN, main_channel=MAIN) == Target(
        "project", "app"
    )
    assert target_of("project add", {"name": "x", "machine": "Cloud"}, MAIN, main_channel=MAIN) == (
        Target("machine", "cloud")
    )
    assert target_of("stop", {"session": THREAD}, MAIN, main_channel=MAIN) == Target(
        "session", THREAD
    )
    assert target_of("logs", {"job": "job_1"}, THREAD, main_channel=MAIN) == Target("job", "job_1")
    assert target_of("schedule remove", {"schedule": "s1"}, MAIN, main_channel=MAIN).kind == (
        "schedule"
    )


def test_a_command_naming_nothing_is_answered_by_the_first_name_and_the_others_wait() -> None:
    rosters = team(("cloud", ()), ("laptop", ()), ("server", ()))
    found = turns(rosters, Target("anyone"))
    assert answering_now(found) == ["cloud"]
    assert slots(found) == {"laptop": 1, "server": 2}  # each its own turn, never the same


def test_of_four_machines_two_take_later_turns_and_the_fourth_never_answers() -> None:
    """Two later turns at most: the third slot is only for a first in line in doubt, so no
    third later machine ever answers too (two answers are one 40060 at best)."""
    rosters = team(("cloud", ()), ("laptop", ()), ("server", ()), ("spare", ()))
    found = turns(rosters, Target("anyone"))
    assert answering_now(found) == ["cloud"]
    assert slots(found) == {"laptop": 1, "server": 2}
    assert found["spare"] == NEVER


def test_a_command_naming_a_project_goes_to_its_machine() -> None:
    rosters = team(("laptop", ("app",)), ("server", ("api",)))
    found = turns(rosters, Target("project", "api"), server=Has(projects={"api"}))
    assert answering_now(found) == ["server"]
    later = found["laptop"]
    assert later == Turn("probe", 1, instead=later.instead)
    assert "`api` is on `server`, which did not answer" in (later.instead or "")


def test_a_project_on_two_machines_goes_to_the_first_name_and_the_answer_says_so() -> None:
    rosters = team(("laptop", ("app",)), ("server", ("app",)))
    has = {"laptop": Has(projects={"app"}), "server": Has(projects={"app"})}
    found = turns(rosters, Target("project", "app"), **has)
    assert answering_now(found) == ["laptop"]
    assert slots(found) == {"server": 1}  # the other host runs it if laptop does not answer
    assert found["server"].instead is None
    note = found["laptop"].note or ""
    assert "`app` is a project on `laptop`, `server`: `laptop` answers for it" in note


def test_a_project_nobody_has_is_run_by_one_machine_which_says_so() -> None:
    rosters = team(("laptop", ()), ("server", ()))
    found = turns(rosters, Target("project", "nope"))
    assert answering_now(found) == []
    assert slots(found) == {"laptop": 1, "server": 2}
    assert all(t.instead is None for t in found.values())  # the registry's own error


def test_a_run_thread_is_its_machines_and_the_others_say_it_did_not_answer() -> None:
    rosters = team(("laptop", ()), ("server", ()))
    found = turns(rosters, Target("thread", THREAD, "stop"), server=Has(sessions={THREAD}))
    assert answering_now(found) == ["server"]
    assert slots(found) == {"laptop": 1}
    assert "No machine that answered runs a session in this thread" in (
        found["laptop"].instead or ""
    )
    status = turns(rosters, Target("thread", THREAD, "status"))
    assert slots(status) == {"laptop": 1, "server": 2}
    assert all(t.instead is None for t in status.values())  # /status shows everything


def test_a_command_naming_a_machine_goes_to_it() -> None:
    rosters = team(("a", ()), ("b", ()), ("c", ()))
    found = turns(rosters, Target("machine", "c"))
    assert answering_now(found) == ["c"]
    assert slots(found) == {"a": 1, "b": 2}
    assert "`c` did not answer" in (found["a"].instead or "")
    unknown = turns(rosters, Target("machine", "zz"))
    assert "No machine is named `zz`" in (unknown["a"].instead or "")


def test_a_machine_alone_answers_everything_at_once() -> None:
    roster = Roster("laptop", clock=lambda: NOW_AT)
    for target in (Target("anyone"), Target("project", "x"), Target("session", THREAD)):
        assert turn_for(target, roster, Has()) == NOW


def test_alone_a_project_of_an_away_machine_is_said_to_be_there() -> None:
    roster = Roster("laptop", clock=lambda: NOW_AT)
    roster.saw(
        MachineRecord(
            name="server", instance="0a", up_since=0, projects=("api",), seen_at=NOW_AT - 600
        )
    )
    turn = turn_for(Target("project", "api"), roster, Has())
    assert turn.act == "now"
    assert turn.instead == "`api` is on `server`, which is away (away, last seen 10 min ago)."


def test_a_machine_not_yet_known_to_the_others_waits_for_the_last_turn() -> None:
    rosters = team(("laptop", ()), ("server", ()))
    late = Roster("aaa", clock=lambda: NOW_AT)  # a new first name, joining
    late.wrote(MachineRecord(name="aaa", instance=late.instance, up_since=NOW_AT, seen_at=NOW_AT))
    for roster in rosters.values():
        late.saw(replace(roster.own, knows=()))  # type: ignore[arg-type]
        roster.saw(late.own)  # type: ignore[arg-type]
    rosters["aaa"] = late
    found = turns(rosters, Target("anyone"))
    assert answering_now(found) == []  # aaa is first but not known to all yet; nobody claims
    assert slots(found) == {"aaa": LAST_SLOT, "laptop": 1, "server": 2}


def test_a_machine_in_conflict_with_another_of_its_name_answers_only_what_is_its_own() -> None:
    roster = team(("laptop", ()), ("server", ()))["laptop"]
    roster.saw(MachineRecord(name="laptop", instance="beef", up_since=NOW_AT, seen_at=NOW_AT + 5))
    assert roster.conflict
    assert turn_for(Target("anyone"), roster, Has()) == NEVER
    assert turn_for(Target("session", THREAD), roster, Has(sessions={THREAD})) == NOW
