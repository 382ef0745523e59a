"""What a run's final message says about its tool approvals: every call that was not run.

A job's approvals are those asked in its thread while it ran. A call was not run when the owner
denied it, or when no one answered in time (even if someone allowed it later: that Allow
resumes the session with a job of its own). Blocking (reads the decision files): call
:func:`not_run_during` off the event loop.
"""

from __future__ import annotations

import datetime as dt

from discord_mcp.approvals.cards import action_of, wait_words
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore

SLACK = dt.timedelta(seconds=2)
"""Clocks of the daemon and of the run's processes are the same machine's; allow a little."""


def _aware(moment: dt.datetime) -> dt.datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def not_run_during(
    store: DecisionStore, thread_id: str, started: dt.datetime | None, ended: dt.datetime | None
) -> list[Decision]:
    """Approvals of ``thread_id`` asked between ``started`` and ``ended`` whose tool did not run."""
    if started is None:
        return []
    since = _aware(started) - SLACK
    until = _aware(ended) + SLACK if ended is not None else None
    found = []
    for decision in store.in_thread(thread_id):
        if decision.kind != "approval":
            continue
        asked = _aware(dt.datetime.fromisoformat(decision.asked_at))
        if asked < since or (until is not None and asked > until):
            continue
        if decision.gave_up_at or (decision.status == "answered" and decision.answer == "deny"):
            found.append(decision)
    return found


def _what(decision: Decision) -> str:
    action = action_of(decision)
    tool = str((decision.approval or {}).get("tool_name") or "tool")
    detail = action.get("command") or action.get("path") or ""
    detail = " ".join(str(detail).split())
    if len(detail) > 80:
        detail = detail[:79] + "…"
    return f"`{tool}`" + (f" `{detail.replace('`', chr(39))}`" if detail else "")


def not_run_lines(decisions: list[Decision]) -> list[str]:
    """One line per call that was not run, saying why."""
    lines = []
    for decision in decisions:
        if decision.gave_up_at:
            why = f"no one answered within {wait_words(decision)}"
            if decision.status == "answered" and decision.answer == "allow":
                why += " (allowed later: the session is resumed to retry it)"
            elif decision.status == "pending":
                why += " (still open on its card)"
        else:
            who = decision.answered_by_name or "the owner"
            why = f"denied by {who}"
            if decision.note:
                note = " ".join(decision.note.split())
                why += f": “{note[:120]}{'…' if len(note) > 120 else ''}”"
        lines.append(f"• {_what(decision)}: {why}")
    return lines


def not_run_section(decisions: list[Decision]) -> str:
    """The final message's section, or "" when every call ran."""
    if not decisions:
        return ""
    count = len(decisions)
    head = f"\u26d4 **{count} tool call{'s' if count != 1 else ''} not run:**"
    return "\n".join([head, *not_run_lines(decisions)])
