"""Judging what someone did in a decision's thread: answer, unclear reply, or not allowed.

Pure functions: the same judgement serves REST polling and live gateway events, so a reply is
treated the same whichever way it arrives. Only the owner's own words are judged
(:func:`owner_words`: no quoted lines, no mentions). Only owners resolve; anyone else is
recorded and told once. An unclear reply gets a clarifying question at most
:data:`MAX_CLARIFICATIONS` times, then the reply itself is taken as a free-text answer. A long
reply in the owner's own words that picks no option (:func:`long_free_text`: 15+ characters,
or 3+ Hangul syllables, as the Decision MCP seed reads natural language) is taken so after one
clarifying question: the owner is writing an answer, not missing a letter.
"""

from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass, field
from typing import Any, Literal

from discord_mcp import i18n
from discord_mcp.decisions.cards import refusal_text
from discord_mcp.decisions.clarify import clarify_message
from discord_mcp.decisions.model import Attempt, Decision, Via, utc_now
from discord_mcp.decisions.parser import ParsedAnswer, parse_answer
from discord_mcp.files.store import OwnerFiles
from discord_mcp.transport.wire import content_withheld, text_of

MAX_CLARIFICATIONS = 2
LONG_REPLY_CHARS = 15
LONG_REPLY_HANGUL = 3
_PICKS_NONE = frozenset({"no_match", "question", "deferred", "unsure"})
"""Reasons of a reply that names no option (neither two of them, nor a label out of range, nor
a yes or no the card cannot map, nor a refusal of one, nor words set apart)."""


def long_free_text(text: str, reason: str | None) -> bool:
    """Whether an unclear reply is the owner's own answer in words: it picks no option
    (``reason``) and is long, 15 characters or more, or 3 Hangul syllables or more."""
    if reason not in _PICKS_NONE:
        return False
    stripped = text.strip()
    hangul = sum(1 for c in stripped if "\uac00" <= c <= "\ud7a3")
    return len(stripped) >= LONG_REPLY_CHARS or hangul >= LONG_REPLY_HANGUL


CONTENT_HIDDEN = "content_hidden"


def content_hint(language: str) -> str:
    """The one-time notice when Discord hides replies' text from the bot."""
    return i18n.text(language, "notice.content_hidden")


_QUOTE_LINE = re.compile(r"\s*>(?: |$)")
_BLOCK_QUOTE = re.compile(r"\s*>>>(?: |$)")
_MENTION = re.compile(r"<(?:@[!&]?|#)\d+>|@(?:everyone|here)(?![A-Za-z0-9_])")
_CODE_BLOCK = re.compile(r"```.*?```", re.DOTALL)
_MARKED = re.compile(r"``(?!`)(.+?)``|`([^`]+)`|~~(.+?)~~|\|\|(.+?)\|\|", re.DOTALL)
"""Inline code, strikethrough and spoilers, as Discord draws them (a marker left open is
plain text, as Discord shows it)."""


@dataclass(frozen=True, slots=True)
class OwnerWords:
    """The owner's plain words in a message, and whether words were set apart from them.

    ``marked``: the message held words in code, struck through or behind a spoiler. They are
    not the owner's plain word (``~~yes~~`` is a yes taken back, ``||yes||`` a hidden one,
    ```yes``` a quotation): they are left out, and a reply that would pick an option or allow
    beside them is asked about again, since what they say is unknown.
    """

    text: str
    marked: bool


def read_owner_words(content: str) -> OwnerWords:
    """The owner's own words in a message (:func:`owner_words`), and whether any were set
    apart in code, strikethrough or spoilers (:class:`OwnerWords`)."""
    marked = False

    def drop(match: re.Match[str]) -> str:
        nonlocal marked
        marked = marked or bool(match.group().strip("`~| \n"))
        return " "

    lines: list[str] = []
    for line in _CODE_BLOCK.sub(drop, content).splitlines():
        if _BLOCK_QUOTE.match(line):
            break
        if not _QUOTE_LINE.match(line):
            lines.append(line)
    text = _MARKED.sub(drop, "\n".join(lines))
    return OwnerWords(_MENTION.sub(" ", text).strip(), marked)


