"""Turn the owner's free-text reply in a decision thread into an answer.

Pure functions, no I/O. The owner answers on a phone, in English, Korean, Japanese or Chinese;
the words come from data files (:mod:`discord_mcp.decisions.lexicon`). A wrong answer is worse
than none: when unsure, the reply is ``unclear`` and the owner is asked again. First a reading:

1. **Empty** reply -> ``unclear`` (``empty``). **No options** -> ``free_text`` (``no_options``).
2. **The option's own text**, exact after case, width, whitespace and punctuation folding. It
   beats every other reading: with options "10", "5", "1" the reply "1" is "1".
3. **A choice marker** for the card's labels (A-Y, 1-N): ``A``, ``(a)``, ``2.``, ``#2``,
   ``option 2``, ``2번으로 해줘``, ``B로``, ``選択肢2``, ``2でお願いします``, ``第2个``, ``选B``,
   ``2️⃣``, full-width ``２``, ordinals (``the second one``, ``2nd``, ``두 번째``, ``二つ目``,
   ``第二个``, ``最初の``, ``last``). When an option's text is the marker's letter or number,
   that option wins ("B로 해줘" with options "B", "A" is "B"), unless the marker is worded as a
   position ("option 1", "(b)", "1번"): then it is ``ambiguous``. The marker must be the whole
   reply, optionally followed by politeness/endorsement words and then a separator (``,``
   ``)`` ``-`` ``:`` ``because`` ``and``...) and an explanation. A bare letter or number
   followed by prose is not a choice ("a bit later", "I need 2 more days"). If the
   explanation itself starts with another choice ("A, B", "A, or maybe B") the reply is
   ``ambiguous``. Out-of-range labels match nothing.
4. **Yes/no words** (:data:`YES_WORDS`, :data:`NO_WORDS`, and hold words as a no), mapped by
   :func:`yes_no_targets`: only on a card whose options are a yes and a no (else
   ``yes_no_unmapped``). A reply mixing yes and no is ``ambiguous``; an explanation naming a
   different option is too.
5. **Containment**: a unique option whose text (>= 3 characters, whole words for ASCII) occurs in
   the reply and is not preceded by a negation ("don't use SQLite"), else a unique option that
   contains the reply (>= 3 characters, from a word start for ASCII): ``option_text_partial``.
6. Otherwise ``unclear``: ``out_of_range``, ``yes_no_unmapped``, ``ambiguous`` (the reply names
   two or more options) or ``no_match``.

Then the whole reply is read for doubts (:mod:`discord_mcp.decisions.doubts`): a question, a
deferral, a hedge, or a negation of the chosen option (or of nothing, after a yes-like reading)
turns the reading into ``unclear`` with reason ``question``, ``deferred``, ``unsure`` or
``negated``. "delete the old branches? no!" never selects "Delete the old branches".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from string import ascii_letters
from typing import Literal

from discord_mcp.decisions.doubts import read_doubts
from discord_mcp.decisions.lexicon import WORDS, fold, split_words

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXY"
"""Option labels A-Y: at most 25 options are lettered."""
MESSAGE_LIMIT = 2000

YES_WORDS = WORDS.yes
"""Replies that mean yes (matched whole, case-insensitively, after folding)."""
NO_WORDS = WORDS.no
"""Replies that mean no."""
_CJK_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")}


@dataclass(frozen=True, slots=True)
class ParsedAnswer:
    """What a reply means.

    Attributes:
        kind: ``option`` (one of the options), ``free_text`` (the question had no options) or
            ``unclear`` (ask again).
        selected_index: 0-based index into the options when ``kind == "option"``.
        selected_option: ``options[selected_index]`` when ``kind == "option"``.
        text: the reply, stripped.
        reason: why, for logs and the clarifying question: ``letter``, ``number``, ``ordinal``,
            ``option_text``, ``option_text_partial``, ``yes``, ``no``, ``no_options``,
            ``empty``, ``ambiguous``, ``out_of_range``, ``yes_no_unmapped``, ``no_match``, or
            a doubt: ``question``, ``retracted``, ``deferred``, ``unsure``, ``negated``.
    """

    kind: Literal["option", "free_text", "unclear"]
    selected_index: int | None
    selected_option: str | None
    text: str
    reason: str


def _table(words: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Normalised words by first character, longest first (so "nope" wins over "no")."""
    table: dict[str, list[str]] = {}
    for word in {fold(w) for w in words} - {""}:
        table.setdefault(word[0], []).append(word)
    return {k: tuple(sorted(v, key=len, reverse=True)) for k, v in table.items()}


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789'")


