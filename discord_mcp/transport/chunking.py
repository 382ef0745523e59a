"""Splitting text into Discord messages (at most 2000 characters each).

Every long text goes through :func:`split_message`; nothing sends more than the limit. Splits
prefer paragraph breaks, then line breaks, then spaces. A split inside a fenced code block closes
the fence at the end of one message and reopens it, with its language, at the start of the next,
so each message renders on its own.
"""

from __future__ import annotations

import re

MESSAGE_LIMIT = 2000
"""Discord's limit on a bot message's ``content``."""

_FENCE = "```"
_LANGUAGE = re.compile(r"[\w+#.-]{1,32}")
_CLOSE = "\n```"


def split_message(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Split ``text`` into chunks of at most ``limit`` characters.

    Returns an empty list for empty or whitespace-only text.

    Raises:
        ValueError: ``limit`` is too small to hold a code fence and some text (< 64).
    """
    if limit < 64:
        raise ValueError("limit must be at least 64 characters")
    chunks: list[str] = []
    rest = text.strip("\n")
    reopen = ""
    while rest.strip():
        budget = limit - len(reopen)
        if len(rest) <= budget:
            chunks.append(reopen + rest)
            break
        # Keep room to close a fence that may be open at the cut.
        reserve = len(_CLOSE) if reopen or _FENCE in rest[:budget] else 0
        cut = _best_cut(rest[: budget - reserve])
        piece = rest[:cut].rstrip()
        rest = rest[cut:].lstrip("\n")
        lang = _open_fence_language(reopen + piece)
        if lang is None:
            chunk, reopen = reopen + piece, ""
        else:
            chunk, reopen = reopen + piece + _CLOSE, f"{_FENCE}{lang}\n"
        if chunk.strip():
            chunks.append(chunk)
    return chunks


def _best_cut(window: str) -> int:
    """Where to cut ``window``: after a blank line, a line break, a space, or at its end."""
    floor = len(window) // 2  # never make a chunk tiny just to find a nicer break
    for separator in ("\n\n", "\n", " "):
        index = window.rfind(separator, floor)
        if index > 0:
            return index + len(separator)
    return len(window)


def _open_fence_language(text: str) -> str | None:
    """The language of a code fence still open at the end of ``text``, or None if balanced."""
    open_lang: str | None = None
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped.startswith(_FENCE):
            continue
        if open_lang is None:
            after = stripped[len(_FENCE) :]
            # An inline ```code``` on one line opens and closes; otherwise keep a short,
            # plain language tag (an absurd one must not eat the next message's budget).
            open_lang = None if _FENCE in after else _language(after)
        else:
            open_lang = None
    return open_lang


def _language(after_fence: str) -> str:
    found = _LANGUAGE.match(after_fence.strip())
    return found[0] if found else ""
