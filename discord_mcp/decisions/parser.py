"""Turn the owner's free-text reply in a decision thread into an answer.

Pure functions, no I/O. The owner answers on a phone, in English, Korean, Japanese or Chinese.
:func:`parse_answer` tries, in this order, and the first that applies wins:

1. **Empty** reply -> ``unclear`` (``empty``). **No options** -> ``free_text`` (``no_options``).
2. **A choice marker** for the card's labels (A-Y, 1-N): ``A``, ``(a)``, ``2.``, ``#2``,
   ``option 2``, ``2번으로 해줘``, ``B로``, ``選択肢2``, ``2でお願いします``, ``第2个``, ``选B``,
   ``2️⃣``, full-width ``２``, ordinals (``the second one``, ``2nd``, ``두 번째``, ``二つ目``,
   ``第二个``, ``最初の``, ``last``). The card's labels are authoritative: ``A`` means the first
   option even if another option's text is "A". The marker must be the whole reply, optionally
   followed by politeness/endorsement words and then a separator (``,`` ``)`` ``-`` ``:``
   ``because``...) and an explanation. A bare letter or number followed by prose is not a
   choice ("a bit later", "I need 2 more days"). If the explanation itself starts with another
   choice ("A, B", "A, or maybe B") the reply is ``ambiguous``. Out-of-range labels match nothing.
3. **The option's own text**, exact after case, width, whitespace and punctuation folding.
4. **Yes/no words** (:data:`YES_WORDS`, :data:`NO_WORDS`), mapped by :func:`yes_no_targets`.
   A reply mixing yes and no is ``ambiguous``; an explanation naming a different option is too.
5. **Containment**: a unique option whose text (>= 3 characters, whole words for ASCII) occurs in
   the reply and is not preceded by a negation ("don't use SQLite"), else a unique option that
   contains the reply (>= 3 characters, from a word start for ASCII): ``option_text_partial``.
6. Otherwise ``unclear``: ``out_of_range``, ``yes_no_unmapped``, ``ambiguous`` (the reply names
   two or more options) or ``no_match``.

:func:`clarify_message` writes the follow-up question; it never echoes the reply and defuses
every ``@`` so nothing from Discord (or the agent) can ping anyone.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from string import ascii_letters
from typing import Literal


def _seq(spec: str) -> list[str]:
    return spec.split("|")


def _words(spec: str) -> frozenset[str]:
    return frozenset(spec.split("|"))


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXY"
"""Option labels A-Y: at most 25 options are lettered."""
MESSAGE_LIMIT = 2000

YES_WORDS = _words(
    "yes|y|yeah|yea|ya|yep|yup|yes sir|sure|sure thing|of course|ok|okay|okey|okie|k|kk"
    "|alright|all right|fine|fine by me|good|great|perfect|approve|approved|accept|accepted"
    "|lgtm|go|go ahead|go for it|let's go|lets go|let's do it|lets do it|do it|ship it"
    "|proceed|continue|affirmative|absolutely|definitely|agreed|agree|sounds good"
    "|looks good|that works|works for me|please do|confirm|confirmed|correct|right"
    "|👍|✅|✔|☑|👌|🆗|🙆|⭕|💯|네|예|응|어|ㅇㅇ|ㅇㅋ|ㄱㄱ|그래|그래요|그럼|좋아"
    "|좋아요|좋습니다|좋네요|좋지|진행|진행해|진행해요|진행하세요|진행시켜|넵|넹|넴"
    "|웅|엉|오케이|오키|콜|고|고고|승인|맞아|맞아요|해|해줘|해 줘|해주세요|해 주세요"
    "|그렇게 해|그렇게 해줘|はい|ハイ|はーい|うん|ええ|お願いします|おねがいします"
    "|お願い|いいよ|いいです|いいね|了解|了解です|りょうかい|おk|オッケー|オーケー"
    "|承認|進めて|どうぞ|そうして|よろしく|是|是的|好|好的|好啊|好吧|可以|行|对|對"
    "|对的|嗯|嗯嗯|同意|批准|没问题|沒問題|继续|繼續|确定|確定|没错|沒錯|就这样|就這樣"
)
"""Replies that mean yes (matched whole, case-insensitively, after NFKC folding)."""

NO_WORDS = _words(
    "no|n|nope|nah|no way|no thanks|not now|not yet|reject|rejected|decline|declined"
    "|deny|denied|stop|don't|dont|do not|don't do it|cancel|abort|halt|never|negative"
    "|hold off|👎|❌|✖|🚫|🙅|⛔|아니|아니요|아니오|아뇨|아니야|아님|ㄴㄴ|노|안돼|안 돼"
    "|안돼요|안 돼요|안되|안 해|하지마|하지 마|하지마세요|하지 마세요|중지|중단|취소"
    "|거절|싫어|멈춰|그만|いいえ|いや|だめ|ダメ|駄目|やめて|やめ|中止|ストップ|却下"
    "|ううん|いえ|ノー|しないで|不|否|不要|不行|别|別|不是|不可以|不好|不用|取消|停"
    "|停止|拒绝|拒絕|算了|不同意|不对|不對"
)
"""Replies that mean no."""

FILLER_WORDS = _words(
    "please|pls|plz|thanks|thank you|thx|ty|now|then|lol|haha|🙏|😊|🙂|~|ㅋ|ㅋㅋ|ㅋㅋㅋ"
    "|ㅎ|ㅎㅎ|ㅎㅎㅎ|^^|요|주세요|부탁해|부탁해요|부탁합니다|부탁드려요|부탁드립니다"
    "|감사합니다|고마워|고마워요|ください|下さい|ありがとう|ありがとうございます|です"
    "|谢谢|謝謝|吧|啊|呀|哦|啦"
)
"""Politeness and filler that may follow a choice or a yes/no word without changing it."""

CHOICE_TAILS = _words(
    "is fine|is good|is better|is best|is ok|is okay|is the one|sounds good|looks good"
    "|works|works for me|for me|to me|for now|해요|할게요|할게|할래요|할래|하자|합시다|갈게요|갈게"
    "|가자|가죠|가요"
    "|좋겠어요|좋겠어|같아요|します|しよう|しましょう|いい|いいです|で|就好|就行|好了"
)
"""Words that may follow a choice marker ("B is fine", "2번 할게요", "Bにします")."""

CHOICE_PREFIXES = _words(
    "let's go with|lets go with|i'll go with|i'd go with|i will go with|i would go with"
    "|go with|go for|i choose|i pick|i'll pick|i'd pick|i'll take|i'd take|i take"
    "|i select|i prefer|i vote for|i vote|i think|i'd say|i say|my choice is|my pick is"
    "|my answer is|the answer is|answer is|answer|choose|pick|select|take|vote|prefer"
    "|let's do|lets do|the|option number|option|opt.|opt|choice|number|num|letter|#"
    "|옵션|선택지|선택|답은|답|選択肢|オプション|選択|选项|選項|选择|選擇|我选|我選"
    "|方案|选|選|第|就"
)
"""Words that may introduce a choice ("option 2", "go with B", "选B", "第2个")."""

SEPARATOR_WORDS = _words(
    "because|since|as|cause|'cause|cuz|bc|but|though|however|왜냐하면|근데|그런데"
    "|하지만|けど|でも|だって|但是|不过|不過|因为|因為"
)
"""Words that start an explanation after a clear answer ("A because it is safer")."""

CONNECTIVES = _words(
    "or|or maybe|maybe|and|also|then|actually|wait|hmm|i mean|sorry|or rather|rather"
    "|또는|아니면|혹은|그리고|或|或者|还是|還是|それとも|または|あるいは"
)
"""Words skipped at the start of an explanation when looking for a second answer."""

NEGATIONS = _words("not|don't|dont|no|never|without|avoid|instead|than|against|skip")
"""English words that, just before an option's text, mean the option is not chosen."""

