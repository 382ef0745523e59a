"""Flagging risky shell commands on an approval card.

A heuristic for the owner's eyes, not a security boundary: every command asks anyway, and a
flagged one is never answered by a session rule. The patterns look for what is hard to undo:
recursive deletes, force pushes and hard resets, dropping data, running what the network
sends, root, and wiping devices.
"""

from __future__ import annotations

import re

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "recursive delete",
        re.compile(
            r"\brm\s+(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\b|\bfind\b[^|;&]*\s-delete\b"
            r"|\bgit\s+clean\s+-[a-zA-Z]*[fdx]|\bshred\b|\brmdir\s+--"
        ),
    ),
    (
        "force push",
        re.compile(r"\bgit\s+push\b[^;&|]*(?:\s-f\b|\s--force(?:-with-lease)?\b|\s\+[\w/.-]+)"),
    ),
    ("discards local changes", re.compile(r"\bgit\s+(?:reset\s+--hard|checkout\s+--\s|clean\s)")),
    (
        "drops data",
        re.compile(
            r"\b(?:drop\s+(?:table|database|schema|collection|index)|truncate\s+table"
            r"|flushall|flushdb|dropdb|dropuser)\b|\bdelete\s+from\s+\w+\s*(?:;|$|\")",
            re.IGNORECASE,
        ),
    ),
    (
        "pipes the network into a shell",
        re.compile(
            r"\b(?:curl|wget|fetch)\b[^|;]*\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b"
            r"|\b(?:curl|wget)\b[^|;]*\|\s*(?:sudo\s+)?python[0-9.]*\b"
            r"|(?:ba|z)?sh\s+(?:-c\s+)?[\"']?\$\(\s*(?:curl|wget)\b"
            r"|(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b"
        ),
    ),
    ("runs as root", re.compile(r"(?:^|[;&|]\s*)sudo\b|\bdoas\b")),
    (
        "writes to a device or formats a disk",
        re.compile(r"\bmkfs(?:\.\w+)?\b|\bdd\b[^;&|]*\bof=/dev/|>\s*/dev/(?:sd|nvme|hd|disk)"),
    ),
    ("opens permissions to everyone", re.compile(r"\bchmod\s+(?:-R\s+)?0?777\b")),
)


def command_risks(command: str) -> tuple[str, ...]:
    """Short phrases naming what is risky about ``command`` (empty when nothing is)."""
    return tuple(label for label, pattern in _PATTERNS if pattern.search(command))
