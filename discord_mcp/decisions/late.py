"""Late answers reach the run that asked: what ``discord-watch`` does when the owner answers a
run's question after its agent stopped listening.

A question asked by a run's discord-mcp server (``from_run``, from ``DISCORD_MCP_RUN``) is
*due* once it is answered and no agent has received the answer (``delivered`` is false). It is
claimed only while its asker is gone and no call waits on it
(:meth:`~discord_mcp.decisions.store.DecisionStore.update_if_away`): the run's agent gave up
waiting and its job ended, which ends its server and so its lease. While the job still runs,
the answer stays with it (a waiting call gets it, and an agent that stopped waiting may still
call ``wait_decision``); the run is resumed once the job has ended without it.

:func:`claim` is the one way a late answer resumes a run, for questions and for late Allows
of approvals (:mod:`discord_mcp.approvals.resume`) alike: it records ``resumed_at`` under the
decision file's lock, so a restart of the daemon or a second look never resumes twice, and
marks a question delivered in the same step, so no other session (``check_pending``, a
``SessionStart`` hook) is handed the same answer. Blocking (reads and writes decision files):
call these off the event loop.
"""

from __future__ import annotations

from collections.abc import Callable

from discord_mcp.decisions.model import Decision, utc_now
from discord_mcp.decisions.store import DecisionStore


def is_due(decision: Decision) -> bool:
    """A run's question, answered, that no agent has received and no run was resumed with."""
    return (
        decision.kind == "question"
        and decision.from_run
        and decision.status == "answered"
        and not decision.delivered
        and decision.resumed_at is None
    )


def due(store: DecisionStore) -> list[Decision]:
    """Runs' questions answered after their agents stopped listening (asker liveness is checked
    when claiming)."""
    return [decision for decision in store.open_decisions() if is_due(decision)]


def claim(
    store: DecisionStore,
    decision_id: str,
    due_now: Callable[[Decision], bool] = is_due,
    *,
    away: bool = True,
) -> Decision | None:
    """Record that this late answer resumes its run; the decision if this call claimed it.

    Args:
        due_now: whether the decision (as read under the lock) may resume its run.
        away: only while its asker is gone and no call waits on it (a question's answer
            belongs to a job that still runs); an approval's asker said it gave up already.
    """

    def mark(current: Decision) -> Decision | None:
        if current.resumed_at is not None or not due_now(current):
            return None
        # The resumed session is told a question's answer: no one else may be handed it.
        delivered = current.delivered or current.kind == "question"
        return current.replace(resumed_at=utc_now(), delivered=delivered)

    if away:
        return store.update_if_away(decision_id, mark)
    stored, written = store.update(decision_id, mark)
    return stored if written else None


def answer_words(decision: Decision) -> str:
    """The owner's answer in words: the chosen option (with its letter), or their text."""
    if decision.selected_option is not None and decision.selected_index is not None:
        letter = chr(ord("A") + decision.selected_index) if decision.selected_index < 26 else ""
        return f"{letter}) {decision.selected_option}" if letter else decision.selected_option
    return decision.answer or decision.selected_option or ""


def files_line(decision: Decision) -> str:
    """The answer's files, by name, and how to get them (empty when there are none)."""
    names = [str(a.get("filename") or "file") for a in decision.attachments]
    if not names:
        return ""
    return (
        f"Files attached to the answer: {', '.join(names)}. Call wait_decision with decision_id "
        f"{decision.id!r} to get local copies you can open."
    )


def resume_prompt(decision: Decision) -> str:
    """What the resumed session is told: the owner's answer to its earlier question."""
    who = decision.answered_by_name or "the owner"
    lines = [
        f"This is the owner's answer to the question you asked earlier with ask_decision "
        f"(decision {decision.id}); it arrived after you had stopped waiting for it.",
        f"Question: {decision.question}",
        f"Answer from {who}: {answer_words(decision)}",
    ]
    if line := files_line(decision):
        lines.append(line)
    lines.append(
        "The answer is final: act on it now as you would have when it arrived, then carry on "
        "with the task."
    )
    return "\n".join(lines)


def announcement(decision: Decision) -> str:
    """The thread message that starts the resumed job."""
    return (
        "\u25b6\ufe0f Answered after the agent stopped waiting: resuming the session with the "
        f"answer (decision `{decision.id}`)."
    )
