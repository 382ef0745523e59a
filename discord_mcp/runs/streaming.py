"""Text that streams while an agent writes it, shared by every engine that has some.

Theory. An engine that sees the answer being written (an ACP agent's ``agent_message_chunk``
updates; Claude Code's ``--include-partial-messages`` deltas; Gemini CLI's ``delta`` messages;
Codex's finished agent messages) appends to one :class:`TextStream` per job. The scheduler
polls it like the rest of a job's activity and, when the project's ``stream`` setting is on,
queues the whole text so far for the notifier (``job_text``); the notifier queue keeps only the
newest text of a job, so a burst of chunks costs one delivery.

The Discord side shows it as messages edited in place (:func:`pieces`: split at Discord's 2000
characters without breaking a code fence, the same split every long message gets), each edit at
most every :data:`EDIT_INTERVAL_S` per job: well under Discord's edit rate for one channel
(5 per 5 s), however fast the agent writes. When the job ends, the final answer is posted as
today and the streamed preview is removed.
"""

from __future__ import annotations

from discord_mcp.transport.chunking import split_message

EDIT_INTERVAL_S = 1.5
"""The shortest time between two edits of a job's streamed text."""
STREAM_LIMIT = 200_000
"""Characters of one job's streamed text kept (the rest is in the job's log)."""


class TextStream:
    """The text a job's agent has written so far, message by message."""

    def __init__(self) -> None:
        self._done: list[str] = []
        self._current = ""
        self.version = 0
        """Grows at every change (the scheduler sends when it differs from what it sent)."""

    def add(self, delta: str) -> None:
        """Append a chunk to the message being written."""
        if not delta:
            return
        self._current += delta
        self._trim()
        self.version += 1

    def replace(self, text: str) -> None:
        """The message being written is now ``text`` (a CLI that re-sends it whole)."""
        if text == self._current:
            return
        self._current = text
        self._trim()
        self.version += 1

    def end_message(self) -> None:
        """The message is complete; the next chunk starts a new paragraph."""
        if self._current.strip():
            self._done.append(self._current.strip("\n"))
        self._current = ""

    @property
    def text(self) -> str:
        parts = [*self._done, self._current.strip("\n")]
        return "\n\n".join(p for p in parts if p.strip())

    def _trim(self) -> None:
        while self._done and sum(map(len, self._done)) + len(self._current) > STREAM_LIMIT:
            self._done.pop(0)
        if len(self._current) > STREAM_LIMIT:
            self._current = self._current[-STREAM_LIMIT:]


def pieces(text: str) -> list[str]:
    """``text`` as Discord messages: at most 2000 characters each, fences closed and reopened."""
    return split_message(text)
