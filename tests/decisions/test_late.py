"""A run's question answered after its agent stopped listening: claimed once, only when its asker
is gone and nobody waits on it, and told to the resumed session as the owner's answer."""

from __future__ import annotations

from pathlib import Path

from discord_mcp.decisions import late
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.state.leases import ProcessLease
from tests.decisions.test_store import make_decision


def answered(store: DecisionStore, number: int, **changes: object) -> str:
    values: dict[str, object] = {
        "id": f"20261123-1200{number:02d}-abcdef",
        "from_run": True,
        "status": "answered",
        "answer": "B",
        "selected_option": "Squash the commits",
        "selected_index": 1,
        "answered_by_name": "Ann",
    }
    decision = make_decision(**{**values, **changes})
    store.create(decision)
    return decision.id


def test_a_runs_answered_question_is_claimed_once_and_marked_delivered(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    decision_id = answered(store, 1)
    assert [d.id for d in late.due(store)] == [decision_id]
    claimed = late.claim(store, decision_id)
    assert claimed is not None
    assert claimed.resumed_at is not None
    assert claimed.delivered  # no other session is handed the same answer
    assert late.claim(store, decision_id) is None
    assert late.due(store) == []
    assert store.deliver_if_away(decision_id) is None


def test_only_a_runs_answered_undelivered_questions_are_due(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    answered(store, 1, from_run=False)  # an interactive session's: check_pending's job
    answered(store, 2, delivered=True)  # its agent got it in time
    answered(store, 3, status="pending", answer=None)
    answered(store, 4, status="expired", answer=None)  # the agent's own timeout, not an answer
    assert late.due(store) == []


def test_a_question_whose_asker_still_runs_or_is_waited_on_is_not_claimed(
    tmp_path: Path,
) -> None:
    store = DecisionStore(tmp_path)
    lease = ProcessLease(tmp_path)  # the run's server, still alive: its job has not ended
    try:
        alive = answered(store, 1, asker_lease=lease.name)
        assert late.claim(store, alive) is None
    finally:
        lease.close()
    assert late.claim(store, alive) is not None  # the job ended: now it resumes the run
    waited = answered(store, 2)
    hold = store.hold_waiting(waited)  # a wait_decision call is listening
    try:
        assert late.claim(store, waited) is None
    finally:
        hold.release()
    assert late.claim(store, waited) is not None


def test_an_answer_delivered_to_another_session_first_is_not_resumed(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    decision_id = answered(store, 1)
    assert store.deliver_if_away(decision_id) is not None  # check_pending got it first
    assert late.claim(store, decision_id) is None


def test_the_resume_prompt_gives_the_question_and_the_chosen_option(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    decision_id = answered(
        store,
        1,
        attachments=({"attachment_id": "9", "filename": "plan.png", "size": 3},),
    )
    prompt = late.resume_prompt(store.load(decision_id))
    assert "owner's answer to the question you asked earlier" in prompt
    assert decision_id in prompt
    assert "Question: Deploy now?" in prompt
    assert "Answer from Ann: B) Squash the commits" in prompt
    assert "plan.png" in prompt
    assert "wait_decision" in prompt


def test_a_free_text_answer_is_quoted_as_written(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    decision_id = answered(
        store, 1, answer="ship it friday", selected_option=None, selected_index=None
    )
    assert "Answer from Ann: ship it friday" in late.resume_prompt(store.load(decision_id))
