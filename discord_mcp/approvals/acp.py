"""An ACP agent's ``session/request_permission`` as the project's approval card.

Mapping. The agent offers its own options, each with a ``kind``; they become the card's
buttons where one fits:

================  ===========================  =========================================
card button       the agent's option            reply / reaction
================  ===========================  =========================================
Allow once        ``allow_once``               yes / ✅
Allow for this    ``allow_always``             (button only)
session
Deny              ``reject_once`` (else        no / ❌
                  ``reject_always``)
Deny with a       the same reject option; the  (button only)
note…             note is shown on the card
                  and sent in ``_meta``
================  ===========================  =========================================

Every other option (a second allow, ``reject_always`` beside ``reject_once``, a kind the
protocol adds later) is a button of its own with the agent's name for it. A button is shown only
for an option that exists, so a click always means one of the agent's options.

Fail closed: no answer within the approval wait, an answer that maps to no option, a cancelled
card or any error is ``cancelled`` (the agent does not run the tool), never an allow. A
precedent (a session rule from an earlier "Allow for this session") allows once. The card, the
wait, owner-only answering and the audit are the approval service's, as for the hooks.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from discord_mcp.approvals.acp_parts import REJECTS, card_options
from discord_mcp.approvals.asks import PermissionAsk, PermissionChoice, PermissionOption
from discord_mcp.approvals.request import ToolRequest
from discord_mcp.approvals.service import ApprovalService, Outcome
from discord_mcp.config import Settings, project_key_for
from discord_mcp.decisions.service import DecisionService
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)


def choice(outcome: Outcome, options: Sequence[PermissionOption]) -> PermissionChoice:
    """The agent's option for the approval's outcome (None: cancelled)."""
    decision = outcome.decision
    by_id = {o.option_id: o for o in options}
    if outcome.how not in ("owner", "rule", "late", "second ask"):
        return PermissionChoice(None, reason=outcome.message or "no answer")
    if decision is not None and outcome.how == "owner":
        picked = (decision.approval or {}).get("acp_choice")
        if isinstance(picked, str) and picked in by_id:
            return PermissionChoice(picked, note=decision.note)
    if outcome.behavior == "allow":
        scope = decision.scope if decision is not None and outcome.how == "owner" else "once"
        kinds = ("allow_always",) if scope == "session" else ("allow_once", "allow_always")
        if outcome.how != "owner":
            kinds = ("allow_once",)
        for kind in kinds:
            found = next((o for o in options if o.kind == kind), None)
            if found is not None:
                return PermissionChoice(found.option_id)
        return PermissionChoice(None, reason="the agent offered no option for that answer")
    reject = next((o for kind in REJECTS for o in options if o.kind == kind), None)
    note = decision.note if decision is not None else None
    if reject is None:
        return PermissionChoice(None, reason=outcome.message, note=note)
    return PermissionChoice(reject.option_id, reason=outcome.message, note=note)


def tool_request(ask: PermissionAsk) -> ToolRequest:
    """The approval request for an ACP permission ask (a shell command when it runs one)."""
    raw = dict(ask.raw_input)
    command = raw.get("command")
    if ask.kind == "execute" and (isinstance(command, str | list) or not raw):
        name = "shell"
        if not raw:
            raw = {"command": ask.title}
    else:
        name = _tool_name(ask)
        if ask.diffs:  # the edits it showed: the card shows them as a diff
            shown = [
                {"path": d.path, "old_text": d.old_text, "new_text": d.new_text} for d in ask.diffs
            ]
            raw = {**(raw or {"title": ask.title}), "acp_diffs": shown}
        elif ask.kind == "edit" and raw:
            raw = {**raw, "acp_edit": True}
    return ToolRequest(
        client="acp",
        tool_name=name,
        tool_input=raw or {"title": ask.title},
        session_id=ask.session_id,
        cwd=ask.cwd,
        route="acp",
        tool_use_id=ask.tool_call_id or None,
        event="session/request_permission",
    )


def _tool_name(ask: PermissionAsk) -> str:
    title = " ".join(ask.title.split())[:60]
    return f"{ask.agent}: {title}" if title else f"{ask.agent}: {ask.kind}"


class AcpPermissions:
    """The engine's :data:`~discord_mcp.approvals.asks.PermissionAsker`, on approval cards."""

    def __init__(self, *, settings: Settings, decisions: DecisionService, rest: RestClient) -> None:
        self._settings = settings
        self._decisions = decisions
        self._rest = rest

    async def __call__(self, ask: PermissionAsk) -> PermissionChoice:
        try:
            return await self._ask(ask)
        except Exception as exc:  # fail closed, with the reason in the log
            log.exception("the permission request of job %s failed; cancelled", ask.job_id)
            return PermissionChoice(None, reason=f"the approval could not be asked: {exc}")

    async def _ask(self, ask: PermissionAsk) -> PermissionChoice:
        settings = dataclasses.replace(
            self._settings,
            thread_id=ask.thread_id,
            project_name=ask.project_name,
            project_key=project_key_for(ask.project_name, Path(ask.cwd or ".")),
        )
        service = ApprovalService(settings=settings, decisions=self._decisions, rest=self._rest)
        extra: Mapping[str, Any] = {
            "acp": {"agent": ask.agent, "title": ask.title, "kind": ask.kind},
            "acp_options": card_options(ask.options),
        }
        outcome = await service.decide(
            tool_request(ask),
            max_wait=settings.approval_wait_seconds,
            label=f"{ask.agent} · job {ask.job_id}",
            extra=extra,
        )
        picked = choice(outcome, ask.options)
        log.info(
            "ACP permission for %s in job %s: %s (%s)",
            ask.title or ask.kind,
            ask.job_id,
            picked.option_id or "cancelled",
            outcome.how,
        )
        return picked