def _match_word(t: str, pos: int, table: dict[str, tuple[str, ...]]) -> int:
    """End of the longest table word at ``pos`` (ASCII words end on a word boundary), or -1."""
    for word in table.get(t[pos], ()) if pos < len(t) else ():
        end = pos + len(word)
        if t.startswith(word, pos) and not (
            word[-1] in _WORD_CHARS and t[end : end + 1] in _WORD_CHARS
        ):
            return end
    return -1


_YES = _table(YES_WORDS)
_NO = _table(NO_WORDS | WORDS.holds)
_FILLER = _table(WORDS.filler)
_SEP_WORDS = _table(WORDS.separators)
_TAIL_WORDS = WORDS.choice_tails | WORDS.filler
_CHOICE_TAILS = _table(_TAIL_WORDS | {w for w in YES_WORDS if not w.isascii()})
_CHOICE_TAILS_ASCII_YES = _table(_TAIL_WORDS | YES_WORDS)
_LEADERS = _table(WORDS.connectives | WORDS.separators)
_YES_LEAD = _table(YES_WORDS | WORDS.filler)
_ANY_ANSWER_WORD = _table(
    WORDS.connectives | WORDS.separators | YES_WORDS | NO_WORDS | WORDS.holds | WORDS.filler
)
_SEP_CHARS = frozenset(",.!;:)-–—…/\n、。·]】」>(")
_TIGHT_SEPS = frozenset(".,:-/")  # "2.5", "2,000", "2:30", "2-3", "a/b" are not choices


def _alternation(words: Iterable[str]) -> str:
    parts = sorted({fold(w) for w in words}, key=len, reverse=True)
    return "|".join(re.escape(p) + ("(?![a-z])" if p[-1] in ascii_letters else "") for p in parts)


_ORDINALS = {fold(word): position for word, position in WORDS.ordinals.items()}
_NUMERAL_PREFIXES = frozenset(map(fold, WORDS.numeral_prefixes))
_ORDINAL_PREFIXES = frozenset(map(fold, WORDS.ordinal_prefixes))
_ORDINAL_UNITS = frozenset(map(fold, WORDS.ordinal_units))
_CONTAINMENT_NEGATIONS = frozenset(
    w for w in map(fold, WORDS.negations_before) if w.isascii() and " " not in w
)
_PREFIX_RE = re.compile(f"({_alternation(WORDS.choice_prefixes)})(?: ?[:#])? ?")
_OPEN_RE = re.compile(r"[(\[【「<] ?")
_ORDINAL_WORD_RE = re.compile(f"(?:{_alternation(_ORDINALS)})")
# "두 번째": a count word, then its counter with optional spaces ("두번째", "두 번 째").
_COUNTED_ORDINALS = [
    (
        re.compile(f"({_alternation(counts)})" + "".join(f" ?{re.escape(c)}" for c in counter)),
        {fold(word): n for word, n in counts.items()},
    )
    for counter, counts in WORDS.counted_ordinals
]
_DIGITS_RE = re.compile(r"([0-9]{1,3})(?![0-9])(st|nd|rd|th)?(?![a-z])")
_CJK_NUMBER_RE = re.compile("[〇一二三四五六七八九十]{1,3}")
_LETTER_RE = re.compile(r"[a-z](?![a-z0-9'])")
_UNIT_RE = re.compile(f" ?({_alternation(WORDS.units | WORDS.ordinal_units)})")
_POSTNOUN_RE = re.compile(f" ?(?:{_alternation(WORDS.post_nouns)})")
_PARTICLE_RE = re.compile(_alternation(WORDS.particles))


