"""Answers an approval request may already have: a session rule, a late Allow, or the Allow
of the same call's first ask.

All come from earlier approvals of the same CLI session in the store (no separate rule file):

- ``rule``: an approval answered "Allow for this session" covers later requests its rule
  covers (:func:`~discord_mcp.approvals.request.rule_matches`), or, when it has no rule,
  the same request again (the same tool doing the same thing);
- ``late``: an Allow given after its agent had stopped waiting lets the next identical
  request run, once;
- ``second ask``: Codex asks twice for a call that must leave its sandbox: its
  ``PreToolUse`` (which carries the call's ``tool_use_id``), then its ``PermissionRequest``
  for the same call (which carries only the turn's ``turn_id``). The Allow handed to the
  first ask answers the second, once: same session, same turn, same command, and only an
  Allow that was handed to a ``PreToolUse``. A call's ``PermissionRequest`` always follows
  its own ``PreToolUse`` (which asked the owner, or was answered by a rule or a late Allow,
  or let a read-only command through, which leaves no Allow to take), so a second call, even
  with the same text in the same turn, has an Allow of its own to use or asks; no Allow
  answers two calls.

Blocking (it reads this session's decision files): call these off the event loop. Files
larger than :data:`FILE_LIMIT` (written before inputs were bounded) are skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from discord_mcp.approvals.request import ToolRequest, rule_matches
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore

FILE_LIMIT = 1024 * 1024
"""Approval files are at most a few dozen kilobytes; a larger one is from before inputs were
bounded, and reading it would cost every hook its size in memory."""
FIRST_ASK = "PreToolUse"
SECOND_ASK = "PermissionRequest"


@dataclass(frozen=True, slots=True)
class Precedent:
    """An earlier approval that answers a request: ``rule`` (for this session), ``late`` (an
    Allow after its agent stopped waiting) or ``second ask`` (Codex's second ask for the call
    the Allow was handed to)."""

    how: Literal["rule", "late", "second ask"]
    decision: Decision


def session_approvals(store: DecisionStore, request: ToolRequest) -> list[Decision]:
    """This CLI session's approvals, oldest first (only their files are parsed)."""
    if not request.session_id:
        return []
    return [
        decision
        for decision in store.of_approval_session(
            request.client, request.session_id, max_bytes=FILE_LIMIT
        )
        if _same_session(decision, request)
    ]


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
    subject = request.subject()
    for decision in reversed(session_approvals(store, request)):
        if decision.status != "answered" or decision.answer != "allow":
            continue
        approval = decision.approval or {}
        if decision.scope == "session":
            rule = str((approval.get("action") or {}).get("rule") or "")
            if rule_matches(rule, request) if rule else approval.get("subject") == subject:
                return Precedent("rule", decision)
        if decision.gave_up_at and not decision.delivered:
            if approval.get("fingerprint") == fingerprint:
                return Precedent("late", decision)
        elif _first_ask_of(decision, request, subject):
            return Precedent("second ask", decision)
    return None


def _first_ask_of(decision: Decision, request: ToolRequest, subject: str) -> bool:
    """Whether ``decision``'s Allow was handed to the first ask of the call ``request`` asks
    about a second time (see the module doc)."""
    if request.client != "codex" or request.event != SECOND_ASK or not request.turn_id:
        return False
    approval = decision.approval or {}
    handed = approval.get("handed_to") or {}
    return (
        decision.delivered
        and not approval.get("second_ask_used")
        and handed.get("event") == FIRST_ASK
        and handed.get("turn_id") == request.turn_id
        and approval.get("subject") == subject
    )


def handed_to(request: ToolRequest) -> dict[str, Any]:
    """The call an Allow was handed to, as recorded on its approval."""
    return {"event": request.event, "turn_id": request.turn_id, "tool_use_id": request.tool_use_id}


def use(store: DecisionStore, found: Precedent, request: ToolRequest) -> bool:
    """Use up a one-time precedent for ``request`` (a compare-and-set: of two calls at once,
    one gets it). True if this call may run on it; a rule is never used up."""
    if found.how == "rule":
        return True

    def change(current: Decision) -> Decision | None:
        approval = dict(current.approval or {})
        if found.how == "late":
            if current.delivered:
                return None
            approval["handed_to"] = handed_to(request)
            return current.replace(delivered=True, approval=approval)
        if approval.get("second_ask_used"):
            return None
        approval["second_ask_used"] = True
        return current.replace(approval=approval)

    _, written = store.update(found.decision.id, change)
    return written


def record_handed(store: DecisionStore, decision_id: str, request: ToolRequest) -> Decision:
    """Record which call the owner's Allow was handed to (its second ask may use it)."""

    def change(current: Decision) -> Decision | None:
        approval = dict(current.approval or {})
        if approval.get("handed_to"):
            return None
        approval["handed_to"] = handed_to(request)
        return current.replace(approval=approval)

    stored, _ = store.update(decision_id, change)
    return stored


def session_thread(
    store: DecisionStore, request: ToolRequest, owns: Callable[[Decision], bool]
) -> str | None:
    """The thread where this session's approvals are asked, once it has one (``owns``: the
    decision belongs to this project)."""
    for decision in reversed(session_approvals(store, request)):
        if owns(decision) and decision.thread_id:
            return decision.thread_id
    return None
