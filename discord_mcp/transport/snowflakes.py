"""Discord's ids (snowflakes) carry the time they were made: the milliseconds since Discord's
epoch (2015-01-01) in their top 42 bits."""

from __future__ import annotations

DISCORD_EPOCH_MS = 1_420_070_400_000


def made_at(snowflake: object) -> float | None:
    """The Unix time at which Discord made ``snowflake`` (None: not a snowflake)."""
    text = str(snowflake or "")
    if not text.isdigit():
        return None
    return ((int(text) >> 22) + DISCORD_EPOCH_MS) / 1000