def _cjk_number(text: str) -> int | None:
    head, ten, tail = text.partition("十")
    if len(head) > 1 or len(tail) > 1 or "十" in tail or not (ten or head):
        return None  # "一二", "十十": not a numeral
    return _CJK_DIGITS.get(head, 1) * (10 if ten else 1) + _CJK_DIGITS.get(tail, 0)


@dataclass(frozen=True, slots=True)
class _Marker:
    index: int | None  # None: a clear marker, but out of range
    reason: str
    explanation: str
    token: str  # the letter, number or ordinal itself: "b", "1", "second"
    positional: bool  # worded as a position ("option 1", "(b)", "2번", "2nd"), not as a text


def _ending(t: str, pos: int) -> tuple[str, str] | None:
    """After an answer: ``(separator, explanation)`` if the rest is empty or an explanation."""
    while pos < len(t) and t[pos] == " ":
        pos += 1
    if pos == len(t):
        return "", ""
    if t[pos] in _SEP_CHARS:
        after = t[pos + 1 : pos + 2]
        if t[pos] in _TIGHT_SEPS and after.isascii() and after.isalnum():
            return None
        return t[pos], t[pos + 1 :].strip()
    end = _match_word(t, pos, _SEP_WORDS)
    return (t[pos:end], t[end:].strip()) if end > 0 else None


def _match_marker(t: str, n: int) -> _Marker | None:
    """A whole-reply choice marker, or None. Depends only on the number of options."""
    pos, prefixed, cjk_ok, ordinal = 0, False, False, False
    for _ in range(3):
        if not (m := _PREFIX_RE.match(t, pos)):
            break
        pos, prefixed = m.end(), True
        cjk_ok = cjk_ok or m.group(1) in _NUMERAL_PREFIXES
        ordinal = ordinal or m.group(1) in _ORDINAL_PREFIXES
    opened = bool(m := _OPEN_RE.match(t, pos))
    pos = m.end() if m else pos
    letter = word_ordinal = False
    if m := _ORDINAL_WORD_RE.match(t, pos):
        value, ordinal, word_ordinal = _ORDINALS[m.group()], True, m.group().isascii()
    elif counted := next((c for c in _COUNTED_ORDINALS if c[0].match(t, pos)), None):
        m = counted[0].match(t, pos)
        assert m is not None
        value, ordinal = counted[1][m.group(1)], True
    elif m := _DIGITS_RE.match(t, pos):
        value, ordinal = int(m.group(1)), ordinal or bool(m.group(2))
    elif m := _CJK_NUMBER_RE.match(t, pos):
        cjk = _cjk_number(m.group())
        if cjk is None:
            return None
        value = cjk
    elif m := _LETTER_RE.match(t, pos):
        value, letter = ord(m.group()) - ord("a") + 1, True
    else:
        return None
    word, pos = m.group(), m.end()
    positional = prefixed or opened
    if u := _UNIT_RE.match(t, pos):
        pos, positional, ordinal = u.end(), True, ordinal or u.group(1) in _ORDINAL_UNITS
    elif _CJK_NUMBER_RE.fullmatch(word) and not cjk_ok:
        return None  # "二" alone is prose; "二つ目", "第二", "选二" are choices
    if p := _POSTNOUN_RE.match(t, pos):
        pos, positional = p.end(), True
    particle = bool(p := _PARTICLE_RE.match(t, pos))
    pos = p.end() if p else pos
    decorated = positional or particle
    bare_word = not decorated and word in ("a", "i")
    tails = _CHOICE_TAILS if bare_word else _CHOICE_TAILS_ASCII_YES
    while (end := _match_word(t, pos + (t[pos : pos + 1] == " "), tails)) > 0:
        pos = end
    ending = _ending(t, pos)
    if ending is None:
        return None
    separator, explanation = ending
    if not decorated and ((word == "i" and explanation) or (word_ordinal and separator == ",")):
        return None  # "I, for one, ..." and "First, let me check" are prose
    limit = min(n, len(LETTERS)) if letter else n
    index = n - 1 if value == -1 else value - 1
    reason = "letter" if letter else "ordinal" if ordinal else "number"
    in_range = index if 0 <= index < limit else None
    return _Marker(in_range, reason, explanation, _key(word).joined, positional or ordinal)


