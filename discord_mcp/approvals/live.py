"""A click on an approval card, answered by whichever process holds the gateway.

Called through the approval :class:`~discord_mcp.approvals.kind.ApprovalKind` once the clicked
card turned out to be an approval; returns the interaction callback Discord needs within 3
seconds: the card showing the outcome (type 7), the note modal (type 9), or a private refusal
(type 4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from discord_mcp.approvals.acp_parts import OPTION_PART
from discord_mcp.approvals.cards import note_modal, note_text, render_final
from discord_mcp.approvals.judging import judge_click
from discord_mcp.decisions.clicks import settle_click
from discord_mcp.decisions.model import Decision

if TYPE_CHECKING:
    from discord_mcp.decisions.clicks import ClickHost

MODAL_SUBMIT = 5


async def answer_approval_click(
    host: ClickHost,
    decision: Decision,
    data: dict[str, Any],
    part: str,
    user_id: str,
    username: str,
) -> dict[str, Any]:
    """The callback body for a click on (or the note modal of) an approval card."""
    owners = host.owners(decision)
    payload = data.get("data") or {}
    if part == "note" and user_id in owners:
        return note_modal(decision.id, decision.question, decision.language, decision.machine)
    if data.get("type") == MODAL_SUBMIT:
        part = "modal"
    known = ("allow", "session", "deny", "modal")
    if part not in known and not OPTION_PART.match(part):
        part = "unknown"
    verdict = judge_click(
        decision,
        user_id,
        username,
        owners,
        part=part,
        note=note_text(payload) if part == "modal" else None,
    )
    return await settle_click(
        host,
        decision,
        verdict,
        refused="approval.refused_click",
        render=render_final,
        no_answer="approval.no_answer",
    )
