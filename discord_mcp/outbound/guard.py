"""The outbound checks every agent-facing tool applies before it posts: texts redacted, files
checked and read, and the note the tool result carries when something was changed.

A tool calls :func:`scrub` on each text it will post and :func:`read_files` on the paths it was
given (both before anything reaches Discord, so a refused file posts nothing), then
:func:`noted` on its result. What the REST choke point redacts on top (:mod:`.sending`: strings
the tool did not write itself) while the call sends is reported into the same result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from discord_mcp.config import Settings
from discord_mcp.outbound.files import FilePolicy, Prepared, prepare
from discord_mcp.outbound.redaction import redact, summary
from discord_mcp.outbound.sending import reporting_to

REDACTION_NOTE = (
    "Something that looked like a secret was replaced with [redacted: ...] before posting "
    "(see redacted). Never post credentials to Discord; describe them instead."
)


class Scrubber:
    """Redacts the texts of one tool call and remembers what it replaced, and where."""

    def __init__(self, settings: Settings) -> None:
        self._known = (settings.token.reveal(),)
        self.redacted: list[str] = []
        reporting_to(self._at_send)

    def _at_send(self, found: list[str]) -> None:
        self.redacted.extend(entry for entry in found if entry not in self.redacted)

    def text(self, where: str, text: str) -> str:
        """``text`` with its secrets replaced."""
        clean = redact(text, self._known)
        self.redacted.extend(summary([(where, clean)]))
        return clean.text

    def optional(self, where: str, text: str | None) -> str | None:
        return None if text is None else self.text(where, text)

    def texts(self, where: str, texts: Sequence[str] | None) -> list[str] | None:
        if texts is None:
            return None
        return [self.text(f"{where}[{n}]", t) for n, t in enumerate(texts)]

    async def files(self, settings: Settings, paths: Sequence[str] | None) -> Prepared:
        """Check and read the files (in a worker thread); their redactions are remembered.

        Raises:
            FileRefused: a file may not be sent (the message says why).
        """
        if not paths:
            return Prepared()
        prepared = await asyncio.to_thread(prepare, list(paths), policy(settings), self._known)
        self.redacted.extend(prepared.redacted)
        return prepared

    def noted(self, result: dict[str, Any]) -> dict[str, Any]:
        """``result`` with ``redacted`` and a ``note`` when anything was redacted."""
        if not self.redacted:
            return result
        note = f"{result['note']} {REDACTION_NOTE}" if result.get("note") else REDACTION_NOTE
        return {**result, "redacted": list(self.redacted), "note": note}


def policy(settings: Settings) -> FilePolicy:
    """Where this server's agent may send files from."""
    return FilePolicy(
        project_dir=settings.project_dir, state_dir=settings.home, roots=settings.file_roots
    )