def _match_yes_no(t: str, *, lenient: bool = False) -> tuple[frozenset[str], str] | None:
    """Polarities in a reply of yes/no/filler words, and its explanation. ``lenient`` (option
    texts): anything may follow the words after a space ("Go ahead and merge")."""
    pos, found = 0, set[str]()
    while True:
        yes, no = _match_word(t, pos, _YES), _match_word(t, pos, _NO)
        end = max(yes, no)  # the longer word: "absolutely not" is no, not "absolutely" + "not"
        if end > 0:
            found.add("yes" if yes > no else "no")
        elif (end := _match_word(t, pos, _FILLER)) < 0:
            break
        pos = end + (t[end : end + 1] == " ")
    ending = _ending(t, pos)
    if ending is None and lenient and t[pos - 1 : pos] == " ":
        ending = "", t[pos:]
    if ending is None or not found:
        return None
    return frozenset(found), ending[1]


_OWN_LABEL_RE = re.compile(r"\(?([a-z]|[0-9]{1,2})\s*[).:]\s+")
"""An option written with its own label ("A) 진행", "1. Yes", "(b) Cancel"): the label says
which option it is, not what it means."""


def _without_own_label(folded: str, index: int) -> str:
    """``folded`` without a leading label, only when that label is this option's own (A or 1
    for the first): any other leading letter or number is part of the option's text."""
    m = _OWN_LABEL_RE.match(folded)
    if m is None:
        return folded
    label = m.group(1)
    own = label == str(index + 1) or (index < len(LETTERS) and label == LETTERS[index].lower())
    return folded[m.end() :] if own else folded


def _polarity(option: str, index: int) -> str | None:
    match = _match_yes_no(_without_own_label(fold(option), index), lenient=True)
    return next(iter(match[0])) if match and len(match[0]) == 1 else None


def yes_no_targets(options: Sequence[str]) -> tuple[int | None, int | None]:
    """The option indexes a plain "yes" and a plain "no" select, or (None, None).

    Only on a card whose options are themselves a yes and a no: exactly one option means yes
    ("Yes", "Approve", "Proceed", "Allow", "네", "はい", "是") and exactly one means no ("No",
    "Cancel", "Deny", "아니요", "いいえ", "不"), read without the option's own label ("A) 진행",
    "1. Yes", "B) Cancel" are a yes, a yes and a no). Anywhere else a plain yes or no picks nothing
    (the owner is asked which option): with "Delete the branches?" and the options "Keep
    them" / "Delete them", "no" must never pick "Delete them" by its place on the card.
    """
    polarities = [_polarity(option, i) for i, option in enumerate(options)]
    yes = [i for i, p in enumerate(polarities) if p == "yes"]
    no = [i for i, p in enumerate(polarities) if p == "no"]
    if len(yes) == 1 and len(no) == 1:
        return yes[0], no[0]
    return None, None


@dataclass(frozen=True, slots=True)
class _Key:
    joined: str  # alphanumerics only: "usepostgresql"
    spaced: str  # words: "use postgresql"


def _key(normalized: str) -> _Key:
    words = split_words(normalized)
    if not words:  # an emoji or punctuation-only option still matches itself
        bare = normalized.replace(" ", "").replace("\n", "")
        return _Key(bare, bare)
    return _Key("".join(words).replace("'", ""), " ".join(words))