_ENGLISH_ORDINALS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
    "|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth"
)
_ORDINAL_WORDS: dict[str, int] = {
    **{w: i + 1 for i, w in enumerate(_seq(_ENGLISH_ORDINALS))},
    **dict.fromkeys(_seq("last|latter|마지막|후자|最後|最后|後者|后者"), -1),
    **dict.fromkeys(_seq("former|처음|전자|最初|前者"), 1),
    **{w + "째": i + 1 for i, w in enumerate(_seq("첫|둘|셋|넷|다섯|여섯|일곱|여덟|아홉|열"))},
    **{w + "目": i + 1 for i, w in enumerate(_seq("ひとつ|ふたつ|みっつ|よっつ|いつつ"))},
}
_KOREAN_COUNTS = _seq("첫|두|세|네|다섯|여섯|일곱|여덟|아홉|열|열한|열두|열세|열네|열다섯")
_CJK_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")}
_CJK_NUMERAL_PREFIXES = _words("选项|選項|选择|選擇|我选|我選|選択肢|方案|选|選|第")
_ORDINAL_UNITS = _words("번째|つ目|番目|個目")


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
            ``empty``, ``ambiguous``, ``out_of_range``, ``yes_no_unmapped`` or ``no_match``.
    """

    kind: Literal["option", "free_text", "unclear"]
    selected_index: int | None
    selected_option: str | None
    text: str
    reason: str


_DROP = dict.fromkeys(map(ord, "\ufe0e\ufe0f\u20e3\u200b\u200c\u200d\u2060\ufeff*`_"))
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_SKIN_TONES = re.compile("[\U0001f3fb-\U0001f3ff]")


def _normalize(text: str) -> str:
    """NFKC (full width -> ASCII), casefold, no keycap/markdown marks, single spaces, kept lines."""
    text = unicodedata.normalize("NFKC", text).replace("\U0001f51f", "10")
    text = text.replace("~~", "").replace("||", "")  # strikethrough, spoiler
    text = _SKIN_TONES.sub("", text.translate(_DROP).translate(_QUOTES)).casefold()
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _table(words: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Normalised words by first character, longest first (so "nope" wins over "no")."""
    table: dict[str, list[str]] = {}
    for word in {_normalize(w) for w in words} - {""}:
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
_NO = _table(NO_WORDS)
_FILLER = _table(FILLER_WORDS)
_SEP_WORDS = _table(SEPARATOR_WORDS)
_CHOICE_TAILS = _table(CHOICE_TAILS | FILLER_WORDS | {w for w in YES_WORDS if not w.isascii()})
_CHOICE_TAILS_ASCII_YES = _table(CHOICE_TAILS | FILLER_WORDS | YES_WORDS)
_LEADERS = _table(CONNECTIVES | SEPARATOR_WORDS)
_YES_LEAD = _table(YES_WORDS | FILLER_WORDS)
_ANY_ANSWER_WORD = _table(CONNECTIVES | SEPARATOR_WORDS | YES_WORDS | NO_WORDS | FILLER_WORDS)
_SEP_CHARS = frozenset(",.!;:)-–—…/\n、。·]】」>(")
_TIGHT_SEPS = frozenset(".,:-/")  # "2.5", "2,000", "2:30", "2-3", "a/b" are not choices


