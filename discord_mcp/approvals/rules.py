"""Answers an approval request may already have: a session rule, or an unused late Allow.

All come from earlier approvals in the store (no separate rule file): an approval answered
"Allow for this session" is a rule for later requests of the same CLI session that its rule
covers (:func:`~discord_mcp.approvals.request.rule_matches`); an approval allowed after its
agent had stopped waiting lets the next identical request of that session run once; and, for
Codex, an Allow given in the last :data:`RECENT_S` seconds answers the same call asked again
(the same command in the same session: Codex's second ask for one call). Blocking
(it reads every decision file): call these off the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from discord_mcp.approvals.request import SHELL_TOOLS, ToolRequest, rule_matches
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore

RECENT_S = 120.0
"""An Allow answers the same call again for this long (Codex asks twice for a command that must
leave its sandbox: its ``PreToolUse``, then its ``PermissionRequest``)."""


@dataclass(frozen=True, slots=True)
class Precedent:
    """An earlier approval that answers a request: ``rule`` (for this session), ``late`` (an
    Allow after its agent stopped waiting) or ``recent`` (the same call, just allowed)."""

    how: Literal["rule", "late", "recent"]
    decision: Decision


def _same_session(decision: Decision, request: ToolRequest) -> bool:
    approval = decision.approval or {}
    return (
        decision.kind == "approval"
        and bool(request.session_id)
        and approval.get("client") == request.client
        and approval.get("session_id") == request.session_id
    )


def precedent(
    store: DecisionStore, request: ToolRequest, now: datetime | None = None
) -> Precedent | None:
    """The newest earlier approval that answers ``request`` without asking, if any."""
    fingerprint = request.fingerprint()
    now = now or datetime.now(UTC)
    command = describe_command(request)
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
        if (
            not decision.gave_up_at
            and decision.answered_at
            and (same or _same_command(decision, command))
        ):
            answered = datetime.fromisoformat(decision.answered_at)
            if timedelta(0) <= now - answered <= timedelta(seconds=RECENT_S):
                return Precedent("recent", decision)
    return None


def describe_command(request: ToolRequest) -> str | None:
    """The shell command a request runs, if it runs one."""
    if request.tool_name not in SHELL_TOOLS:
        return None
    value = request.tool_input.get("command", request.tool_input.get("cmd"))
    return value if isinstance(value, str) else None


def _same_command(decision: Decision, command: str | None) -> bool:
    action = (decision.approval or {}).get("action") or {}
    return command is not None and action.get("command") == command


def consume_late(store: DecisionStore, decision_id: str) -> bool:
    """Use up a late Allow (it answers one retry). True if this call used it."""

    def use(current: Decision) -> Decision | None:
        return None if current.delivered else current.replace(delivered=True)

    _, written = store.update(decision_id, use)
    return written


def session_thread(
    store: DecisionStore, request: ToolRequest, owns: Callable[[Decision], bool]
) -> str | None:
    """The thread where this session's approvals are asked, once it has one (``owns``: the
    decision belongs to this project)."""
    for decision in reversed(store.all()):
        if owns(decision) and decision.thread_id and _same_session(decision, request):
            return decision.thread_id
    return None