def option_key(option: str) -> str:
    """The form an option's text is compared in: folded alphanumerics ("Use SQLite!" ->
    "usesqlite"); an emoji or punctuation-only option keeps its marks."""
    return _key(fold(option)).joined


def label_readings(options: Sequence[str]) -> tuple[bool, bool]:
    """Whether a bare letter, and a bare number, still reads as a label on this card.

    Not when an option's own text is another option's label: with ["B", "A"], "B" is the
    option "B" (its text wins), not label B, so letters cannot be offered as labels there.
    """
    keys = [option_key(option) for option in options]
    letter_labels = {LETTERS[i].lower(): i for i in range(min(len(options), len(LETTERS)))}
    number_labels = {str(i + 1): i for i in range(len(options))}
    letters = all(letter_labels.get(key, i) == i for i, key in enumerate(keys))
    numbers = all(number_labels.get(key, i) == i for i, key in enumerate(keys))
    return letters, numbers


def _text_hits(reply: _Key, keys: Sequence[_Key], *, starts: bool) -> set[int]:
    """Options named in the reply (not negated), else (``starts``) options containing the reply."""
    padded = f" {reply.spaced} "
    contained: list[int] = []
    for i, key in enumerate(keys):
        if len(key.joined) < 3:
            continue
        if key.spaced.isascii():
            at = padded.find(f" {key.spaced} ")
            if at >= 0 and not _CONTAINMENT_NEGATIONS.intersection(padded[:at].split()[-2:]):
                contained.append(i)
        elif key.joined in reply.joined:
            contained.append(i)
    # "use sqlite with wal" contains "use sqlite" too: keep the most specific
    joined = [keys[i].joined for i in contained]
    hits = {
        i for i in contained if not any(o != keys[i].joined and keys[i].joined in o for o in joined)
    }
    if hits or not starts or len(reply.joined) < 3:
        return hits
    if reply.spaced.isascii():
        return {i for i, key in enumerate(keys) if f" {reply.spaced}" in f" {key.spaced} "}
    return {i for i, key in enumerate(keys) if reply.joined in key.joined}


def _skip_leading(t: str, table: dict[str, tuple[str, ...]]) -> str:
    pos = 0
    while pos < len(t):
        if t[pos] == " " or t[pos] in _SEP_CHARS:
            pos += 1
        elif (end := _match_word(t, pos, table)) > 0:
            pos = end
        else:
            break
    return t[pos:]


def _conflicts(explanation: str, keys: Sequence[_Key], chosen: int, polarity: str | None) -> bool:
    """Whether an explanation points at another option ("A, B"; "yes, use SQLite"; "yes, no")."""
    if not explanation:
        return False
    rest = _skip_leading(explanation, _ANY_ANSWER_WORD if polarity is None else _LEADERS)
    marker = _match_marker(rest, len(keys)) if rest else None
    if marker is not None and _resolve(marker, keys) not in ((None, "out_of_range"), chosen):
        return True
    if polarity is not None and (yes_no := _match_yes_no(rest)) and yes_no[0] != {polarity}:
        return True
    return bool(_text_hits(_key(explanation), keys, starts=False) - {chosen})


def _mentioned(stripped: str, keys: Sequence[_Key]) -> set[int]:
    """Options the reply names in passing: capital letters, numbers in range, option texts."""
    n, text = len(keys), unicodedata.normalize("NFKC", stripped)
    found = {
        ord(m.group()) - ord("A")
        for m in re.finditer(r"(?<![A-Za-z0-9'])[A-Y](?![A-Za-z0-9'])", text)
        if m.group() != "I"
    }
    found |= {int(m.group()) - 1 for m in re.finditer(r"(?<![0-9.,:])[0-9]{1,2}(?![0-9])", text)}
    found = {i for i in found if 0 <= i < n}
    return found | _text_hits(_key(fold(stripped)), keys, starts=False)


