"""Which shell commands only read, for a project whose approvals are ``ask``.

Claude Code and Gemini CLI decide for themselves which calls need a person (reads do not);
Codex runs every command in its sandbox and asks about none of them, so for Codex runs we tell
reads from the rest ourselves. An allow-list, failing closed: a command skips the card only
when it is one plain command (:mod:`~discord_mcp.judge.words`) of a program whose
every word is known to be harmless (:mod:`~discord_mcp.judge.readers`; sed, jq and
awk programs only in grammars small enough to be read completely) and that reads no secret,
its paths compared normalised. Anything else asks.
"""

from __future__ import annotations

from discord_mcp.judge.readers import reads_only
from discord_mcp.judge.words import split

MAX_LENGTH = 4096
"""A longer command always asks (nobody reads it on a phone; judging it costs time)."""


def is_read_only(command: str) -> bool:
    """Whether ``command`` only reads (see the module doc)."""
    if len(command) > MAX_LENGTH:
        return False
    words = split(command)
    return words is not None and reads_only(words)
