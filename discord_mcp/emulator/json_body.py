"""Reading a JSON body that may have been built to break the emulator.

Every JSON the emulator reads from a client (REST bodies and ``payload_json``, control API
bodies, gateway frames) goes through :func:`loads`: nesting deeper than :data:`MAX_DEPTH` (a
body ``[[[[...`` 100,000 deep would exhaust the interpreter's recursion in the parser or in the
handlers that walk it) and strings that are not Unicode text (a lone surrogate such as
``"\\ud800"`` parses, but no answer or feed frame holding it can be encoded afterwards) are
refused with a sentence, before anything is stored.
"""

from __future__ import annotations

import json
from typing import Any


class Unreadable(ValueError):
    """JSON that parses but that the emulator refuses to hold (the message says why)."""


MAX_DEPTH = 64
"""Arrays and objects inside each other; Discord's deepest bodies (components) need ~6."""


def loads(raw: bytes | str) -> Any:
    """The parsed JSON.

    Raises:
        ValueError: not JSON, nested deeper than :data:`MAX_DEPTH`, or a string holds a lone
            surrogate; the message says which.
    """
    try:
        value = json.loads(raw)
    except RecursionError:
        raise Unreadable(_too_deep()) from None
    _check(value)
    return value


def _too_deep() -> str:
    return f"the JSON is nested too deep (more than {MAX_DEPTH} arrays or objects)"


def _check(value: Any) -> None:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            _text(node)
            continue
        if not isinstance(node, dict | list):
            continue
        if depth > MAX_DEPTH:
            raise Unreadable(_too_deep())
        if isinstance(node, dict):
            for key, item in node.items():
                _text(key)
                stack.append((item, depth + 1))
        else:
            stack.extend((item, depth + 1) for item in node)


def _text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Unreadable(
            "a string in the JSON holds a lone surrogate (like \\ud800), which is not Unicode text"
        ) from None
