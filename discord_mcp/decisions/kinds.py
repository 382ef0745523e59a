"""The one place where a decision's kind chooses its card and its judging.

Posting, reading, live clicks and final edits are the same for every decision (one store, one
thread reader, one poster); only what the card says, which buttons it has and how a reply or a
reaction is read differ between a ``question`` and an ``approval``
(:mod:`discord_mcp.approvals`). Approval modules are imported on first use: nothing in the
decision machinery depends on them at import time.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from typing import Any

from discord_mcp.decisions import answers, cards
from discord_mcp.decisions.interactive import card_components
from discord_mcp.decisions.model import Decision


def render_card(decision: Decision, owner_ids: Iterable[str], *, buttons: bool) -> str:
    if decision.kind == "approval":
        from discord_mcp.approvals import cards as approval_cards

        return approval_cards.render_card(decision, owner_ids, buttons=buttons)
    return cards.render_card(decision, owner_ids, buttons=buttons)


def render_final(decision: Decision) -> str:
    if decision.kind == "approval":
        from discord_mcp.approvals import cards as approval_cards

        return approval_cards.render_final(decision)
    return cards.render_final(decision)


def components(decision: Decision) -> list[dict[str, Any]]:
    if decision.kind == "approval":
        from discord_mcp.approvals import cards as approval_cards

        return approval_cards.components(decision.id)
    return card_components(decision.id, decision.options)


def judge_message(
    decision: Decision, message: dict[str, Any], owner_ids: Set[str]
) -> answers.Verdict:
    if decision.kind == "approval":
        from discord_mcp.approvals import judging

        return judging.judge_message(decision, message, owner_ids)
    return answers.judge_message(decision, message, owner_ids, None)


def judge_reaction(
    decision: Decision, user_id: str, username: str, emoji: str, owner_ids: Set[str]
) -> answers.Verdict:
    if decision.kind == "approval":
        from discord_mcp.approvals import judging

        return judging.judge_reaction(decision, user_id, username, emoji, owner_ids)
    return answers.judge_reaction(decision, user_id, username, emoji, owner_ids)
