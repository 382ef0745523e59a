"""What a decision looks like in Discord: the card, its final state, and the bot's short replies.

Pure functions of a decision; every result fits in one Discord message (2000 characters).
Question and context come from the agent; they are shown as given, but pings are prevented by
``allowed_mentions`` when the card is sent, never by editing the text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.parser import label_readings, yes_no_targets

CARD_LIMIT = 2000
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXY"
"""Option labels; at most 25 options, as many as a select menu holds."""
KEYCAPS = (*(f"{n}\ufe0f\u20e3" for n in range(1, 10)), "\U0001f51f")
"""1️⃣ ... 9️⃣ 🔟: reactions for up to ten options."""
YES, NO = "\u2705", "\u274c"
"""✅ and ❌: reactions for a two-option question (first option, second option)."""
MAX_OPTIONS = 25
MAX_OPTION_LENGTH = 100
"""Discord's limit on a select option's label; buttons show 80 and get shortened."""


def reaction_emojis(options: Sequence[str]) -> tuple[str, ...]:
    """The reaction for each option, in option order.

    Two options get ✅ and ❌, placed where a typed "yes" and "no" would land (["Reject",
    "Approve"] gets ❌, ✅); three to ten get keycaps; others none.
    """
    if len(options) == 2:
        yes_index, _no_index = yes_no_targets(options)
        return (NO, YES) if yes_index == 1 else (YES, NO)
    if 3 <= len(options) <= len(KEYCAPS):
        return KEYCAPS[: len(options)]
    return ()


def option_label(index: int) -> str:
    """``A``, ``B``... for option ``index`` (0-based)."""
    return LETTERS[index]


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _mentions(user_ids: Iterable[str]) -> str:
    return ", ".join(f"<@{uid}>" for uid in sorted(user_ids))


def _header(decision: Decision) -> list[str]:
    lines = [f"**Decision needed** · `{decision.project}` · session `{decision.session}`"]
    lines.append(f"**Question:** {_clip(decision.question, 600)}")
    if decision.context:
        lines.append(f"**Context:** {_clip(decision.context, 500)}")
    if decision.options:
        lines.append("**Options:**")
        budget = max(60, 500 // len(decision.options))
        for index, option in enumerate(decision.options):
            lines.append(f"> **{option_label(index)}** ({index + 1}) {_clip(option, budget)}")
    return lines


def render_card(decision: Decision, owner_ids: Iterable[str], *, buttons: bool = False) -> str:
    """The question as posted: question, context, options, how to answer, who may, and meanwhile.

    Args:
        buttons: the card carries buttons (a gateway holder is listening for clicks).
    """
    lines = _header(decision)
    emojis = decision.reaction_emojis
    if decision.options:
        how = {  # an option whose text is a letter or number is chosen by its text
            (True, True): "reply in this thread with a letter or number (e.g. `A` or `1`)",
            (True, False): "reply in this thread with a letter (e.g. `A`)",
            (False, True): "reply in this thread with a number (e.g. `1`)",
            (False, False): "reply in this thread with an option's exact text",
        }[label_readings(decision.options)]
        yes_index, no_index = yes_no_targets(decision.options)
        if yes_index is not None and no_index is not None:
            yes_label, no_label = option_label(yes_index), option_label(no_index)
            how += f", `yes` for {yes_label} or `no` for {no_label}"
        if buttons:
            how = "click a button below, or " + how
        if set(emojis) == {YES, NO}:
            yes_label = option_label(emojis.index(YES))
            no_label = option_label(emojis.index(NO))
            how += f", or react {YES} for {yes_label} / {NO} for {no_label}"
        elif emojis:
            how += f", or react {emojis[0]}-{emojis[-1]}"
    else:
        how = "reply in this thread with your answer"
    lines.append(f"**How to answer:** {how}.")
    lines.append(f"**Who can answer:** {_mentions(owner_ids)}")
    if decision.deadline:
        meanwhile = (
            f"the agent waits until {_when(decision.deadline)}, then: "
            f"{_clip(decision.on_timeout or 'it stops waiting without an answer', 200)}"
        )
    else:
        meanwhile = "the agent is waiting and will not proceed on this until you answer"
    lines.append(f"**Meanwhile:** {meanwhile}.")
    lines.append(f"-# decision `{decision.id}`")
    return _fit(lines)


def render_final(decision: Decision) -> str:
    """The card after the decision was answered, withdrawn or expired."""
    lines = _header(decision)
    if decision.status == "answered":
        if decision.selected_index is not None:
            label = option_label(decision.selected_index)
            chosen = f"**{label}** {_clip(decision.selected_option or '', 200)}"
        else:
            chosen = f"“{_clip(decision.answer or '', 300)}”"
        who = f"<@{decision.answered_by}>" if decision.answered_by else "the owner"
        lines.append(
            f"**Answered:** {chosen}, by {who} at {_when(decision.answered_at)} via {decision.via}."
        )
    elif decision.status == "cancelled":
        reason = f": {_clip(decision.cancel_reason, 300)}" if decision.cancel_reason else ""
        lines.append(f"**Withdrawn** by the agent{reason}. No answer is needed any more.")
    elif decision.status == "expired":
        then = _clip(decision.on_timeout or "it stopped waiting without an answer", 300)
        lines.append(
            f"**Expired** at {_when(decision.deadline)} without an answer. The agent: {then}"
        )
    lines.append(f"-# decision `{decision.id}` · {decision.status}")
    return _fit(lines)


def refusal_text(user_id: str, owner_ids: Iterable[str], via: str = "text") -> str:
    """The reply to someone who is not allowed to answer (``via``: how they tried)."""
    what = {"reaction": "reaction", "text": "reply"}.get(via, "answer")
    return (
        f"<@{user_id}>, only {_mentions(owner_ids)} can answer this question; "
        f"your {what} was recorded but not used."
    )


def _when(iso: str | None) -> str:
    if not iso:
        return "an unknown time"
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return iso


def _fit(lines: list[str]) -> str:
    text = "\n".join(lines)
    return text if len(text) <= CARD_LIMIT else text[: CARD_LIMIT - 1] + "…"
