"""What an approval looks like in Discord: the card, its buttons, the modal, its outcome.

Pure functions of a decision whose ``approval`` holds the request and its
:class:`~discord_mcp.approvals.request.Action` (rendered once, when asked). Everything from
the agent (command, diff, tool input, its reason) is untrusted: it goes in code blocks whose
fences it cannot close, long text is cut visibly ("… 120 more lines"), and a card is sent with
``allowed_mentions: {"users": [owners]}``: the owners' phones buzz (the agent is blocked), and
nothing the agent wrote can ping anyone else; edits of the card ping no one. The button labels are a
contract (tests and outside checks find them by these words): **Allow once**, **Allow for this
session**, **Deny**, **Deny with a note…**.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from discord_mcp import i18n
from discord_mcp.approvals.request import rule_words
from discord_mcp.decisions.cards import CARD_LIMIT, NO, YES, on_machine
from discord_mcp.decisions.interactive import custom_id
from discord_mcp.decisions.model import Decision

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
DENY = "Deny"
DENY_NOTE = "Deny with a note…"
LABELS = (ALLOW_ONCE, ALLOW_SESSION, DENY, DENY_NOTE)
PARTS = ("allow", "session", "deny", "note")
"""The ``custom_id`` part of each button (``dmcp:<decision id>:<part>:<machine>``, built by
:func:`discord_mcp.decisions.interactive.custom_id`)."""
OPTIONS = ("Allow", "Deny")
"""How text replies and reactions are read: yes/✅ allows once, no/❌ denies."""
REACTIONS = (YES, NO)
NOTE_INPUT_ID = "note"
PRIMARY, SECONDARY, SUCCESS, DANGER = 1, 2, 3, 4
_STYLES = (SUCCESS, PRIMARY, DANGER, SECONDARY)
BUTTON_LIMIT = 80
"""Discord's limit on a button's label."""
_BLOCK_LINES = 30
_BLOCK_CHARS = 1100


def action_of(decision: Decision) -> Mapping[str, Any]:
    """The rendered action stored on an approval (empty for anything else)."""
    approval = decision.approval or {}
    action = approval.get("action")
    return action if isinstance(action, Mapping) else {}


def fence(text: str, language: str = "") -> str:
    """``text`` in a code block that its own backticks cannot close."""
    safe = text.replace("```", "`\u200b`\u200b`")
    return f"```{language}\n{safe}\n```"


def clip_lines(text: str, *, lines: int = _BLOCK_LINES, chars: int = _BLOCK_CHARS) -> str:
    """``text`` cut to ``lines`` lines and ``chars`` characters, saying how much was left out."""
    rows = text.splitlines() or [""]
    shown: list[str] = []
    used = 0
    for row in rows[:lines]:
        if used + len(row) + 1 > chars:
            room = max(chars - used - 1, 0)
            if room >= 20 or not shown:
                cut = row[:room]
                shown.append(f"{cut}… {len(row) - len(cut)} more characters")
            break
        shown.append(row)
        used += len(row) + 1
    hidden = len(rows) - len(shown)
    if hidden > 0:
        shown.append(f"… {hidden} more line{'s' if hidden != 1 else ''}")
    return "\n".join(shown)


def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _when(iso: str | None, lang: str) -> str:
    if not iso:
        return i18n.text(lang, "card.unknown_time")
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return iso


def for_people(seconds: float, lang: str = "en") -> str:
    """A duration as people say it, in ``lang``: whole seconds under a minute, half minutes
    under ten, whole minutes under two hours, half hours beyond; never "0 seconds" (a wait
    shorter than a second is "less than a second") nor "26.9249 seconds"."""
    if not seconds >= 1:  # NaN too
        return i18n.text(lang, "approval.under_a_second")
    whole = round(seconds)
    if whole < 60:
        return i18n.text(lang, "approval.second" if whole == 1 else "approval.seconds", n=whole)
    if whole < 2 * 3600:
        minutes = whole / 60
        count = _halves(minutes) if minutes < 10 else round(minutes)
        return i18n.text(lang, "approval.minute" if count == 1 else "approval.minutes", n=count)
    count = _halves(whole / 3600)
    return i18n.text(lang, "approval.hour" if count == 1 else "approval.hours", n=count)


def _halves(amount: float) -> float | int:
    """``amount`` to the nearest half, as an int when whole (``1.5``, ``2``)."""
    half = round(amount * 2) / 2
    return int(half) if half.is_integer() else half


def wait_words(decision: Decision, lang: str = "en") -> str:
    """How long the agent waits for this approval, in words (in ``lang``)."""
    approval = decision.approval or {}
    seconds = approval.get("wait_seconds")
    if isinstance(seconds, int | float):
        return for_people(float(seconds), lang)
    return i18n.text(lang, "approval.a_while")


def _header(decision: Decision) -> list[str]:
    lang = decision.language
    approval = decision.approval or {}
    action = action_of(decision)
    client = str(approval.get("client") or "agent")
    title = f"**{action.get('title') or i18n.text(lang, 'approval.use_a_tool')}**"
    if approval.get("cwd"):
        title += i18n.text(lang, "approval.in_directory", cwd=_clip(approval["cwd"], 120))
    lines = [
        i18n.text(
            lang,
            "approval.header",
            project=decision.project,
            client=client,
            session=decision.session,
        ),
        title,
    ]
    if action.get("command") is not None:
        lines.append(fence(clip_lines(str(action["command"])), "sh"))
    elif action.get("diff") is not None:
        lines.append(
            i18n.text(lang, "approval.file", path=_clip(str(action.get("path") or ""), 200))
        )
        lines.append(fence(clip_lines(str(action["diff"])), "diff"))
    elif action.get("detail") is not None:
        lines.append(fence(clip_lines(str(action["detail"]), lines=15, chars=700), "json"))
    risks = action.get("risks") or []
    if risks:
        lines.append(i18n.text(lang, "approval.risky", risks=", ".join(str(r) for r in risks)))
    if action.get("reason"):
        reason = _clip(str(action["reason"]).replace("`", "'"), 200)
        lines.append(i18n.text(lang, "approval.reason", reason=reason))
    return lines


def _session_rule(decision: Decision) -> str:
    """What "Allow for this session" covers, worded from the stored rule itself (the matcher's
    own source, :func:`~discord_mcp.approvals.request.rule_words`), never from a label."""
    lang = decision.language
    label = rule_words(str(action_of(decision).get("rule") or ""), lang)
    if not label:
        return i18n.text(lang, "approval.rule_this_request")
    return i18n.text(lang, "approval.rule_session", rule=label)


def button_label(label: str, lang: str) -> str:
    """A button's label: the contract's English words first, then, for another language, its
    translation when both fit Discord's 80 characters (``Allow once · 한 번 허용``)."""
    key = {ALLOW_ONCE: "allow_once", ALLOW_SESSION: "allow_session", DENY: "deny"}.get(
        label, "deny_note"
    )
    translated = i18n.text(lang, f"approval.button_{key}")
    both = f"{label} · {translated}"
    return label if translated == label or len(both) > BUTTON_LIMIT else both