def owner_words(content: str) -> str:
    """The owner's own words in a message, the only part that is judged.

    Quoted lines are someone else's words (often the card itself): Discord's ``> `` quotes a
    line and ``>>> `` quotes the rest of the message. User, role and channel mentions
    (``<@1>``, ``<@!1>``, ``<@&1>``, ``<#1>``) and ``@everyone``/``@here`` name people, not
    options. Code (inline or in a block), struck-through words and spoilers are not the
    owner's plain word either (:class:`OwnerWords`).
    """
    return read_owner_words(content).text


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to do about one event.

    Attributes:
        kind: ``resolve`` (``changes`` finish the decision), ``clarify`` (ask again with
            ``reply``; ``changes`` count it), ``refuse`` (record the attempt in ``changes``, and
            ``reply`` if this person was not told yet), ``notice`` (a one-time hint), or
            ``ignore``.
        changes: fields to set on the decision, under its lock.
        reply: a message to post in the thread, if any.
    """

    kind: Literal["resolve", "clarify", "refuse", "notice", "ignore"]
    changes: dict[str, Any] = field(default_factory=dict)
    reply: str | None = None


IGNORE = Verdict("ignore")


def refuse(
    decision: Decision,
    owner_ids: Set[str],
    user_id: str,
    username: str,
    via: str,
    message_id: str | None,
) -> Verdict:
    attempt = Attempt(
        user_id=user_id, username=username, via=via, at=utc_now(), message_id=message_id
    )
    changes: dict[str, Any] = {"refused": (*decision.refused, attempt)}
    reply = None
    if user_id not in decision.refusal_replied_to:
        changes["refusal_replied_to"] = (*decision.refusal_replied_to, user_id)
        reply = refusal_text(user_id, owner_ids, via, decision.language)
    return Verdict("refuse", changes, reply)


def _answered(
    user_id: str,
    username: str,
    via: Via,
    answer: str,
    index: int | None,
    option: str | None,
) -> Verdict:
    return Verdict(
        "resolve",
        {
            "status": "answered",
            "answer": answer,
            "selected_index": index,
            "selected_option": option,
            "answered_by": user_id,
            "answered_by_name": username,
            "via": via,
            "answered_at": utc_now(),
        },
    )


def judge_message(
    decision: Decision, message: dict[str, Any], owner_ids: Set[str], bot_user_id: str | None
) -> Verdict:
    """Judge one message posted in the decision's thread."""
    author = message.get("author") or {}
    user_id = str(author.get("id", ""))
    if decision.is_final or author.get("bot") or user_id == bot_user_id or not user_id:
        return IGNORE
    if message.get("type", 0) not in (0, 19):  # default and reply; not joins, pins, ...
        return IGNORE
    username = str(author.get("global_name") or author.get("username") or user_id)
    if user_id not in owner_ids:
        return refuse(decision, owner_ids, user_id, username, "text", message.get("id"))
    content = text_of(message)  # a forwarded message says what it forwards
    files = OwnerFiles.listed(message)
    if not content.strip() and files:
        # A file alone (a screenshot, a voice message) answers in the owner's own words.
        verdict = _answered(user_id, username, "text", files_answer(files), None, None)
        return _with_files(verdict, message, files)
    if not content.strip():
        if not content_withheld(message):
            return IGNORE  # a sticker alone (or a forwarded one) is not an answer
        # Discord withholds message text from bots without the Message Content intent.
        if CONTENT_HIDDEN in decision.notices:
            return IGNORE
        return Verdict(
            "notice",
            {"notices": (*decision.notices, CONTENT_HIDDEN)},
            content_hint(decision.language),
        )
    words = read_owner_words(content)
    text = words.text
    parsed = parse_answer(text, decision.options)
    if words.marked and (parsed.kind == "option" or not text):
        parsed = ParsedAnswer("unclear", None, None, parsed.text, "marked")  # never a pick
    if parsed.kind == "option":
        return _with_files(
            _answered(
                user_id,
                username,
                "text",
                parsed.text,
                parsed.selected_index,
                parsed.selected_option,
            ),
            message,
            files,
        )
    if decision.clarifications >= MAX_CLARIFICATIONS and not text:
        return IGNORE  # only quotes or mentions: nothing of the owner's to record
    long = not words.marked and long_free_text(text, parsed.reason)
    if (
        parsed.kind == "free_text"
        or decision.clarifications >= MAX_CLARIFICATIONS
        or (long and decision.clarifications >= 1)
    ):
        return _with_files(
            _answered(user_id, username, "text", parsed.text, None, None), message, files
        )
    attempt = decision.clarifications + 1
    return Verdict(
        "clarify",
        {"clarifications": attempt},
        clarify_message(
            text,
            decision.options,
            attempt,
            attempt if long else MAX_CLARIFICATIONS,
            decision.language,
            reason="marked" if parsed.reason == "marked" else None,
        ),
    )


def files_answer(files: list[dict[str, Any]]) -> str:
    """The answer text of a reply that is only files: ``[file: shot.png]``, ``[voice message:
    voice-message.ogg]``, ``[files: a.png, b.txt]``."""
    names = ", ".join(str(f["filename"]) for f in files)
    if any(f.get("voice_message") for f in files):
        return f"[voice message: {names}]"
    return f"[{'file' if len(files) == 1 else 'files'}: {names}]"


def _with_files(verdict: Verdict, message: dict[str, Any], files: list[dict[str, Any]]) -> Verdict:
    if files:
        verdict.changes["attachments"] = tuple(files)
        verdict.changes["answer_message_id"] = str(message.get("id") or "") or None
    return verdict


def judge_reaction(
    decision: Decision, user_id: str, username: str, emoji: str, owner_ids: Set[str]
) -> Verdict:
    """Judge a reaction on the decision's card."""
    if decision.is_final or emoji not in decision.reaction_emojis:
        return IGNORE
    if user_id not in owner_ids:
        return refuse(decision, owner_ids, user_id, username, "reaction", None)
    index = decision.reaction_emojis.index(emoji)
    option = decision.options[index]
    return _answered(user_id, username, "reaction", option, index, option)


def judge_choice(
    decision: Decision,
    user_id: str,
    username: str,
    owner_ids: Set[str],
    *,
    via: Via,
    index: int | None,
    text: str | None = None,
) -> Verdict:
    """Judge a button click, a select choice (``index``) or a modal's free text (``text``)."""
    if decision.is_final:
        return IGNORE
    if user_id not in owner_ids:
        return refuse(decision, owner_ids, user_id, username, via, None)
    if index is not None and 0 <= index < len(decision.options):
        option = decision.options[index]
        return _answered(user_id, username, via, option, index, option)
    if text and text.strip():
        return _answered(user_id, username, via, text.strip(), None, None)
    return IGNORE
