"""Live events for decisions: what a process does with the gateway's events and clicks."""

from __future__ import annotations

import logging
from typing import Any

from discord_mcp.decisions import cards
from discord_mcp.decisions.answers import judge_choice
from discord_mcp.decisions.interactive import (
    UPDATE_MESSAGE,
    ephemeral,
    modal_response,
    modal_text,
    parse_custom_id,
    update_card,
)
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.service import DecisionService
from discord_mcp.errors import DecisionError, DiscordError, StateError
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)


class DecisionEvents:
    """A :class:`~discord_mcp.relay.link.LiveHandler` for decisions.

    Replies and reactions go to the decision service; a click on a decision card is answered
    here, with the callback Discord requires within 3 seconds.
    """

    def __init__(self, service: DecisionService, rest: RestClient) -> None:
        self._service = service
        self._rest = rest

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        await self._service.on_event(name, data)

    async def on_interaction(self, data: dict[str, Any]) -> None:
        body = await answer_click(self._service, data)
        if body is None:
            return  # not a decision card's component
        # An UPDATE_MESSAGE (7) answer is the card showing the outcome of a resolving click.
        resolved = body["type"] == UPDATE_MESSAGE and parse_custom_id(
            str((data.get("data") or {}).get("custom_id") or "")
        )
        try:
            await self._rest.create_interaction_response(
                str(data["id"]), str(data["token"]), int(body["type"]), body.get("data")
            )
        except DiscordError as exc:
            log.warning("answering a click failed: %s", exc)
            if resolved:  # the card was not updated by the response: edit it instead
                await self._service.show_final(self._service.store.load(resolved.decision_id))
            return
        if resolved:
            await self._service.store.aupdate(
                resolved.decision_id,
                lambda current: None if current.final_shown else current.replace(final_shown=True),
            )


async def answer_click(service: DecisionService, data: dict[str, Any]) -> dict[str, Any] | None:
    """The callback body for a click on (or modal from) a decision card; None if not ours.

    Runs in the gateway holder, whoever asked: it must answer within Discord's 3 seconds.
    """
    click = parse_custom_id(str((data.get("data") or {}).get("custom_id") or ""))
    if click is None:
        return None
    member = data.get("member") if isinstance(data.get("member"), dict) else None
    user = (member or {}).get("user") or data.get("user") or {}
    user_id = str(user.get("id") or "")
    username = str(user.get("global_name") or user.get("username") or user_id)
    try:
        decision = service.store.load(click.decision_id)
    except (DecisionError, StateError):
        return ephemeral("This question is no longer known here.")
    owners = service.owners(decision)
    if decision.is_final:
        return ephemeral(_already(decision))
    if decision.kind == "approval":
        from discord_mcp.approvals.live import answer_approval_click

        return await answer_approval_click(service, decision, data, click.part, user_id, username)
    payload = data.get("data") or {}
    if data.get("type") == 5:  # modal submit
        verdict = judge_choice(
            decision,
            user_id,
            username,
            owners,
            via="modal",
            index=None,
            text=modal_text(payload),
        )
    elif click.part == "other":
        if user_id in owners:
            return modal_response(decision.id, decision.question)
        verdict = judge_choice(decision, user_id, username, owners, via="button", index=None)
    elif click.part == "select":
        values = payload.get("values") or []
        index = int(values[0]) if values and str(values[0]).isdigit() else None
        verdict = judge_choice(decision, user_id, username, owners, via="select", index=index)
    else:
        verdict = judge_choice(decision, user_id, username, owners, via="button", index=click.index)
    if verdict.kind == "refuse":
        attempt = verdict.changes["refused"][-1]
        await service.store.aupdate(
            decision.id,
            lambda current: current.replace(refused=(*current.refused, attempt)),
        )
        return ephemeral(
            "Only " + ", ".join(f"<@{o}>" for o in sorted(owners)) + " can answer this "
            "question; your click was recorded but not used."
        )
    if verdict.kind != "resolve":
        return ephemeral("That did not select an answer; try again.")
    stored, won = await service.store.afinish(decision.id, **verdict.changes)
    if not won:
        return ephemeral(_already(stored))
    log.info("decision %s answered via %s", stored.id, stored.via)
    service.notify_waiters(stored.id)
    return update_card(cards.render_final(stored))


def _already(decision: Decision) -> str:
    if decision.kind == "approval" and decision.status == "answered":
        who = decision.answered_by_name or "the owner"
        return f"This was already answered ({decision.selected_option}, by {who})."
    if decision.status == "answered":
        chosen = decision.selected_option or decision.answer or ""
        who = decision.answered_by_name or "the owner"
        return f"This question was already answered ({chosen[:200]!r}, by {who})."
    return f"This question is already {decision.status}."
