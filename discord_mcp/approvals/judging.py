"""Judging what someone did on an approval card: allow, deny, unclear, or not allowed.

Pure functions, like :mod:`discord_mcp.decisions.answers` (whose :class:`Verdict` and refusal
they share): only owners resolve; a stranger is recorded and told once. A reply is read by
:mod:`~discord_mcp.approvals.replies` (an explicit allow with nothing against it, or a
refusal); a text reply that denies is passed to the agent as the reason. An unclear reply gets
a short hint (at most :data:`MAX_HINTS` times), and is never taken as an answer. Which card of
a thread a reply is for is :mod:`~discord_mcp.decisions.routing`'s call.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from discord_mcp import i18n
from discord_mcp.approvals.acp_parts import OPTION_PART, option_for_part
from discord_mcp.approvals.cards import (
    ALLOW_ONCE,
    ALLOW_SESSION,
    DENY,
    DENY_NOTE,
    REACTIONS,
)
from discord_mcp.approvals.replies import Reading, read_reply
from discord_mcp.decisions.answers import (
    CONTENT_HIDDEN,
    IGNORE,
    Verdict,
    content_hint,
    read_owner_words,
    refuse,
)
from discord_mcp.decisions.model import Decision, Via, utc_now

MAX_HINTS = 2


def allowed(user_id: str, username: str, via: Via, *, session: bool = False) -> Verdict:
    return Verdict(
        "resolve",
        {
            "status": "answered",
            "answer": "allow",
            "selected_option": ALLOW_SESSION if session else ALLOW_ONCE,
            "selected_index": 0,
            "scope": "session" if session else "once",
            "answered_by": user_id,
            "answered_by_name": username,
            "via": via,
            "answered_at": utc_now(),
        },
    )


def denied(user_id: str, username: str, via: Via, note: str | None = None) -> Verdict:
    note = note.strip() if note and note.strip() else None
    return Verdict(
        "resolve",
        {
            "status": "answered",
            "answer": "deny",
            "selected_option": DENY_NOTE if note and via == "modal" else DENY,
            "selected_index": 1,
            "note": note,
            "answered_by": user_id,
            "answered_by_name": username,
            "via": via,
            "answered_at": utc_now(),
        },
    )


def judge_message(decision: Decision, message: dict[str, Any], owner_ids: Set[str]) -> Verdict:
    """Judge one message posted in the approval's thread."""
    author = message.get("author") or {}
    user_id = str(author.get("id", ""))
    if decision.is_final or author.get("bot") or not user_id:
        return IGNORE
    if message.get("type", 0) not in (0, 19):
        return IGNORE
    if not _replies_to_us(decision, message):
        return IGNORE
    if decision.gave_up_at and not _reference(message):
        # Its agent stopped waiting: a plain message in the thread is the owner's next words
        # to the session (a new job), not a late answer; a reply to the card still is one.
        return IGNORE
    username = str(author.get("global_name") or author.get("username") or user_id)
    if user_id not in owner_ids:
        return refuse(decision, owner_ids, user_id, username, "text", message.get("id"))
    text = str(message.get("content") or "").strip()
    if not text:
        if message.get("attachments") or message.get("sticker_items") or message.get("embeds"):
            return IGNORE
        if CONTENT_HIDDEN in decision.notices:
            return IGNORE
        return Verdict(
            "notice",
            {"notices": (*decision.notices, CONTENT_HIDDEN)},
            content_hint(decision.language),
        )
    words = read_owner_words(text)
    reading = read_reply(words.text)
    if reading.verdict == "allow" and words.marked:
        # Beside words in code, struck through or behind a spoiler, what the owner meant is
        # unknown: an allow (the one reading that runs something) is asked about again.
        reading = Reading("unclear", "an allow beside marked-up words")
    if reading.verdict == "allow":
        return allowed(user_id, username, "text")
    if reading.verdict == "deny":
        return denied(user_id, username, "text", words.text or text)
    if decision.clarifications >= MAX_HINTS:
        return IGNORE
    return Verdict(
        "clarify",
        {"clarifications": decision.clarifications + 1},
        i18n.text(decision.language, "approval.hint"),
    )


def _reference(message: dict[str, Any]) -> str:
    reference = message.get("message_reference") or {}
    return str(reference.get("message_id") or "")


def _replies_to_us(decision: Decision, message: dict[str, Any]) -> bool:
    """A message that replies (Discord's reply) to another message than this card is not an
    answer to it: in a run's thread several cards may be open at once."""
    target = _reference(message)
    return not target or target == decision.card_message_id


def judge_reaction(
    decision: Decision, user_id: str, username: str, emoji: str, owner_ids: Set[str]
) -> Verdict:
    """✅ allows once, ❌ denies."""
    if decision.is_final or emoji not in REACTIONS:
        return IGNORE
    if user_id not in owner_ids:
        return refuse(decision, owner_ids, user_id, username, "reaction", None)
    if emoji == REACTIONS[0]:
        return allowed(user_id, username, "reaction")
    return denied(user_id, username, "reaction")


def judge_click(
    decision: Decision,
    user_id: str,
    username: str,
    owner_ids: Set[str],
    *,
    part: str,
    note: str | None = None,
) -> Verdict:
    """A button (``allow``, ``session``, ``deny``) or the note modal's submit (``modal``)."""
    if decision.is_final:
        return IGNORE
    via: Via = "modal" if part == "modal" else "button"
    if user_id not in owner_ids:
        return refuse(decision, owner_ids, user_id, username, via, None)
    if part == "allow":
        return allowed(user_id, username, via)
    if part == "session":
        return allowed(user_id, username, via, session=True)
    if part == "deny":
        return denied(user_id, username, via)
    if part == "modal" and note and note.strip():
        return denied(user_id, username, via, note)
    option = option_for_part(decision, part) if OPTION_PART.match(part) else None
    if option is not None:  # an ACP agent's own option, by its name
        return _option_chosen(decision, option, user_id, username)
    return IGNORE


def _option_chosen(
    decision: Decision, option: dict[str, str], user_id: str, username: str
) -> Verdict:
    allows = option.get("kind", "").startswith("allow")
    verdict = (
        allowed(user_id, username, "button") if allows else denied(user_id, username, "button")
    )
    approval = {**(decision.approval or {}), "acp_choice": option["option_id"]}
    return Verdict(
        "resolve",
        {
            **verdict.changes,
            "selected_option": option.get("name") or option["part"],
            "approval": approval,
        },
    )