def render_card(decision: Decision, owner_ids: Iterable[str], *, buttons: bool = False) -> str:
    """The approval as posted (and while it is pending)."""
    lang = decision.language
    lines = _header(decision)
    how = i18n.text(lang, "approval.how", yes=YES, no=NO)
    if buttons:
        labels = {
            name: button_label(label, lang)
            for name, label in zip(("once", "session", "deny", "note"), LABELS, strict=True)
        }
        how = i18n.text(lang, "approval.how_buttons", how=how, **labels)
    lines.append(i18n.text(lang, "card.how", how=how))
    lines.append(
        i18n.text(
            lang,
            "approval.session_covers",
            allow_session=button_label(ALLOW_SESSION, lang),
            rule=_session_rule(decision),
        )
    )
    owners = ", ".join(f"<@{o}>" for o in sorted(owner_ids))
    lines.append(i18n.text(lang, "card.who", owners=owners))
    if decision.gave_up_at:
        lines.append(gave_up_line(decision))
    else:
        lines.append(i18n.text(lang, "approval.meanwhile", wait=wait_words(decision, lang)))
    # The card's marker (never translated): how a lost card is found again.
    lines.append(f"-# approval · decision `{decision.id}`{on_machine(decision)}")
    return _fit(lines)


def gave_up_line(decision: Decision) -> str:
    """What the card says once the agent stopped waiting."""
    lang = decision.language
    approval = decision.approval or {}
    wait = wait_words(decision, lang)
    if approval.get("attended"):
        return i18n.text(lang, "approval.gave_up_attended", wait=wait)
    then = i18n.text(
        lang, "approval.then_resume" if approval.get("resume") else "approval.then_next_request"
    )
    return i18n.text(lang, "approval.gave_up", wait=wait, then=then)


