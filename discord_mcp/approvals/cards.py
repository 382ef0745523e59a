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

from discord_mcp.decisions.cards import CARD_LIMIT, NO, YES
from discord_mcp.decisions.model import Decision

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
DENY = "Deny"
DENY_NOTE = "Deny with a note…"
LABELS = (ALLOW_ONCE, ALLOW_SESSION, DENY, DENY_NOTE)
PARTS = ("allow", "session", "deny", "note")
"""The ``custom_id`` part of each button (``dmcp:<decision id>:<part>``)."""
OPTIONS = ("Allow", "Deny")
"""How text replies and reactions are read: yes/✅ allows once, no/❌ denies."""
REACTIONS = (YES, NO)
NOTE_INPUT_ID = "note"
PRIMARY, SECONDARY, SUCCESS, DANGER = 1, 2, 3, 4
_STYLES = (SUCCESS, PRIMARY, DANGER, SECONDARY)
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


def _when(iso: str | None) -> str:
    if not iso:
        return "an unknown time"
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return iso


def _minutes(seconds: float) -> str:
    minutes = seconds / 60
    if minutes >= 1 and abs(minutes - round(minutes)) < 0.05:
        count = round(minutes)
        return f"{count} minute{'s' if count != 1 else ''}"
    if seconds < 60:
        return f"{seconds:g} second{'s' if seconds != 1 else ''}"
    return f"{minutes:.1f} minutes"


def wait_words(decision: Decision) -> str:
    """How long the agent waits for this approval, in words."""
    approval = decision.approval or {}
    seconds = approval.get("wait_seconds")
    return _minutes(float(seconds)) if isinstance(seconds, int | float) else "a while"


def _header(decision: Decision) -> list[str]:
    approval = decision.approval or {}
    action = action_of(decision)
    client = str(approval.get("client") or "agent")
    lines = [
        f"**Approval needed** · `{decision.project}` · {client} session `{decision.session}`",
        f"**{action.get('title') or 'Use a tool'}**"
        + (f" in `{_clip(approval['cwd'], 120)}`" if approval.get("cwd") else ""),
    ]
    if action.get("command") is not None:
        lines.append(fence(clip_lines(str(action["command"])), "sh"))
    elif action.get("diff") is not None:
        lines.append(f"File: `{_clip(str(action.get('path') or ''), 200)}`")
        lines.append(fence(clip_lines(str(action["diff"])), "diff"))
    elif action.get("detail") is not None:
        lines.append(fence(clip_lines(str(action["detail"]), lines=15, chars=700), "json"))
    risks = action.get("risks") or []
    if risks:
        lines.append("\u26a0\ufe0f **Risky:** " + ", ".join(str(r) for r in risks))
    if action.get("reason"):
        reason = _clip(str(action["reason"]).replace("`", "'"), 200)
        lines.append(f"-# The agent's reason (its own words, untrusted): {reason}")
    return lines


def _session_rule(decision: Decision) -> str:
    label = action_of(decision).get("rule_label")
    if not label:
        return "this request only (it cannot be generalized)"
    return f"{label} in this session only"


def render_card(decision: Decision, owner_ids: Iterable[str], *, buttons: bool = False) -> str:
    """The approval as posted (and while it is pending)."""
    lines = _header(decision)
    how = f"react {YES} to allow once or {NO} to deny, or reply `yes` / `no`"
    how += " (your reply is passed on as the reason)"
    if buttons:
        how = (
            f"click **{ALLOW_ONCE}**, **{ALLOW_SESSION}**, **{DENY}** or **{DENY_NOTE}**; or " + how
        )
    lines.append(f"**How to answer:** {how}.")
    lines.append(f"**{ALLOW_SESSION}** covers {_session_rule(decision)}.")
    lines.append("**Who can answer:** " + ", ".join(f"<@{o}>" for o in sorted(owner_ids)))
    if decision.gave_up_at:
        lines.append(gave_up_line(decision))
    else:
        lines.append(
            f"**Meanwhile:** the agent waits up to {wait_words(decision)}; without an answer the "
            "tool is not run (and the agent is told no one answered, not that you refused)."
        )
    lines.append(f"-# approval · decision `{decision.id}`")
    return _fit(lines)


def gave_up_line(decision: Decision) -> str:
    """What the card says once the agent stopped waiting."""
    approval = decision.approval or {}
    if approval.get("attended"):
        return (
            f"\u23f1\ufe0f **No one answered here within {wait_words(decision)}**: the "
            "session's terminal asks now. An Allow here still lets the same call run without "
            "asking next time."
        )
    then = (
        "an Allow now resumes the run and tells the agent it may retry"
        if approval.get("resume")
        else "an Allow now lets the agent's next identical request run without asking"
    )
    return (
        f"\u23f1\ufe0f **No one answered within {wait_words(decision)}**: the tool was not run, "
        f"and the agent was told so (not as a refusal). You can still answer (a button, a "
        f"reaction, or a reply to this card): {then}."
    )


def render_final(decision: Decision) -> str:
    """The card once the approval is answered (or answered at the terminal)."""
    lines = _header(decision)
    who = f"<@{decision.answered_by}>" if decision.answered_by else "the owner"
    when = f"at {_when(decision.answered_at)} via {decision.via}"
    if decision.status == "answered" and decision.answer == "allow":
        if decision.scope == "session":
            lines.append(f"{YES} **{ALLOW_SESSION}**, by {who} {when}.")
            lines.append(f"It now covers {_session_rule(decision)}.")
        else:
            lines.append(f"{YES} **Allowed once**, by {who} {when}.")
        if decision.gave_up_at:
            lines.append(f"-# after the agent stopped waiting: {late_allow_words(decision)}")
    elif decision.status == "answered":
        lines.append(f"{NO} **Denied**, by {who} {when}.")
        if decision.note:
            lines.append(f"The agent was told: “{_clip(decision.note, 300)}”")
    elif decision.status == "cancelled":
        reason = decision.cancel_reason or "withdrawn by the agent"
        lines.append(f"**{_clip(reason, 200)}**: nothing to answer here any more.")
    else:
        lines.append(f"**{decision.status.capitalize()}**: nothing to answer here any more.")
    lines.append(f"-# approval · decision `{decision.id}` · {decision.status}")
    return _fit(lines)


def late_allow_words(decision: Decision) -> str:
    approval = decision.approval or {}
    if approval.get("resume"):
        return "the run is resumed and told the tool may be retried"
    return "the agent's next identical request runs without asking"


def components(decision_id: str) -> list[dict[str, Any]]:
    """One row: Allow once, Allow for this session, Deny, Deny with a note…."""
    row = [
        {"type": 2, "style": style, "label": label, "custom_id": f"dmcp:{decision_id}:{part}"}
        for label, part, style in zip(LABELS, PARTS, _STYLES, strict=True)
    ]
    return [{"type": 1, "components": row}]


def note_modal(decision_id: str, summary: str) -> dict[str, Any]:
    """The callback (type 9) that opens the "Deny with a note…" box."""
    return {
        "type": 9,
        "data": {
            "custom_id": f"dmcp:{decision_id}:modal",
            "title": "Deny with a note",
            "components": [
                {
                    "type": 18,
                    "label": "Note for the agent",
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


def summary(action: Mapping[str, Any], tool_name: str) -> str:
    """One line naming what is asked (the decision's ``question``, the thread's name)."""
    if action.get("command") is not None:
        return f"Run: {_clip(str(action['command']), 150)}"
    if action.get("path"):
        return f"{action.get('title')}: {_clip(str(action['path']), 150)}"
    return f"Use {tool_name}"


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
