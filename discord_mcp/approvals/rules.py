"""Answers an approval request may already have: a session rule, or an unused late Allow.

Both come from earlier approvals in the store (no separate rule file): an approval answered
"Allow for this session" is a rule for later requests of the same CLI session that its rule
covers (:func:`~discord_mcp.approvals.request.rule_matches`); an approval allowed after its
agent had stopped waiting lets the next identical request of that session run once. Blocking
(it reads every decision file): call these off the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from discord_mcp.approvals.request import ToolRequest, rule_matches
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore


@dataclass(frozen=True, slots=True)
class Precedent:
    """An earlier approval that answers a request: ``rule`` (for this session) or ``late``."""

    how: Literal["rule", "late"]
    decision: Decision


def _same_session(decision: Decision, request: ToolRequest) -> bool:
    approval = decision.approval or {}
    return (
        decision.kind == "approval"
        and bool(request.session_id)
        and approval.get("client") == request.client
        and approval.get("session_id") == request.session_id
    )


def precedent(store: DecisionStore, request: ToolRequest) -> Precedent | None:
    """The newest earlier approval that answers ``request`` without asking, if any."""
    fingerprint = request.fingerprint()
    for decision in reversed(store.all()):
        if not _same_session(decision, request):
            continue
        if decision.status != "answered" or decision.answer != "allow":
            continue
        approval = decision.approval or {}
        same = approval.get("fingerprint") == fingerprint
        if decision.scope == "session":
            rule = str((approval.get("action") or {}).get("rule") or "")
            if rule_matches(rule, request) if rule else same:
                return Precedent("rule", decision)
        if decision.gave_up_at and not decision.delivered and same:
            return Precedent("late", decision)
    return None


def consume_late(store: DecisionStore, decision_id: str) -> bool:
    """Use up a late Allow (it answers one retry). True if this call used it."""

    def use(current: Decision) -> Decision | None:
        return None if current.delivered else current.replace(delivered=True)

    _, written = store.update(decision_id, use)
    return written


def session_thread(store: DecisionStore, request: ToolRequest, project: str) -> str | None:
    """The thread where this session's approvals are asked, once it has one."""
    for decision in reversed(store.all()):
        if decision.project == project and decision.thread_id and _same_session(decision, request):
            return decision.thread_id
    return None
