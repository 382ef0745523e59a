"""Which card a message in a thread answers, when several can be open there at once.

A run's thread can hold a question and an approval at the same time (or two approvals). Each
card judges a message as if it were alone (:mod:`discord_mcp.decisions.kinds`); this module
decides which of those judgements stands, so that one "yes" never answers two cards:

1. A message that replies to a card (Discord's reply, ``message_reference``) is for that card
   only, whatever it says; every other card ignores it.
2. A message that replies to no card (or to another message, such as the bot's clarifying
   question) is judged against the cards that were open when it was written: posted before it,
   and not yet final (or made final within :data:`SKEW_S` of it: the clocks of Discord and of
   this machine differ a little, and a card answered a moment earlier may not have been final
   on the owner's screen).
3. One card open: its own judgement stands.
4. Several open: the message is taken by a card only when exactly one card would take it and
   that card's kind accepts plain replies while it shares its thread (questions do; approvals
   never: they need their buttons, a reaction or a reply to the card). When two cards would
   take it, or the only one is an approval, or several would ask again, nothing is resolved and
   the owner is asked, in one short line, to reply to the card they mean. Refusals of a
   stranger are recorded on every card and said once; one-time notices too.

The short line and a stranger's refusal are said by the *lead* card (the newest open one): every
process that sees the message applies every card's verdict through the store, whose
compare-and-set on each card's handled messages makes each happen once, whoever comes first.
Pure functions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from discord_mcp import i18n
from discord_mcp.decisions import kinds
from discord_mcp.decisions.answers import IGNORE, Verdict
from discord_mcp.decisions.model import Decision

DISCORD_EPOCH_MS = 1420070400000
SKEW_S = 5.0
"""A card answered less than this before a message still counts as open for it."""


def reference(message: dict[str, Any]) -> str:
    """The message a message replies to ("" for none)."""
    ref = message.get("message_reference") or {}
    return str(ref.get("message_id") or "") if isinstance(ref, dict) else ""


def snowflake_time(snowflake: str) -> datetime | None:
    """When Discord created the object with this id."""
    try:
        ms = (int(snowflake) >> 22) + DISCORD_EPOCH_MS
    except ValueError:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC)


def open_at(decision: Decision, message_id: str) -> bool:
    """Whether ``decision``'s card was open when the message ``message_id`` was written."""
    if not decision.card_message_id or not message_id.isdigit():
        return False
    if int(decision.card_message_id) >= int(message_id):
        return False  # posted after the message: it cannot be what the message answers
    if not decision.is_final:
        return True
    if decision.handled(message_id) or decision.answer_message_id == message_id:
        return True
    written = snowflake_time(message_id)
    if written is None or not decision.answered_at:
        return True
    try:
        ended = datetime.fromisoformat(decision.answered_at)
    except ValueError:
        return True
    return (ended - written).total_seconds() >= -SKEW_S


def _as_open(decision: Decision) -> Decision:
    """The card as it stood before it became final (to judge what a message meant for it)."""
    return decision if not decision.is_final else decision.replace(status="pending")


def route(
    message: dict[str, Any],
    cards: Sequence[Decision],
    owners: Callable[[Decision], frozenset[str]],
) -> dict[str, Verdict]:
    """Every card's verdict on ``message`` (ids absent from the result ignore it).

    Args:
        message: a message in one thread.
        cards: every decision of that thread this process knows (any status).
        owners: who may answer a decision.
    """
    message_id = str(message.get("id") or "")
    target = reference(message)
    if target:
        for decision in cards:
            if decision.card_message_id == target:
                return {decision.id: kinds.judge_message(decision, message, owners(decision))}
    shared = [d for d in cards if open_at(d, message_id)]
    if len(shared) <= 1:
        return {d.id: kinds.judge_message(d, message, owners(d)) for d in shared}
    solo = {d.id: kinds.judge_message(_as_open(d), message, owners(d)) for d in shared}
    lead = max(shared, key=lambda d: int(d.card_message_id))

    def takes(kind: str) -> list[Decision]:
        return [d for d in shared if solo[d.id].kind == kind]

    for kind in ("resolve", "clarify"):
        claimants = takes(kind)
        if not claimants:
            continue
        only = claimants[0]
        if len(claimants) == 1 and kinds.judged_alone_when_shared(only):
            return {only.id: solo[only.id]}
        return {lead.id: Verdict("notice", {}, which_line(lead, len(shared)))}
    verdicts: dict[str, Verdict] = {}
    for decision in shared:
        verdict = solo[decision.id]
        if verdict.kind == "refuse":  # recorded on every card, said once
            said = verdict if decision is lead else Verdict("refuse", verdict.changes, None)
            verdicts[decision.id] = said
        elif verdict.kind == "notice" and decision is lead:
            verdicts[decision.id] = verdict
    return verdicts or {lead.id: IGNORE}


def which_line(lead: Decision, count: int) -> str:
    """The one short line asking which card a reply was for."""
    return i18n.text(lead.language, "routing.which", count=count)
