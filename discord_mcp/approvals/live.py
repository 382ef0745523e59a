"""A click on an approval card, answered by whichever process holds the gateway.

Called from :func:`discord_mcp.decisions.live.answer_click` once the clicked card turned out to
be an approval; returns the interaction callback Discord needs within 3 seconds: the card
showing the outcome (type 7), the note modal (type 9), or a private refusal (type 4).
"""

from __future__ import annotations

import logging
from typing import Any

from discord_mcp.approvals.cards import note_modal, note_text, render_final
from discord_mcp.approvals.judging import judge_click
from discord_mcp.decisions.interactive import ephemeral, update_card
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.service import DecisionService

log = logging.getLogger(__name__)


async def answer_approval_click(
    service: DecisionService,
    decision: Decision,
    data: dict[str, Any],
    part: str,
    user_id: str,
    username: str,
) -> dict[str, Any]:
    """The callback body for a click on (or the note modal of) an approval card."""
    owners = service.owners(decision)
    payload = data.get("data") or {}
    if part == "note" and user_id in owners:
        return note_modal(decision.id, decision.question)
    if data.get("type") == 5:
        part = "modal"
    verdict = judge_click(
        decision,
        user_id,
        username,
        owners,
        part=part if part in ("allow", "session", "deny", "modal") else "unknown",
        note=note_text(payload) if part == "modal" else None,
    )
    if verdict.kind == "refuse":
        attempt = verdict.changes["refused"][-1]
        await service.store.aupdate(
            decision.id, lambda current: current.replace(refused=(*current.refused, attempt))
        )
        return ephemeral(
            "Only " + ", ".join(f"<@{o}>" for o in sorted(owners)) + " can answer this "
            "approval; your click was recorded but not used."
        )
    if verdict.kind != "resolve":
        return ephemeral("That did not answer the approval; try again.")
    stored, won = await service.store.afinish(decision.id, **verdict.changes)
    if not won:
        who = stored.answered_by_name or "the owner"
        return ephemeral(f"This was already answered ({stored.selected_option}, by {who}).")
    log.info("approval %s answered %s via %s", stored.id, stored.answer, stored.via)
    service.notify_waiters(stored.id)
    return update_card(render_final(stored))
