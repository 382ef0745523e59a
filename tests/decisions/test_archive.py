"""Open and done apart (issue 38): done decisions leave ``decisions/``, where every hot path
looks, for a dated archive; they stay readable by id, by thread, by session and as history; a
sweep that is killed half-way loses nothing and the next one finishes it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from discord_mcp.approvals.request import ToolRequest
from discord_mcp.approvals.rules import precedent
from discord_mcp.decisions import archive
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.hooks import session_start
from discord_mcp.watch.quiet import thread_decisions
from discord_mcp.watch.routing import destination
from tests.decisions.test_store import make_decision

NOW = datetime(2026, 11, 22, 18, 0, tzinfo=UTC)
ANSWER = {
    "status": "answered",
    "answer": "Yes",
    "selected_option": "Yes",
    "selected_index": 0,
    "answered_by": "200000000000000001",
    "via": "button",
    "answered_at": "2026-11-22T16:05:00.000+00:00",
}
OWNER = "200000000000000001"
CHANNEL = "100000000000000001"


def decision_id(n: int, day: str = "20261122") -> str:
    return f"{day}-16{n // 60 % 60:02d}{n % 60:02d}-{n:06x}"


def thread_of(n: int) -> str:
    return str(300000000000000000 + n)


def made(store: DecisionStore, n: int, *, day: str = "20261122", **final: object) -> Decision:
    """A decision asked through the store, then changed as the service changes it."""
    draft = make_decision(
        id=decision_id(n, day),
        thread_id=thread_of(n),
        card_message_id=str(400000000000000000 + n),
        project_key="/work/proj",
    )
    store.create(draft)
    if final:
        store.update(draft.id, lambda current: current.replace(**final))
    return store.load(draft.id)


def done(store: DecisionStore, n: int, **more: object) -> Decision:
    return made(store, n, **{**ANSWER, "delivered": True, "final_shown": True, **more})


class Counting(DecisionStore):
    """The decision files, counting which ones were parsed."""

    def __init__(self, home: Path) -> None:
        super().__init__(home)
        self.parsed: list[str] = []

    def load(self, decision_id: str) -> Decision:
        self.parsed.append(decision_id)
        return super().load(decision_id)

    def read_open(self, decision_id: str) -> Decision:
        self.parsed.append(decision_id)
        return super().read_open(decision_id)


def open_names(store: DecisionStore) -> list[str]:
    """The decision files in ``decisions/`` (lock files beside them aside)."""
    return sorted(n for n in os.listdir(store.directory) if n.endswith(".json"))


def named(store: DecisionStore, decision: Decision) -> list[str]:
    """Files in ``decisions/`` named after ``decision`` (its file and lock files)."""
    return [n for n in os.listdir(store.directory) if n.startswith(decision.id)]


def test_done_decisions_leave_the_open_directory_and_stay_readable_by_id(
    tmp_path: Path,
) -> None:
    store = DecisionStore(tmp_path)
    kept = {
        "pending": made(store, 1),
        "answered while away": made(store, 2, **ANSWER, final_shown=True),
        "outcome not shown yet": made(store, 3, **ANSWER, delivered=True),
        "a late Allow nobody took": made(
            store, 4, **{**ANSWER, "answer": "allow"}, kind="approval", final_shown=True
        ),
    }
    gone = {
        "answered and delivered": done(store, 5),
        "cancelled": made(store, 6, status="cancelled", final_shown=True),
        "expired, its card never edited, a month ago": made(
            store, 7, day="20261020", status="expired", answered_at="2026-10-20T16:00:00+00:00"
        ),
        "an approval denied": made(
            store, 8, **{**ANSWER, "answer": "deny"}, kind="approval", final_shown=True
        ),
    }
    before = {d.id: store.load(d.id) for d in [*kept.values(), *gone.values()]}

    assert store.sweep(now=NOW) == len(gone)

    assert [d.id for d in store.open_decisions()] == sorted(d.id for d in kept.values())
    assert open_names(store) == sorted(f"{d.id}.json" for d in kept.values())
    for decision in gone.values():
        assert named(store, decision) == []  # its lock files went with it
        where = store.done / f"{decision.id[:4]}-{decision.id[4:6]}" / f"{decision.id}.json"
        assert where.exists()
    assert {d.id: store.load(d.id) for d in before.values()} == before
    assert sorted(d.id for d in store.history()) == sorted(d.id for d in gone.values())
    assert store.done_count() == len(gone)
    assert store.sweep(now=NOW) == 0  # nothing more to move


def test_a_done_decision_is_changed_where_it_is(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    decision = done(store, 1)
    store.sweep(now=NOW)
    stored, written = store.update(
        decision.id, lambda d: d.replace(refusal_replied_to=("500000000000000001",))
    )
    assert written
    assert stored.refusal_replied_to == ("500000000000000001",)
    assert store.load(decision.id) == stored
    assert store.open_decisions() == []
    assert named(store, decision) == []  # not even a lock file for it


def test_a_thread_a_session_and_an_approval_session_find_their_done_decisions(
    tmp_path: Path,
) -> None:
    store = DecisionStore(tmp_path)
    first = done(store, 1)
    second = made(store, 2)  # still open, in the same thread
    store.update(second.id, lambda d: d.replace(thread_id=first.thread_id))
    request = ToolRequest(
        client="claude", tool_name="Bash", tool_input={"command": "npm test"}, session_id="cc-7"
    )
    allowed = done(
        store, 3, kind="approval", approval=request.to_json(), scope="session", answer="allow"
    )
    store.sweep(now=NOW)

    assert [d.id for d in store.in_thread(first.thread_id)] == [first.id, second.id]
    assert [d.id for d in store.of_asker("s1")] == [first.id, second.id, allowed.id]
    [found] = store.of_approval_session("claude", "cc-7")
    assert found.id == allowed.id
    # Its session rule still answers the same request again, without asking.
    rule = precedent(store, request)
    assert rule is not None
    assert (rule.how, rule.decision.id) == ("rule", allowed.id)


def test_routing_a_note_in_a_done_questions_thread_reads_only_that_thread(
    tmp_path: Path,
) -> None:
    store = DecisionStore(tmp_path)
    for n in range(1, 40):
        done(store, n)
    answered = done(store, 40, handled_message_ids=("600000000000000001",))
    store.sweep(now=NOW)
    reader = Counting(tmp_path)

    async def route(message_id: str) -> tuple[str, str | None, str | None]:
        decisions = await thread_decisions(reader, answered.thread_id, CHANNEL)
        found = destination(
            {
                "id": message_id,
                "channel_id": answered.thread_id,
                "author": {"id": OWNER},
                "content": "and tag the release",
            },
            answered.thread_id,
            decisions,
            channel=CHANNEL,
            owners={OWNER},
            run_thread=False,
        )
        return found.kind, found.project, found.project_key

    # A note after the answer goes to the question's project, by its identity ...
    assert asyncio.run(route("600000000000000002")) == ("inbox", "proj", "/work/proj")
    # ... while the answer itself, read again on a catch-up, is nobody's note.
    assert asyncio.run(route("600000000000000001"))[0] == "ignore"
    assert set(reader.parsed) == {answered.id}


def test_the_session_start_hook_reads_no_done_decision(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    for n in range(1, 60):
        done(store, n)
    away = made(store, 60, **ANSWER, final_shown=True)
    store.sweep(now=NOW)
    reader = Counting(tmp_path)
    answer = session_start.decide(reader, {"session_id": "x", "cwd": str(tmp_path)}, lambda d: True)
    assert answer is not None
    assert away.id in json.dumps(answer)
    assert set(reader.parsed) == {away.id}


def test_a_decision_someone_waits_on_stays_where_it_is(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    decision = done(store, 1)
    hold = store.hold_waiting(decision.id)
    try:
        assert store.sweep(now=NOW) == 0
    finally:
        hold.release()
    assert store.sweep(now=NOW) == 1


KILLER = """
import os, signal, sys
from datetime import datetime, UTC
from pathlib import Path
from discord_mcp.decisions.store import DecisionStore

