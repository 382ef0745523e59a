"""The clarifying question posted after an unclear reply.

It says why the reply was not taken, lists the options with the labels that are safe on this
card, and says how to answer. It never echoes the reply and defuses every ``@``, so nothing from
Discord (or the agent's option texts) can ping anyone.
"""

from __future__ import annotations

from collections.abc import Sequence

from discord_mcp import i18n
from discord_mcp.decisions.parser import (
    LETTERS,
    MESSAGE_LIMIT,
    label_readings,
    parse_answer,
    yes_no_targets,
)

_REASONS = frozenset(
    {
        "empty",
        "marked",
        "ambiguous",
        "out_of_range",
        "yes_no_unmapped",
        "question",
        "retracted",
        "deferred",
        "unsure",
        "negated",
    }
)
"""Why a reply was not taken (:class:`~discord_mcp.decisions.parser.Parsed` ``reason``), each a
``clarify.why_<reason>`` text in the catalogue."""
_ASK = {
    (True, True): "clarify.ask_letter_or_number",
    (True, False): "clarify.ask_letter",
    (False, True): "clarify.ask_number",
    (False, False): "clarify.ask_exact_text",
}


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def clarify_message(
    text: str,
    options: Sequence[str],
    attempt: int,
    max_attempts: int,
    language: str = "en",
    *,
    reason: str | None = None,
) -> str:
    """A short clarifying question to post in the thread after an unclear reply, in
    ``language``.

    Says why, lists the options with the labels that are safe on this card (letters and numbers,
    unless an option's own text is a letter or number: see :func:`label_readings`) and says how
    to answer. The reply is not echoed, and every ``@`` is followed by a zero-width space, so
    neither the reply nor the agent's option texts can mention ``@everyone``, ``@here``, users
    or roles. At most :data:`MESSAGE_LIMIT` characters. ``reason``: why, when the caller knows
    better than a reading of ``text`` (``marked``: words in code, struck through or behind a
    spoiler).

    Raises:
        ValueError: ``attempt`` is not within ``1..max_attempts``.
    """
    if not 1 <= attempt <= max_attempts:
        raise ValueError(f"attempt must be within 1..{max_attempts}, got {attempt}")
    lang = language
    parsed = parse_answer(text, options)
    progress = i18n.text(lang, "clarify.progress", attempt=attempt, max=max_attempts)
    if not options:
        return _defuse(i18n.text(lang, "clarify.free_text", progress=progress))
    reason = reason or parsed.reason
    reason = reason if reason in _REASONS else "unknown"
    why = i18n.text(lang, f"clarify.why_{reason}")
    letters, numbers = label_readings(options)
    lines = [
        i18n.text(lang, "clarify.why_line", why=why, progress=progress),
        i18n.text(lang, _ASK[letters, numbers]),
    ]
    budget = max(20, min(100, 1500 // len(options) - 10))
    for i, option in enumerate(options):
        letter = LETTERS[i] if letters and i < len(LETTERS) else ""
        number = (f"({i + 1})" if letter else f"{i + 1}.") if numbers else ""
        if letter and number:
            label = f"{letter} {number}"
        else:
            label = f"{letter}:" if letter else number or "-"
        lines.append(f"{label} {_clip(option, budget)}")
    if letters or numbers:
        yes, no = yes_no_targets(options)
        targets: tuple[str, str] | None = None
        if yes is not None and no is not None:
            if letters and yes < len(LETTERS) and no < len(LETTERS):
                targets = (LETTERS[yes], LETTERS[no])
            elif numbers:
                targets = (str(yes + 1), str(no + 1))
        if targets:
            lines.append(
                i18n.text(lang, "clarify.hint_exact_or_yes_no", yes=targets[0], no=targets[1])
            )
        else:
            lines.append(i18n.text(lang, "clarify.hint_exact"))
    return _defuse("\n".join(lines))


def _defuse(message: str) -> str:
    message = message.replace("@", "@\u200b")
    return message if len(message) <= MESSAGE_LIMIT else message[: MESSAGE_LIMIT - 1] + "…"