def _resolve(marker: _Marker, keys: Sequence[_Key]) -> int | tuple[None, str]:
    """The option a marker picks: an option whose own text is the marker's letter or number
    wins over its reading as a label ("1" among "10", "5", "1" is "1"), unless it is worded as
    a position ("option 1", "1번", "2nd"): then the two readings disagree and it is ambiguous."""
    by_text = [i for i, key in enumerate(keys) if key.joined == marker.token]
    if len(by_text) > 1 or (by_text and marker.positional and by_text[0] != marker.index):
        return None, "ambiguous"
    if by_text:
        return by_text[0]
    return marker.index if marker.index is not None else (None, "out_of_range")


def _read(
    t: str, stripped: str, options: Sequence[str], keys: Sequence[_Key]
) -> tuple[int | None, str]:
    """The option a folded reply names, and how; or None and why not."""
    reply = _key(t)
    exact = [i for i, key in enumerate(keys) if reply.joined and key.joined == reply.joined]
    if exact:  # the option's own text beats every other reading
        return (exact[0], "option_text") if len(exact) == 1 else (None, "ambiguous")
    marker = _match_marker(t, len(options))
    if marker is None and _match_word(t, 0, _YES_LEAD) > 0:  # "ok, B", "네 2번", "はい、2番で"
        led = _match_marker(_skip_leading(t, _YES_LEAD), len(options))
        if led is not None and isinstance(picked := _resolve(led, keys), int):
            if yes_no_targets(options)[0] not in (None, picked):
                return None, "ambiguous"  # "yes, 2" when yes means option 1
            marker = led
    if marker is not None and (picked := _resolve(marker, keys)) != (None, "out_of_range"):
        if not isinstance(picked, int):
            return picked
        if _conflicts(marker.explanation, keys, picked, None):
            return None, "ambiguous"
        return picked, "option_text" if keys[picked].joined == marker.token else marker.reason
    unmapped = False
    if yes_no := _match_yes_no(t):
        polarities, explanation = yes_no
        if len(polarities) > 1:
            return None, "ambiguous"
        polarity = next(iter(polarities))
        target = yes_no_targets(options)[0 if polarity == "yes" else 1]
        if target is not None:
            if _conflicts(explanation, keys, target, polarity):
                return None, "ambiguous"
            return target, polarity
        unmapped = True
    hits = _text_hits(reply, keys, starts=True)
    if len(hits) == 1:
        return hits.pop(), "option_text_partial"
    if hits:
        return None, "ambiguous"
    if unmapped:
        return None, "yes_no_unmapped"
    if marker is not None:
        return None, "out_of_range"
    return None, "ambiguous" if len(_mentioned(stripped, keys)) > 1 else "no_match"


def parse_answer(text: str, options: Sequence[str]) -> ParsedAnswer:
    """Interpret ``text``, a reply to a question with ``options`` (see the module docstring)."""
    stripped = text.strip()
    if not stripped:
        return ParsedAnswer("unclear", None, None, stripped, "empty")
    if not options:
        return ParsedAnswer("free_text", None, None, stripped, "no_options")
    t = fold(stripped)
    texts = [fold(option) for option in options]
    keys = [_key(text) for text in texts]
    index, reason = _read(t, stripped, options, keys)
    reply = _key(t)
    partial = None  # the reply is a fragment of the option's text: its words are the option's
    if index is not None and reason.endswith("partial") and reply.joined in keys[index].joined:
        partial = (index, reply.spaced)
    doubts = read_doubts(t, texts, [key.joined for key in keys], partial)
    if index is not None:
        veto = doubts.veto(index, said_no=reason == "no")
        if veto is None:
            return ParsedAnswer("option", index, options[index], stripped, reason)
        reason = veto
    elif reason not in ("ambiguous", "out_of_range"):
        why = doubts.reason
        if why is not None and not (why == "negated" and reason == "yes_no_unmapped"):
            reason = why
    return ParsedAnswer("unclear", None, None, stripped, reason)