def render_final(decision: Decision) -> str:
    """The card once the approval is answered (or answered at the terminal)."""
    lang = decision.language
    lines = _header(decision)
    who = f"<@{decision.answered_by}>" if decision.answered_by else ""
    who = who or i18n.text(lang, "card.the_owner")
    via = i18n.text(lang, f"via.{decision.via}") if decision.via else "?"
    when = i18n.text(lang, "approval.when", time=_when(decision.answered_at, lang), via=via)
    marks = {"yes": YES, "no": NO, "who": who, "when": when}
    if decision.status == "answered" and decision.answer == "allow":
        if decision.scope == "session":
            allow_session = button_label(ALLOW_SESSION, lang)
            lines.append(
                i18n.text(lang, "approval.allowed_session", allow_session=allow_session, **marks)
            )
            lines.append(i18n.text(lang, "approval.covers_now", rule=_session_rule(decision)))
        else:
            lines.append(i18n.text(lang, "approval.allowed_once", **marks))
        if decision.gave_up_at:
            lines.append(
                i18n.text(lang, "approval.after_gave_up", what=late_allow_words(decision, lang))
            )
    elif decision.status == "answered":
        lines.append(i18n.text(lang, "approval.denied", **marks))
        if decision.note:
            lines.append(i18n.text(lang, "approval.told", note=_clip(decision.note, 300)))
    elif decision.status == "cancelled":
        reason = decision.cancel_reason or i18n.text(lang, "approval.withdrawn")
        lines.append(i18n.text(lang, "approval.closed", what=_clip(reason, 200)))
    else:
        status = i18n.text(lang, f"status.{decision.status}")
        lines.append(i18n.text(lang, "approval.closed", what=status[:1].upper() + status[1:]))
    lines.append(
        f"-# approval · decision `{decision.id}` · {decision.status}{on_machine(decision)}"
    )
    return _fit(lines)


def late_allow_words(decision: Decision, lang: str = "en") -> str:
    approval = decision.approval or {}
    if approval.get("resume"):
        return i18n.text(lang, "approval.late_resume")
    return i18n.text(lang, "approval.late_next_request")


def components(
    decision_id: str,
    lang: str = "en",
    *,
    shown: frozenset[str] | set[str] | None = None,
    extra: Iterable[tuple[str, str]] = (),
    machine: str | None = None,
) -> list[dict[str, Any]]:
    """One row: Allow once, Allow for this session, Deny, Deny with a note… (each followed by
    its translation for a card in another language, see :func:`button_label`); ``machine``:
    the asking machine, named in every ``custom_id``.

    ``shown``: only these of the four (default: all); ``extra``: more buttons as (part, label),
    an ACP agent's own options (see :mod:`~discord_mcp.approvals.acp`), five to a row.
    """
    buttons = [
        {
            "type": 2,
            "style": style,
            "label": button_label(label, lang),
            "custom_id": custom_id(decision_id, part, machine),
        }
        for label, part, style in zip(LABELS, PARTS, _STYLES, strict=True)
        if shown is None or part in shown
    ]
    buttons += [
        {
            "type": 2,
            "style": SECONDARY,
            "label": _clip(label, BUTTON_LIMIT) or part,
            "custom_id": custom_id(decision_id, part, machine),
        }
        for part, label in extra
    ]
    return [{"type": 1, "components": buttons[i : i + 5]} for i in range(0, len(buttons), 5)]


def note_modal(
    decision_id: str, summary: str, lang: str = "en", machine: str | None = None
) -> dict[str, Any]:
    """The callback (type 9) that opens the "Deny with a note…" box."""
    return {
        "type": 9,
        "data": {
            "custom_id": custom_id(decision_id, "modal", machine),
            "title": i18n.text(lang, "approval.note_title")[:45],
            "components": [
                {
                    "type": 18,
                    "label": i18n.text(lang, "approval.note_label")[:45],
                    "description": summary[:100],
                    "component": {
                        "type": 4,
                        "custom_id": NOTE_INPUT_ID,
                        "style": 2,
                        "required": True,
                        "max_length": 1000,
                    },
                }
            ],
        },
    }


def note_text(data: Mapping[str, Any]) -> str | None:
    """The note typed in our modal, from a MODAL_SUBMIT's ``data``."""
    for outer in data.get("components") or []:
        if not isinstance(outer, Mapping):
            continue
        inner = [outer.get("component")] if outer.get("component") else outer.get("components")
        for component in inner or []:
            if isinstance(component, Mapping) and component.get("custom_id") == NOTE_INPUT_ID:
                value = component.get("value")
                return str(value) if value is not None else None
    return None


def summary(action: Mapping[str, Any], tool_name: str, lang: str = "en") -> str:
    """One line naming what is asked (the decision's ``question``, the thread's name)."""
    if action.get("command") is not None:
        return i18n.text(lang, "approval.summary_run", command=_clip(str(action["command"]), 150))
    if action.get("path"):
        return f"{action.get('title')}: {_clip(str(action['path']), 150)}"
    return i18n.text(lang, "approval.summary_tool", tool=tool_name)


def _fit(lines: list[str]) -> str:
    text = "\n".join(lines)
    if len(text) <= CARD_LIMIT:
        return text
    # Never cut through a code fence: shrink the longest block instead.
    longest = max(range(len(lines)), key=lambda i: len(lines[i]))
    excess = len(text) - CARD_LIMIT + 40
    body = lines[longest]
    if body.startswith("```") and len(body) > excess + 40:
        inner = body[body.index("\n") + 1 : body.rindex("\n")]
        language = body[3 : body.index("\n")]
        lines[longest] = fence(clip_lines(inner, chars=max(len(inner) - excess, 100)), language)
        text = "\n".join(lines)
    return text if len(text) <= CARD_LIMIT else text[: CARD_LIMIT - 1] + "…"
