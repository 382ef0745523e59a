"""A click on a question's card (or its "Other…" modal): the callback Discord needs in 3 s.

Runs in the gateway holder, whoever asked. The host is the process's decision service
(:class:`ClickHost`, defined here for every kind's click handler): the store to resolve in, who
may answer, and whom to wake.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from discord_mcp import i18n
from discord_mcp.decisions import cards
from discord_mcp.decisions.answers import Verdict, judge_choice
from discord_mcp.decisions.interactive import ephemeral, modal_response, modal_text, update_card
from discord_mcp.decisions.model import Decision

if TYPE_CHECKING:
    from discord_mcp.decisions.store import DecisionStore

log = logging.getLogger(__name__)

MODAL_SUBMIT = 5


class ClickHost(Protocol):
    """What a kind's click handler may use of the process's decision service."""

    @property
    def store(self) -> DecisionStore: ...

    def owners(self, decision: Decision) -> frozenset[str]: ...

    def notify_waiters(self, decision_id: str) -> None: ...


async def answer_question_click(
    host: ClickHost,
    decision: Decision,
    data: dict[str, Any],
    part: str,
    user_id: str,
    username: str,
) -> dict[str, Any]:
    """The callback body for a click on a pending question's card."""
    owners = host.owners(decision)
    payload = data.get("data") or {}
    if data.get("type") == MODAL_SUBMIT:
        verdict = judge_choice(
            decision, user_id, username, owners, via="modal", index=None, text=modal_text(payload)
        )
    elif part == "other":
        if user_id in owners:
            return modal_response(
                decision.id, decision.question, decision.language, decision.machine
            )
        verdict = judge_choice(decision, user_id, username, owners, via="button", index=None)
    elif part == "select":
        values = payload.get("values") or []
        index = int(values[0]) if values and str(values[0]).isdigit() else None
        verdict = judge_choice(decision, user_id, username, owners, via="select", index=index)
    else:
        index = int(part) if part.isdigit() else None
        verdict = judge_choice(decision, user_id, username, owners, via="button", index=index)
    return await settle_click(
        host, decision, verdict, refused="live.refused", render=cards.render_final
    )


async def settle_click(
    host: ClickHost,
    decision: Decision,
    verdict: Verdict,
    *,
    refused: str,
    render: Callable[[Decision], str],
    no_answer: str = "live.no_answer",
) -> dict[str, Any]:
    """Store a click's verdict and say what the clicker sees: a private refusal (``refused`` is
    its catalogue key), a private "that is not an answer", or the card showing the outcome."""
    lang = decision.language
    owners = host.owners(decision)
    if verdict.kind == "refuse":
        attempt = verdict.changes["refused"][-1]
        await host.store.aupdate(
            decision.id, lambda current: current.replace(refused=(*current.refused, attempt))
        )
        return ephemeral(i18n.text(lang, refused, owners=mentions(owners)))
    if verdict.kind != "resolve":
        return ephemeral(i18n.text(lang, no_answer))
    stored, won = await host.store.afinish(decision.id, **verdict.changes)
    if not won:
        return ephemeral(already(stored))
    log.info("decision %s (%s) answered via %s", stored.id, stored.kind, stored.via)
    host.notify_waiters(stored.id)
    return update_card(render(stored))


def mentions(owners: Iterable[str]) -> str:
    return ", ".join(f"<@{o}>" for o in sorted(owners))


def already(decision: Decision) -> str:
    """What a click on a card that is already final gets (privately)."""
    lang = decision.language
    who = decision.answered_by_name or i18n.text(lang, "card.the_owner")
    if decision.kind != "question" and decision.status == "answered":
        return i18n.text(lang, "live.already_answered", choice=decision.selected_option, who=who)
    if decision.status == "answered":
        chosen = (decision.selected_option or decision.answer or "")[:200]
        return i18n.text(lang, "live.already_answered", choice=f"“{chosen}”", who=who)
    return i18n.text(
        lang, "live.already_final", status=i18n.text(lang, f"status.{decision.status}")
    )
