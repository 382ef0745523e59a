"""What a reply refuses, questions or puts off: the reasons a reading must not stand.

The parser reads a reply for the option it names; this module reads the same reply as a whole
for what would make that reading wrong. A wrong answer can cost the owner a production database
while a clarifying question costs one message, so these are vetoes, never selections:

- **A question** ("delete the old branches? no!", "B吗", "2番ですか"): nothing is chosen.
- **A deferral** ("wait", "not yet", "나중에", "後で", "等一下") or **a hedge** ("maybe", "아마",
  "たぶん", "也许"): nothing is chosen. **A hold** ("보류", "保留", "暂缓") is a deferral too,
  except that it is the no itself on a card whose options are a yes and a no.
- **A retraction** ("just kidding", "nvm", "changed my mind", "농담", "やっぱり", "当我没说"):
  the reply takes back what it said; nothing is chosen.
- **A negation** points at the option named after it in the same clause ("don't delete them",
  "不要B"), or, when none follows, at the one before it ("B 하지 마", "Bはだめ", "B不行");
  ``negations_after`` words look backwards first ("B 말고 A" refuses B). A negation with no
  option in its clause ("B, no!", "B but don't merge") contradicts any yes-like reading.
- **Another option named** by its own text and not negated: the reply names two options.

Clauses end at punctuation and at separator or connective words ("but", "because", "하지만",
"けど", "但是"). An option is *named* by its own text (folded, punctuation-blind), or by a
standalone letter or number, read as the option whose text it is, else as a label ("a" and "i"
are English words, so they never name option A or I here: a negation near them counts as one
with no option, which is the stricter reading). Words inside
an option's own text never count ("Wait for CI", "Don't merge"), nor do harmless compounds
(``not_negations``: "no problem", "不错", "問題ない").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from discord_mcp.decisions.lexicon import WORDS, fold, phrase_pattern, split_words

_ASCII_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789'")
_CLAUSE_CHARS = re.compile(r"[,;.!?:\n、。…()\[\]]")
_TOKEN = re.compile(r"(?<![a-z0-9'])([b-hj-z]|[0-9]{1,3})(?![a-z0-9'])")
_LETTERS = "abcdefghijklmnopqrstuvwxy"


_NEGATION = phrase_pattern(WORDS.negations_before | WORDS.negations_after)
_AFTER = {fold(w) for w in WORDS.negations_after} - {fold(w) for w in WORDS.negations_before}
_HARMLESS = phrase_pattern(WORDS.not_negations)
_DEFERRAL = phrase_pattern(WORDS.deferrals)
_HOLD = phrase_pattern(WORDS.holds)
_RETRACTION = phrase_pattern(WORDS.retractions)
_HEDGE = phrase_pattern(WORDS.hedges)
_QUESTION = phrase_pattern(WORDS.questions)
_CLAUSE_WORDS = phrase_pattern(WORDS.separators | WORDS.connectives)


def text_pattern(folded: str) -> re.Pattern[str] | None:
    """Where a folded option text (or any words) occurs in a folded reply, punctuation-blind."""
    words = split_words(folded)
    if not words:  # an emoji or punctuation-only option
        chars = folded.replace(" ", "").replace("\n", "")
        return re.compile(" ?".join(map(re.escape, chars))) if chars else None
    body = r"[^\w?]*".join(re.escape(w).replace("'", "'?") for w in words)
    head = "(?<![a-z0-9'])" if words[0][0] in _ASCII_WORD else ""
    tail = "(?![a-z0-9'])" if words[-1][-1] in _ASCII_WORD else ""

    # the option's own marks belong to it: replying "Ship it?" to the option "Ship it?"
    def mark(ch: str) -> bool:
        return not (ch.isalnum() or ch.isspace())

    lead = len(folded) - len("".join(itertools.dropwhile(mark, folded)))
    end = len("".join(itertools.dropwhile(mark, reversed(folded))))
    if lead:
        head = f"(?:{re.escape(folded[:lead])})?{head}"
    if end < len(folded):
        tail = f"{tail}(?:{re.escape(folded[end:])})?"
    return re.compile(head + body + tail)


@dataclass(frozen=True, slots=True)
class Doubts:
    """What in a reply stands against reading it as a choice.

    Attributes:
        question: the reply asks something.
        deferred: it asks to wait.
        held: it puts the choice on hold (a no, when that is what picked the option).
        retracted: it takes back what it said.
        unsure: it hedges.
        negated: options a negation points at.
        loose: a negation points at no option.
        named: options named by their own text and not negated.
    """

    question: bool = False
    deferred: bool = False
    held: bool = False
    retracted: bool = False
    unsure: bool = False
    negated: frozenset[int] = frozenset()
    loose: bool = False
    named: frozenset[int] = frozenset()

    def veto(self, index: int, *, said_no: bool) -> str | None:
        """Why choosing option ``index`` would be wrong, or None. ``said_no``: the choice was
        read from a no word ("no", "안 돼"), so a negation without an option agrees with it."""
        if self.question:
            return "question"
        if self.retracted:
            return "retracted"
        if self.deferred or (self.held and not said_no):
            return "deferred"
        if self.unsure:
            return "unsure"
        if self.named - {index}:
            return "ambiguous"  # "no aaa" when "no" is an option too
        if index in self.negated or (self.loose and not said_no):
            return "negated"
        return None

    @property
    def reason(self) -> str | None:
        """The clarifying reason for a reply that chose nothing, if a doubt explains it."""
        if self.question:
            return "question"
        if self.retracted:
            return "retracted"
        if self.deferred or self.held:
            return "deferred"
        if self.unsure:
            return "unsure"
        return "negated" if self.negated or self.loose else None


_Span = tuple[int, int, int]  # start, end, option index


def _inside(start: int, end: int, spans: Iterable[_Span]) -> bool:
    return any(s <= start and end <= e for s, e, _ in spans)


def _finds(pattern: re.Pattern[str] | None, text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in pattern.finditer(text)] if pattern else []


def _text_mentions(t: str, texts: Sequence[str], partial: tuple[int, str] | None) -> list[_Span]:
    found: list[_Span] = []
    patterns = [(i, text_pattern(text)) for i, text in enumerate(texts)]
    if partial is not None:
        patterns.append((partial[0], text_pattern(partial[1])))
    for i, pattern in patterns:
        found += [(s, e, i) for s, e, _ in _finds(pattern, t) if e > s]
    taken: list[_Span] = []
    for span in sorted(found, key=lambda s: (s[0] - s[1], s[0])):  # longest first
        if all(span[1] <= s or e <= span[0] for s, e, _ in taken):
            taken.append(span)
    return taken


def _token_option(token: str, keys: Sequence[str]) -> int | None:
    """The option a bare letter or number names: the one whose text it is, else its label."""
    by_text = [i for i, key in enumerate(keys) if key == token]
    if by_text:
        return by_text[0] if len(by_text) == 1 else None
    index = int(token) - 1 if token.isdigit() else _LETTERS.find(token)
    return index if 0 <= index < len(keys) else None


def read_doubts(
    t: str, texts: Sequence[str], keys: Sequence[str], partial: tuple[int, str] | None = None
) -> Doubts:
    """The doubts in folded reply ``t`` against folded option ``texts`` and their alphanumeric
    ``keys``. ``partial``: (option, words) when the reply is a fragment of that option's text."""
    negations = _finds(_NEGATION, t)
    harmless = [(s, e, -1) for s, e, _ in _finds(_HARMLESS, t)]
    mentions = [
        (s, e, i)
        for s, e, i in _text_mentions(t, texts, partial)
        if not any(ns <= s and e <= ne and e - s < ne - ns for ns, ne, _ in negations)
    ]  # a text inside a negation is part of it: option "마" in "하지 마"
    by_text = {i for _, _, i in mentions}
    for m in _TOKEN.finditer(t):
        s, e = m.span()
        if (s >= 2 and t[s - 2].isdigit() and t[s - 1] in ".,:") or (
            t[e : e + 1] in (".", ",", ":") and t[e + 1 : e + 2].isdigit()
        ):
            continue  # "2.5", "2:30", "2,000"
        index = _token_option(m.group(), keys)
        if index is not None and not _inside(s, e, mentions):
            mentions.append((s, e, index))

    def outside(
        found: list[tuple[int, int, str]], *more: list[_Span]
    ) -> list[tuple[int, int, str]]:
        blocked = [*mentions, *(span for spans in more for span in spans)]
        return [(s, e, w) for s, e, w in found if not _inside(s, e, blocked)]

    breaks = [(s, e) for s, e, _ in outside(_finds(_CLAUSE_WORDS, t))]
    breaks += [m.span() for m in _CLAUSE_CHARS.finditer(t) if not _inside(*m.span(), mentions)]
    negated: set[int] = set()
    loose = False
    for s, e, word in outside(negations, harmless):
        lo = max((be for bs, be in breaks if be <= s), default=0)
        hi = min((bs for bs, be in breaks if bs >= e), default=len(t))
        after = sorted(m for m in mentions if m[0] >= e and m[1] <= hi)
        before = sorted(m for m in mentions if m[1] <= s and m[0] >= lo)
        first, second = (before[::-1], after) if word in _AFTER else (after, before[::-1])
        if targets := first or second:
            negated.add(targets[0][2])
        else:
            loose = True
    return Doubts(
        question=bool(outside(_finds(_QUESTION, t))),
        deferred=bool(outside(_finds(_DEFERRAL, t))),
        held=bool(outside(_finds(_HOLD, t))),
        retracted=bool(outside(_finds(_RETRACTION, t))),
        unsure=bool(outside(_finds(_HEDGE, t))),
        negated=frozenset(negated),
        loose=loose,
        named=frozenset(by_text - negated),
    )