def _alternation(words: Iterable[str]) -> str:
    parts = sorted({_normalize(w) for w in words}, key=len, reverse=True)
    return "|".join(re.escape(p) + ("(?![a-z])" if p[-1] in ascii_letters else "") for p in parts)


_PREFIX_RE = re.compile(f"({_alternation(CHOICE_PREFIXES)})(?: ?[:#])? ?")
_OPEN_RE = re.compile(r"[(\[【「<] ?")
_ORDINAL_WORD_RE = re.compile(f"(?:{_alternation(_ORDINAL_WORDS)})")
_KOREAN_ORDINAL_RE = re.compile(f"({_alternation(_KOREAN_COUNTS)}) ?번 ?째")
_DIGITS_RE = re.compile(r"([0-9]{1,3})(?![0-9])(st|nd|rd|th)?(?![a-z])")
_CJK_NUMBER_RE = re.compile("[〇一二三四五六七八九十]{1,3}")
_LETTER_RE = re.compile(r"[a-z](?![a-z0-9'])")
_UNIT_RE = re.compile(" ?(번째|つ目|番目|個目|번|番|个|個|号|號|项|項|案|안)")
_POSTNOUN_RE = re.compile(
    " ?(?:(?:one|option|choice|answer)(?![a-z])|옵션|선택지|거|꺼|것|걸|選択肢|オプション"
    "|选项|選項|方案)|の"
)
_PARTICLE_RE = re.compile("으로요|로요|으로|로|이요|요|이|가|을|를|은|는|で|を|が|に|は")


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
        cjk_ok = cjk_ok or m.group(1) in _CJK_NUMERAL_PREFIXES
        ordinal = ordinal or m.group(1) == "第"
    opened = bool(m := _OPEN_RE.match(t, pos))
    pos = m.end() if m else pos
    letter = word_ordinal = False
    if m := _ORDINAL_WORD_RE.match(t, pos):
        value, ordinal, word_ordinal = _ORDINAL_WORDS[m.group()], True, m.group().isascii()
    elif m := _KOREAN_ORDINAL_RE.match(t, pos):
        value, ordinal = _KOREAN_COUNTS.index(m.group(1)) + 1, True
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
    decorated = prefixed or opened
    if u := _UNIT_RE.match(t, pos):
        pos, decorated, ordinal = u.end(), True, ordinal or u.group(1) in _ORDINAL_UNITS
    elif _CJK_NUMBER_RE.fullmatch(word) and not cjk_ok:
        return None  # "二" alone is prose; "二つ目", "第二", "选二" are choices
    for pattern in (_POSTNOUN_RE, _PARTICLE_RE):
        if p := pattern.match(t, pos):
            pos, decorated = p.end(), True
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
    return _Marker(index if 0 <= index < limit else None, reason, explanation)


