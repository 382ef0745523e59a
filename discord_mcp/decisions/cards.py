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
from discord_mcp.i18n import text

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

    Two options that are a yes and a no get ✅ and ❌, placed where a typed "yes" and "no" would
    land (["Reject", "Approve"] gets ❌, ✅); any other two to ten get keycaps (a ✅ on "Delete
    them" would read as "yes, delete"); others none.
    """
    if len(options) == 2:
        yes_index, no_index = yes_no_targets(options)
        if yes_index is not None and no_index is not None:
            return (NO, YES) if yes_index == 1 else (YES, NO)
    if 2 <= len(options) <= len(KEYCAPS):
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


def on_machine(decision: Decision) -> str:
    """`` · on `laptop` ``: the machine that asked, on the card's marker line (nothing for a
    decision from before machines had names)."""
    return f" · on `{decision.machine}`" if decision.machine else ""


def asked_stamp(decision: Decision, language: str = "en") -> str:
    """``<t:UNIX:R>``: Discord shows it as "5 minutes ago" (in the reader's own app language),
    kept current by the reader's app, so the card always says how long the question has
    waited."""
    try:
        unix = int(datetime.fromisoformat(decision.asked_at).timestamp())
    except ValueError:
        return text(language, "card.asked_unknown")
    return f"<t:{unix}:R>"


def _header(decision: Decision) -> list[str]:
    lang = decision.language
    urgent = text(lang, "card.urgent") if decision.urgent else ""
    lines = [
        text(
            lang,
            "card.header",
            project=decision.project,
            session=decision.session,
            asked=asked_stamp(decision, lang),
            urgent=urgent,
        )
    ]
    lines.append(text(lang, "card.question", question=_clip(decision.question, 600)))
    if decision.context:
        lines.append(text(lang, "card.context", context=_clip(decision.context, 500)))
    if decision.options:
        lines.append(text(lang, "card.options"))
        budget = max(60, 500 // len(decision.options))
        for index, option in enumerate(decision.options):
            lines.append(f"> **{option_label(index)}** ({index + 1}) {_clip(option, budget)}")
    return lines


def render_card(decision: Decision, owner_ids: Iterable[str], *, buttons: bool = False) -> str:
    """The question as posted: question, context, options, how to answer, who may, and meanwhile.

    Args:
        buttons: the card carries buttons (a gateway holder is listening for clicks).
    """
    lang = decision.language
    lines = _header(decision)
    emojis = decision.reaction_emojis
    if decision.options:
        how = text(  # an option whose text is a letter or number is chosen by its text
            lang, _HOW[label_readings(decision.options)]
        )
        yes_index, no_index = yes_no_targets(decision.options)
        if yes_index is not None and no_index is not None:
            how += text(
                lang, "card.how_yes_no", yes=option_label(yes_index), no=option_label(no_index)
            )
        if buttons:
            how = text(lang, "card.how_buttons", how=how)
        if set(emojis) == {YES, NO}:
            how += text(
                lang,
                "card.how_react_yes_no",
                yes_emoji=YES,
                no_emoji=NO,
                yes=option_label(emojis.index(YES)),
                no=option_label(emojis.index(NO)),
            )
        elif emojis:
            how += text(lang, "card.how_react_range", first=emojis[0], last=emojis[-1])
    else:
        how = text(lang, "card.how_free_text")
    lines.append(text(lang, "card.how", how=how))
    lines.append(text(lang, "card.who", owners=_mentions(owner_ids)))
    if decision.deadline:
        then = decision.on_timeout or text(lang, "card.on_timeout_default")
        meanwhile = text(
            lang,
            "card.meanwhile_deadline",
            when=_when(decision.deadline, lang),
            then=_clip(then, 200),
        )
    else:
        meanwhile = text(lang, "card.meanwhile_waiting")
    lines.append(text(lang, "card.meanwhile", meanwhile=meanwhile))
    # The card's marker (never translated): how a lost card is found again.
    lines.append(f"-# decision `{decision.id}`{on_machine(decision)}")
    return _fit(lines)


_HOW = {
    (True, True): "card.how_letter_or_number",
    (True, False): "card.how_letter",
    (False, True): "card.how_number",
    (False, False): "card.how_exact_text",
}


def render_final(decision: Decision) -> str:
    """The card after the decision was answered, withdrawn or expired."""
    lang = decision.language
    lines = _header(decision)
    if decision.status == "answered":
        if decision.selected_index is not None:
            label = option_label(decision.selected_index)
            chosen = f"**{label}** {_clip(decision.selected_option or '', 200)}"
        else:
            chosen = f"“{_clip(decision.answer or '', 300)}”"
        lines.append(
            text(
                lang,
                "card.answered",
                chosen=chosen,
                who=_who(decision),
                when=_when(decision.answered_at, lang),
                via=via_words(decision, lang),
            )
        )
    elif decision.status == "cancelled":
        if decision.cancel_reason:
            lines.append(
                text(lang, "card.withdrawn_because", reason=_clip(decision.cancel_reason, 300))
            )
        else:
            lines.append(text(lang, "card.withdrawn"))
    elif decision.status == "expired":
        then = decision.on_timeout or text(lang, "card.expired_default")
        lines.append(
            text(lang, "card.expired", when=_when(decision.deadline, lang), then=_clip(then, 300))
        )
    lines.append(f"-# decision `{decision.id}` · {decision.status}{on_machine(decision)}")
    return _fit(lines)


def _who(decision: Decision) -> str:
    if decision.answered_by:
        return f"<@{decision.answered_by}>"
    return text(decision.language, "card.the_owner")


def via_words(decision: Decision, language: str) -> str:
    """How the answer came (a reply, a reaction, a button...), in ``language``."""
    return text(language, f"via.{decision.via}") if decision.via else "?"


def refusal_text(
    user_id: str, owner_ids: Iterable[str], via: str = "text", lang: str = "en"
) -> str:
    """The reply to someone who is not allowed to answer (``via``: how they tried)."""
    what = {"reaction": "refusal.reaction", "text": "refusal.reply"}.get(via, "refusal.answer")
    return text(
        lang,
        "refusal.question",
        user=f"<@{user_id}>",
        owners=_mentions(owner_ids),
        what=text(lang, what),
    )


def _when(iso: str | None, lang: str = "en") -> str:
    if not iso:
        return text(lang, "card.unknown_time")
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return iso


def _fit(lines: list[str]) -> str:
    text = "\n".join(lines)
    return text if len(text) <= CARD_LIMIT else text[: CARD_LIMIT - 1] + "…"
