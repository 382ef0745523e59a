"""Decision files: one resolution per decision, whoever sees the answer first."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from discord_mcp.decisions.model import Decision, new_decision_id
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DecisionNotFound, StateCorrupt


def make_decision(**overrides: object) -> Decision:
    values: dict[str, object] = {
        "id": new_decision_id(),
        "project": "proj",
        "session": "s1",
        "question": "Deploy now?",
        "context": None,
        "options": ("Yes", "No"),
        "channel_id": "100000000000000001",
        "thread_id": "100000000000000002",
        "card_message_id": "100000000000000003",
        "thread_url": "https://discord.com/channels/1/100000000000000002",
        "asked_at": "2026-11-22T16:00:00.000+00:00",
    }
    values.update(overrides)
    return Decision(**values)  # type: ignore[arg-type]


def test_a_decision_round_trips_through_its_file(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    decision = make_decision(reaction_emojis=("✅", "❌"))
    store.create(decision)
    assert store.load(decision.id) == decision
    assert store.open_decisions() == [decision]


def test_unknown_or_malformed_ids_are_not_found(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    with pytest.raises(DecisionNotFound):
        store.load("20260101-000000-abcdef")
    with pytest.raises(DecisionNotFound):
        store.load("../../etc/passwd")


def test_finish_is_a_compare_and_set(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    decision = make_decision()
    store.create(decision)
    first, won = store.finish(decision.id, status="answered", answer="Yes", selected_index=0)
    assert won
    assert first.status == "answered"
    second, won_again = store.finish(decision.id, status="cancelled")
    assert not won_again
    assert second.status == "answered"
    assert second.answer == "Yes"


def test_a_corrupt_decision_file_is_moved_aside_and_others_still_list(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    good = make_decision()
    store.create(good)
    bad = make_decision(id=new_decision_id())
    store.create(bad)
    store.path(bad.id).write_text('{"version": 1, "id": "x"}', encoding="utf-8")
    assert store.open_decisions() == [good]
    with pytest.raises(DecisionNotFound):
        store.load(bad.id)
    assert any(p.name.startswith(f"{bad.id}.json.corrupt-") for p in store.directory.iterdir())


def test_reading_a_corrupt_file_says_where_it_went(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    decision = make_decision()
    store.create(decision)
    store.path(decision.id).write_text("garbage", encoding="utf-8")
    with pytest.raises(StateCorrupt, match="moved to"):
        store.load(decision.id)


def _race(home: str, decision_id: str, who: str) -> None:
    _stored, won = DecisionStore(Path(home)).finish(
        decision_id, status="answered", answer=who, answered_by=who
    )
    raise SystemExit(0 if won else 3)


def test_exactly_one_of_many_processes_resolves_a_decision(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    decision = make_decision()
    store.create(decision)
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_race, args=(str(tmp_path), decision.id, f"p{i}")) for i in range(6)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    exit_codes = [worker.exitcode for worker in workers]
    assert sorted(exit_codes) == [0, 3, 3, 3, 3, 3]
    winner = f"p{exit_codes.index(0)}"
    assert store.load(decision.id).answered_by == winner


def test_an_answer_records_whether_a_call_was_waiting_for_it(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    waited, alone = make_decision(), make_decision()
    store.create(waited)
    store.create(alone)
    hold = store.hold_waiting(waited.id)
    try:
        first, _ = store.finish(waited.id, status="answered", answer="yes")
    finally:
        hold.release()
    second, _ = store.finish(alone.id, status="answered", answer="yes")
    assert (first.asker_waiting, second.asker_waiting) == (True, False)
    assert store.load(waited.id).asker_waiting
