"""How long a run's agent waited for the owner, from the decision files of its thread."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from discord_mcp.decisions.model import Decision, Status
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.watch.waiting import owner_wait, waited_seconds

START = datetime(2026, 11, 23, 12, 0, tzinfo=UTC).timestamp()


def at(seconds: float) -> str:
    return datetime.fromtimestamp(START + seconds, UTC).isoformat(timespec="milliseconds")


def decision(
    n: int,
    asked: float,
    answered: float | None = None,
    *,
    thread: str = "700000000000000001",
    status: Status | None = None,
) -> Decision:
    stamp = datetime.fromtimestamp(START + asked, UTC).strftime("%Y%m%d-%H%M%S")
    return Decision(
        id=f"{stamp}-{n:06x}",
        project="app",
        session="s",
        question=f"Question {n}?",
        context=None,
        options=("Yes", "No"),
        channel_id="600000000000000001",
        thread_id=thread,
        card_message_id="800000000000000001",
        thread_url="https://discord.com/channels/1/2",
        asked_at=at(asked),
        status=status or ("answered" if answered is not None else "pending"),
        answered_at=at(answered) if answered is not None else None,
    )


def test_a_pending_question_counts_until_now_and_an_answered_one_until_its_answer() -> None:
    decisions = [decision(1, 10, 70), decision(2, 100)]
    assert waited_seconds(decisions, "700000000000000001", START, START + 130) == 60 + 30


def test_questions_asked_before_the_job_or_in_other_threads_do_not_count() -> None:
    decisions = [
        decision(1, -50, 40),  # asked before this job started
        decision(2, 5, 25, thread="700000000000000002"),
        decision(3, 10, 20),
    ]
    assert waited_seconds(decisions, "700000000000000001", START, START + 100) == 10


def test_overlapping_questions_count_once() -> None:
    decisions = [decision(1, 10, 50), decision(2, 30, 70), decision(3, 60, 65)]
    assert waited_seconds(decisions, "700000000000000001", START, START + 100) == 60


def test_a_cancelled_question_counts_until_it_was_withdrawn() -> None:
    withdrawn = decision(1, 10, 25, status="cancelled")
    assert waited_seconds([withdrawn], "700000000000000001", START, START + 100) == 15


async def test_the_probe_reads_the_decision_files(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path)
    for made in (decision(1, -3600, -3500), decision(2, 10, 40), decision(3, 50)):
        await store.acreate(made)
    probe = owner_wait(store, lambda: START + 80)
    assert await probe("700000000000000001", START) == 30 + 30
