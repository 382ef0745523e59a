"""Bounded copies of what an agent sends: a preview that says it is one, and a hash of the whole.

A tool input can be any size (a 35 MB file to write). What is stored with an approval and
shown on its card is a preview of at most a few kilobytes, whatever the input: long strings
end in ``… [N more characters]``, long lists and objects in a marker of what was left out, and
the SHA-256 of the whole input (:func:`digest`, computed without building a second copy of
it in memory) identifies it exactly. Sizes are counted as the UTF-8 JSON text they become.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

INPUT_BYTES = 16 * 1024
"""A stored tool input's preview is at most about this large."""
TEXT_BYTES = 6 * 1024
"""A stored command, diff or tool description is at most about this large."""
_ITEMS = 40
_DEPTH = 6


def _cost(ch: str) -> int:
    """Bytes ``ch`` takes in JSON (UTF-8, escapes as ``json.dumps`` writes them)."""
    code = ord(ch)
    if code < 0x20:
        return 2 if ch in "\n\r\t\b\f" else 6
    if ch in '"\\':
        return 2
    return 1 if code < 0x80 else len(ch.encode("utf-8", "surrogatepass"))


def clip(text: str, limit: int = TEXT_BYTES) -> str:
    """``text`` cut to about ``limit`` bytes of JSON, ending in ``… [N more characters]``."""
    if len(text) * 6 <= limit:
        return text  # cannot be over
    used = 0
    for index, ch in enumerate(text):
        used += _cost(ch)
        if used > limit:
            return f"{text[:index]}… [{len(text) - index:,} more characters]"
    return text


class _Budget:
    def __init__(self, limit: int) -> None:
        self.left = limit
        self.cut = False

    def text(self, value: str) -> str:
        room = max(self.left, 0)
        clipped = clip(value, room)
        if clipped is not value:
            self.cut = True
        self.left -= sum(_cost(ch) for ch in clipped) + 2
        return clipped


def bounded(value: Any, limit: int = INPUT_BYTES) -> tuple[Any, bool]:
    """A copy of ``value`` (JSON-like) of about ``limit`` bytes at most, and whether it was
    cut."""
    budget = _Budget(limit)
    result = _copy(value, budget, 0)
    return result, budget.cut


def _copy(value: Any, budget: _Budget, depth: int) -> Any:
    if isinstance(value, str):
        return budget.text(value)
    if value is None or isinstance(value, bool | int | float):
        budget.left -= 8
        return value
    if depth >= _DEPTH or budget.left <= 0:
        budget.cut = True
        return "… [left out]"
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for count, (key, item) in enumerate(value.items()):
            if count >= _ITEMS or budget.left <= 0:
                out["…"] = f"[{len(value) - count:,} more keys]"
                budget.cut = True
                break
            out[budget.text(str(key))] = _copy(item, budget, depth + 1)
        return out
    if isinstance(value, list | tuple):
        items: list[Any] = []
        for count, item in enumerate(value):
            if count >= _ITEMS or budget.left <= 0:
                items.append(f"… [{len(value) - count:,} more items]")
                budget.cut = True
                break
            items.append(_copy(item, budget, depth + 1))
        return items
    return budget.text(str(value))


def digest(value: Any) -> str:
    """The SHA-256 (hex) of ``value`` as canonical JSON, hashed piece by piece."""
    hasher = hashlib.sha256()
    encoder = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)
    for chunk in encoder.iterencode(value):
        hasher.update(chunk.encode("utf-8", "surrogatepass"))
    return hasher.hexdigest()