calls = 0

def stop():
    global calls
    calls += 1
    if calls == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
    return False

DecisionStore(Path(sys.argv[1])).sweep(now=datetime(2026, 11, 22, 18, tzinfo=UTC), stop=stop)
"""


@pytest.mark.parametrize("kill_at", [3, 200, 550])
def test_a_sweep_killed_half_way_loses_nothing_and_the_next_one_finishes(
    tmp_path: Path, kill_at: int
) -> None:
    store = DecisionStore(tmp_path, durable=False)
    everything = [done(store, n) for n in range(1, 601)]
    everything += [made(store, n) for n in range(601, 611)]  # open ones stay
    killed = subprocess.run(
        [sys.executable, "-c", KILLER, str(tmp_path), str(kill_at)], check=False, timeout=120
    )
    assert killed.returncode == -9  # killed inside the sweep, between two moves

    moved_before = DecisionStore(tmp_path).done_count()
    assert 0 < moved_before < 600
    assert DecisionStore(tmp_path).sweep(now=NOW) == 600 - moved_before

    fresh = DecisionStore(tmp_path)
    for decision in everything:
        assert fresh.load(decision.id) == decision
        assert [d.id for d in fresh.in_thread(decision.thread_id)] == [decision.id]
    assert sorted(d.id for d in fresh.open_decisions()) == [d.id for d in everything[600:]]
    assert fresh.done_count() == 600
    assert len(list(fresh.history())) == 600
    for decision in everything[:600]:
        assert named(fresh, decision) == []


def test_retirable_keeps_a_card_to_show_for_a_week_after_its_answer() -> None:
    answered_at = NOW - timedelta(days=archive.RESHOW_FINAL_DAYS, hours=-1)
    decision = make_decision(**ANSWER, delivered=True).replace(answered_at=answered_at.isoformat())
    assert not archive.retirable(decision, NOW)
    assert archive.retirable(decision, NOW + timedelta(hours=2))
    assert archive.retirable(decision.replace(final_shown=True), NOW)