def _match_yes_no(t: str, *, lenient: bool = False) -> tuple[frozenset[str], str] | None:
    """Polarities in a reply of yes/no/filler words, and its explanation. ``lenient`` (option
    texts): anything may follow the words after a space ("Go ahead and merge")."""
    pos, found = 0, set[str]()
    while True:
        end = _match_word(t, pos, _YES)
        if end > 0:
            found.add("yes")
        elif (end := _match_word(t, pos, _NO)) > 0:
            found.add("no")
        else:
            end = _match_word(t, pos, _FILLER)
        if end < 0:
            break
        pos = end + (t[end : end + 1] == " ")
    ending = _ending(t, pos)
    if ending is None and lenient and t[pos - 1 : pos] == " ":
        ending = "", t[pos:]
    if ending is None or not found:
        return None
    return frozenset(found), ending[1]


def _polarity(option: str) -> str | None:
    match = _match_yes_no(_normalize(option), lenient=True)
    return next(iter(match[0])) if match and len(match[0]) == 1 else None


def yes_no_targets(options: Sequence[str]) -> tuple[int | None, int | None]:
    """The option indexes a plain "yes" and a plain "no" select, or None.

    By meaning first: an option that itself means yes ("Yes", "Approve", "OK", "네") takes
    "yes", one that means no ("No", "Reject", "Cancel") takes "no", when exactly one option has
    that meaning. With exactly two options, an option without meaning takes the polarity its
    partner lacks ("No" / "Ship now": yes -> "Ship now"), and two options without a distinct
    meaning follow the card: yes -> the first, no -> the second.
    """
    polarities = [_polarity(option) for option in options]
    yes = [i for i, p in enumerate(polarities) if p == "yes"]
    no = [i for i, p in enumerate(polarities) if p == "no"]
    if len(options) == 2:
        if len(yes) == 1 and len(no) == 1:
            return yes[0], no[0]
        if len(yes) + len(no) == 1:
            single = (yes or no)[0]
            return (single, 1 - single) if yes else (1 - single, single)
        return 0, 1
    return (yes[0] if len(yes) == 1 else None), (no[0] if len(no) == 1 else None)


@dataclass(frozen=True, slots=True)
class _Key:
    joined: str  # alphanumerics only: "usepostgresql"
    spaced: str  # words: "use postgresql"


def _key(normalized: str) -> _Key:
    words = "".join(ch if ch.isalnum() or ch == "'" else " " for ch in normalized).split()
    words = [w for w in (w.strip("'") for w in words) if w]
    if not words:  # an emoji or punctuation-only option still matches itself
        bare = normalized.replace(" ", "").replace("\n", "")
        return _Key(bare, bare)
    return _Key("".join(words).replace("'", ""), " ".join(words))


def _text_hits(reply: _Key, keys: Sequence[_Key], *, starts: bool) -> set[int]:
    """Options named in the reply (not negated), else (``starts``) options containing the reply."""
    padded = f" {reply.spaced} "
    contained: list[int] = []
    for i, key in enumerate(keys):
        if len(key.joined) < 3:
            continue
        if key.spaced.isascii():
            at = padded.find(f" {key.spaced} ")
            if at >= 0 and not NEGATIONS.intersection(padded[:at].split()[-2:]):
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
    if marker is not None and marker.index is not None and marker.index != chosen:
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
    return found | _text_hits(_key(_normalize(stripped)), keys, starts=False)


