"""The clarifying question posted after an unclear reply.

It says why the reply was not taken, lists the options with the labels that are safe on this
card, and says how to answer. It never echoes the reply and defuses every ``@``, so nothing from
Discord (or the agent's option texts) can ping anyone.
"""

from __future__ import annotations

from collections.abc import Sequence

from discord_mcp.decisions.parser import (
    LETTERS,
    MESSAGE_LIMIT,
    label_readings,
    parse_answer,
    yes_no_targets,
)

_WHY = {
    "empty": "I found no words of your own in your reply (quotes and mentions are not read).",
    "ambiguous": "Your reply seems to point at more than one option.",
    "out_of_range": "That letter or number is not one of the options.",
    "yes_no_unmapped": "A plain yes or no does not pick one of these options.",
    "question": "Your reply reads as a question, so I did not take it as an answer.",
    "deferred": "Your reply asks to wait, so I did not take it as an answer yet.",
    "unsure": "Your reply sounds unsure, so I did not take it as an answer.",
    "negated": "Your reply says no to an option, so I could not tell which one you want.",
}


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def clarify_message(text: str, options: Sequence[str], attempt: int, max_attempts: int) -> str:
    """A short clarifying question to post in the thread after an unclear reply.

    Says why, lists the options with the labels that are safe on this card (letters and numbers,
    unless an option's own text is a letter or number: see :func:`label_readings`) and says how
    to answer. The reply is not echoed, and every ``@`` is followed by a zero-width space, so
    neither the reply nor the agent's option texts can mention ``@everyone``, ``@here``, users
    or roles. At most :data:`MESSAGE_LIMIT` characters.

    Raises:
        ValueError: ``attempt`` is not within ``1..max_attempts``.
    """
    if not 1 <= attempt <= max_attempts:
        raise ValueError(f"attempt must be within 1..{max_attempts}, got {attempt}")
    parsed = parse_answer(text, options)
    progress = f"(attempt {attempt} of {max_attempts})"
    if not options:
        return _defuse(
            f"I did not get an answer {progress}. Please reply with your answer as text."
        )
    why = _WHY.get(parsed.reason, "I could not tell which option you meant.")
    letters, numbers = label_readings(options)
    ask = {
        (True, True): "Please reply with just one letter or number:",
        (True, False): "Please reply with just one letter (a number is read as an option's text):",
        (False, True): "Please reply with just one number (a letter is read as an option's text):",
        (False, False): "Please reply with the exact text of one option:",
    }[letters, numbers]
    lines = [f"{why} {progress}", ask]
    budget = max(20, min(100, 1500 // len(options) - 10))
    for i, option in enumerate(options):
        letter = LETTERS[i] if letters and i < len(LETTERS) else ""
        number = (f"({i + 1})" if letter else f"{i + 1}.") if numbers else ""
        if letter and number:
            label = f"{letter} {number}"
        else:
            label = f"{letter}:" if letter else number or "-"
        lines.append(f"{label} {_clip(option, budget)}")
    yes, no = yes_no_targets(options)
    hint = "You can also reply with an option's exact text" if letters or numbers else ""
    if yes is not None and no is not None and (letters or numbers):
        if letters and yes < len(LETTERS) and no < len(LETTERS):
            hint += f", or yes for {LETTERS[yes]} and no for {LETTERS[no]}"
        elif numbers:
            hint += f", or yes for {yes + 1} and no for {no + 1}"
    lines.extend([hint + "."] if hint else [])
    return _defuse("\n".join(lines))


def _defuse(message: str) -> str:
    message = message.replace("@", "@\u200b")
    return message if len(message) <= MESSAGE_LIMIT else message[: MESSAGE_LIMIT - 1] + "…"
