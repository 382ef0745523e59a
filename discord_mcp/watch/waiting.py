"""How long a run's agent has waited for the owner: the job clock stops meanwhile.

A run's discord-mcp server asks in the run's own thread (``DISCORD_THREAD_ID``), so the
decisions of that thread asked after the job started are the agent's waits: each from its
question until its answer (or cancellation, or expiry), or until now while it is pending; a
tool approval until the agent stopped waiting for it, if it did (``gave_up_at``).
Overlapping waits count once. The decision files are the record, so the count survives a
daemon restart (a reattached job keeps the time it waited before).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.runs import OwnerWait
from discord_mcp.state.files import off_loop


def waited_seconds(
    decisions: Iterable[Decision], thread_id: str, since: float, now: float
) -> float:
    """Seconds between ``since`` and ``now`` (wall clock) during which a decision asked in
    ``thread_id`` after ``since`` was open."""
    spans: list[tuple[float, float]] = []
    for decision in decisions:
        if decision.thread_id != thread_id:
            continue
        asked = _seconds(decision.asked_at)
        if asked is None or asked < since:
            continue  # asked before this job: not this job's wait
        ended = now if decision.status == "pending" else _seconds(decision.answered_at)
        if decision.gave_up_at:  # an approval whose agent stopped waiting (told no answer)
            ended = _seconds(decision.gave_up_at)
        end = min(now, ended if ended is not None else now)
        if end > asked:
            spans.append((asked, end))
    total, reach = 0.0, since
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def owner_wait(store: DecisionStore, wall: Callable[[], float]) -> OwnerWait:
    """The run engine's ``owner_wait``, from the decision files (read off the event loop)."""

    async def probe(thread_id: str, since: float) -> float:
        decisions = await off_loop(asked_since, store, thread_id, since)
        return waited_seconds(decisions, thread_id, since, wall())

    return probe


def asked_since(store: DecisionStore, thread_id: str, since: float) -> list[Decision]:
    """The decisions of ``thread_id`` (open or done) whose id (which starts with the UTC second
    it was made) is not older than ``since``: the others cannot be this job's waits."""
    floor = datetime.fromtimestamp(since - 1, UTC).strftime("%Y%m%d-%H%M%S")
    return [d for d in store.in_thread(thread_id) if d.id[:15] >= floor]


def _seconds(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