def parse_answer(text: str, options: Sequence[str]) -> ParsedAnswer:
    """Interpret ``text``, a reply to a question with ``options`` (see the module docstring)."""
    stripped = text.strip()
    if not stripped:
        return ParsedAnswer("unclear", None, None, stripped, "empty")
    if not options:
        return ParsedAnswer("free_text", None, None, stripped, "no_options")

    def chosen(index: int, reason: str) -> ParsedAnswer:
        return ParsedAnswer("option", index, options[index], stripped, reason)

    def unclear(reason: str) -> ParsedAnswer:
        return ParsedAnswer("unclear", None, None, stripped, reason)

    t = _normalize(stripped)
    keys = [_key(_normalize(option)) for option in options]
    marker = _match_marker(t, len(options))
    if marker is None and _match_word(t, 0, _YES_LEAD) > 0:  # "ok, B", "네 2번", "はい、2番で"
        led = _match_marker(_skip_leading(t, _YES_LEAD), len(options))
        if led is not None and led.index is not None:
            if yes_no_targets(options)[0] not in (None, led.index):
                return unclear("ambiguous")  # "yes, 2" when yes means option 1
            marker = led
    if marker is not None and marker.index is not None:
        if _conflicts(marker.explanation, keys, marker.index, None):
            return unclear("ambiguous")
        return chosen(marker.index, marker.reason)
    reply = _key(t)
    exact = [i for i, key in enumerate(keys) if reply.joined and key.joined == reply.joined]
    if len(exact) == 1:
        return chosen(exact[0], "option_text")
    if exact:
        return unclear("ambiguous")  # two options with the same text
    unmapped = False
    if yes_no := _match_yes_no(t):
        polarities, explanation = yes_no
        if len(polarities) > 1:
            return unclear("ambiguous")
        polarity = next(iter(polarities))
        target = yes_no_targets(options)[0 if polarity == "yes" else 1]
        if target is not None:
            if _conflicts(explanation, keys, target, polarity):
                return unclear("ambiguous")
            return chosen(target, polarity)
        unmapped = True
    hits = _text_hits(reply, keys, starts=True)
    if len(hits) == 1:
        return chosen(hits.pop(), "option_text_partial")
    if hits:
        return unclear("ambiguous")
    if unmapped:
        return unclear("yes_no_unmapped")
    if marker is not None:
        return unclear("out_of_range")
    return unclear("ambiguous" if len(_mentioned(stripped, keys)) > 1 else "no_match")


_WHY = {
    "empty": "Your reply was empty.",
    "ambiguous": "Your reply seems to point at more than one option.",
    "out_of_range": "That letter or number is not one of the options.",
    "yes_no_unmapped": "A plain yes or no does not pick one of these options.",
}


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def clarify_message(text: str, options: Sequence[str], attempt: int, max_attempts: int) -> str:
    """A short clarifying question to post in the thread after an unclear reply.

    Lists the options with their letters and numbers and says how to answer. The reply is not
    echoed, and every ``@`` is followed by a zero-width space, so neither the reply nor the
    agent's option texts can mention ``@everyone``, ``@here``, users or roles. At most
    :data:`MESSAGE_LIMIT` characters.

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
    lines = [f"{why} {progress}", "Please reply with just one letter or number:"]
    budget = max(20, min(100, 1500 // len(options) - 10))
    for i, option in enumerate(options):
        label = f"{LETTERS[i]} ({i + 1})" if i < len(LETTERS) else f"({i + 1})"
        lines.append(f"{label} {_clip(option, budget)}")
    yes, no = yes_no_targets(options)
    hint = "You can also reply with an option's exact text"
    if yes is not None and no is not None and yes < len(LETTERS) and no < len(LETTERS):
        hint += f", or yes for {LETTERS[yes]} and no for {LETTERS[no]}"
    lines.append(hint + ".")
    return _defuse("\n".join(lines))


def _defuse(message: str) -> str:
    message = message.replace("@", "@\u200b")
    return message if len(message) <= MESSAGE_LIMIT else message[: MESSAGE_LIMIT - 1] + "…"
