"""A late Allow resumes the run: what ``discord-watch`` does when the owner allows a tool call
after its agent was told no one answered.

The approval must come from a run (``resume`` in its request, from ``DISCORD_MCP_RUN``), be
answered ``allow`` after ``gave_up_at``, and not be resumed yet; claiming it records
``resumed_at`` under the file's lock (:func:`discord_mcp.decisions.late.claim`, the one claim
for every late answer that resumes a run; files from before it have ``resumed_at`` in the
approval), so a restart or a second check never resumes twice. The resumed session's retry
of the same call then runs without asking (the late Allow answers that one retry, see
:mod:`~discord_mcp.approvals.rules`). Blocking (reads and writes decision files): call these
off the event loop.
"""

from __future__ import annotations

from discord_mcp.approvals.cards import action_of
from discord_mcp.decisions import late
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore


def is_due(decision: Decision) -> bool:
    approval = decision.approval or {}
    return (
        decision.kind == "approval"
        and bool(approval.get("resume"))
        and decision.status == "answered"
        and decision.answer == "allow"
        and decision.gave_up_at is not None
        and decision.resumed_at is None
        and not approval.get("resumed_at")
    )


def due(store: DecisionStore) -> list[Decision]:
    """Late Allows of runs' approvals that have not resumed their run yet."""
    return [decision for decision in store.open_decisions() if is_due(decision)]


def claim(store: DecisionStore, decision_id: str) -> Decision | None:
    """Mark the approval as resumed; the decision if this call claimed it, else None."""
    # Its asker told the agent no one answered: the Allow is nobody else's, asker alive or not.
    return late.claim(store, decision_id, is_due, away=False)


def resume_prompt(decision: Decision) -> str:
    """What the resumed session is told."""
    action = action_of(decision)
    tool = str((decision.approval or {}).get("tool_name") or "the tool")
    what = action.get("command") or action.get("path")
    call = f"`{tool}`" + (f" with `{what}`" if what else "")
    who = decision.answered_by_name or "the owner"
    return (
        f"{who} has now approved the tool call you asked for earlier: {call}. It was not run "
        "then because no one answered in time. You may retry it now, exactly as before; it "
        "will run without asking again. Then carry on with the task."
    )


def announcement(decision: Decision) -> str:
    """The thread message that starts the resumed job."""
    tool = str((decision.approval or {}).get("tool_name") or "tool")
    return (
        f"\u25b6\ufe0f `{tool}` was allowed after the agent stopped waiting: resuming the "
        f"session to tell it (approval `{decision.id}`)."
    )
