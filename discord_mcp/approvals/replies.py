"""Reading a typed reply to an approval card: allow, deny, or ask again.

An Allow is the one reading that runs something, so it is the hardest to get. A reply allows
only when both hold:

- the answer parser reads it, against the options ``Allow`` / ``Deny``, as a plain yes (``yes``,
  ``ok``, ``go ahead``, ``네``, ``はい``, ``好``, ✅) or as the word ``allow`` itself; a letter, a
  number or a fragment does not count;
- nothing anywhere in it points the other way: no no word, refusal mark or negation (``allow
  ❌``, ``allow 🙅``, ``allow, don't``), no retraction (``just kidding``, ``nvm``, ``changed my
  mind``, ``농담``, ``やっぱり``, ``当我没说``), no condition (``only if``, ``unless``,
  ``except``, ``만약``, ``なら``, ``如果``: an approval is yes or no, the agent cannot be held to
  a condition), no question, deferral or hedge.

A reply denies when the parser reads a no (``no``, ``deny``, ``❌``, ``아니요``), or when it
refuses (a no word, a refusal mark, a negation) and nothing in it allows, retracts, questions,
hedges or sets a condition: ``don't run that, it wipes prod`` is a denial, and its words are the
reason the agent is given. Everything else is unclear: a short hint, never an answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from discord_mcp.approvals.cards import OPTIONS
from discord_mcp.decisions.lexicon import WORDS, fold, phrase_pattern
from discord_mcp.decisions.parser import parse_answer

_REFUSAL = phrase_pattern(WORDS.no | WORDS.holds | WORDS.negations_before | WORDS.negations_after)
_HARMLESS = phrase_pattern(WORDS.not_negations)
_YES = phrase_pattern(WORDS.yes)
_RETRACTION = phrase_pattern(WORDS.retractions)
_CONDITION = phrase_pattern(WORDS.conditions)
_DOUBT = phrase_pattern(WORDS.questions | WORDS.deferrals | WORDS.hedges)
_ALLOW_READINGS = frozenset({"yes", "option_text"})


@dataclass(frozen=True, slots=True)
class Reading:
    """What a reply to an approval means: ``allow``, ``deny`` or ``unclear``, and why."""

    verdict: Literal["allow", "deny", "unclear"]
    reason: str


def _found(pattern: re.Pattern[str] | None, text: str) -> bool:
    return pattern is not None and bool(pattern.search(text))


def _refuses(folded: str) -> bool:
    if _REFUSAL is None:
        return False
    harmless = [m.span() for m in _HARMLESS.finditer(folded)] if _HARMLESS else []
    return any(
        not any(s <= m.start() and m.end() <= e for s, e in harmless)
        for m in _REFUSAL.finditer(folded)
    )


def read_reply(words: str) -> Reading:
    """Read the owner's own words (quotes and mentions already removed) on an approval."""
    folded = fold(words)
    if not folded:
        return Reading("unclear", "empty")
    parsed = parse_answer(words, OPTIONS)
    refuses = _refuses(folded)
    retracts = _found(_RETRACTION, folded)
    conditional = _found(_CONDITION, folded)
    doubtful = _found(_DOUBT, folded)
    if parsed.kind == "option" and parsed.selected_index == 1:
        return Reading("deny", parsed.reason)
    if parsed.kind == "option" and parsed.selected_index == 0:
        if parsed.reason not in _ALLOW_READINGS:
            return Reading("unclear", f"not an explicit allow ({parsed.reason})")
        for reason, present in (
            ("a refusal", refuses),
            ("a retraction", retracts),
            ("a condition", conditional),
            ("a doubt", doubtful),
        ):
            if present:
                return Reading("unclear", f"an allow with {reason}")
        return Reading("allow", parsed.reason)
    if refuses and not (_found(_YES, folded) or retracts or conditional or doubtful):
        return Reading("deny", "refusal")
    return Reading("unclear", parsed.reason)
