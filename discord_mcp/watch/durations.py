"""Durations as the command line writes them (``30m``, ``2h``, ``1h30m``, ``90s``): read for
``--timeout`` and ``--older-than``, and shown by ``project list``.
"""

from __future__ import annotations

import re

from discord_mcp.errors import RunError

_DURATION = re.compile(r"^\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+)s?)?\s*$")


def parse_duration(text: str) -> float:
    """Seconds in ``30m``, ``2h``, ``1h30m``, ``90s`` or ``90`` (seconds).

    Raises:
        RunError: E_INVALID_TIMEOUT.
    """
    match = _DURATION.match(text)
    if not text.strip() or match is None or not any(match.groups()):
        raise RunError(
            "E_INVALID_TIMEOUT",
            f"--timeout {text!r} is not a duration: write e.g. 30m, 2h, 1h30m or 90s",
        )
    hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return float(hours * 3600 + minutes * 60 + seconds)


def format_duration(seconds: float) -> str:
    """``1h30m``, ``15m``, ``90s``: how ``project list`` shows a timeout."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [
        f"{hours}h" if hours else "",
        f"{minutes}m" if minutes else "",
        f"{secs}s" if secs else "",
    ]
    return "".join(parts) or "0s"
