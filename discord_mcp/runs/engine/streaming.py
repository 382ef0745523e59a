"""Text that streams while an agent writes it, shared by every engine that has some.

Theory. An engine that sees the answer being written (an ACP agent's ``agent_message_chunk``
updates; Claude Code's ``--include-partial-messages`` deltas; Gemini CLI's ``delta`` messages;
Codex's finished agent messages) appends to one :class:`TextStream` per job. The scheduler
polls it like the rest of a job's activity and, when the project's ``stream`` setting is on,
queues the text so far for the notifier (``job_text``), the first at once and later ones at
most every :data:`TEXT_PACE_S`; the notifier queue keeps only the newest text of a job, so a
burst of chunks costs one delivery.

An agent may write megabytes. What a stream keeps is a *preview*: the last
:data:`PREVIEW_LIMIT` characters (the whole text is in the job's log file, which the engine
writes as it reads). Appending a chunk costs the chunk, whatever came before; putting the
preview together costs the preview, and happens only when it is sent (:attr:`TextStream.joined`
counts it). A job's final answer is kept the same way, its first :data:`ANSWER_LIMIT`
characters (:class:`Head`), with a note that the log holds the rest.

The Discord side shows it as messages edited in place (:func:`pieces`: split at Discord's 2000
characters without breaking a code fence, the same split every long message gets), each edit at
most every :data:`EDIT_INTERVAL_S` per job: well under Discord's edit rate for one channel
(5 per 5 s), however fast the agent writes. When the job ends, the final answer is posted as
today and the streamed preview is removed.
"""

from __future__ import annotations

from collections import deque

from discord_mcp.transport.chunking import split_message

EDIT_INTERVAL_S = 1.5
"""The shortest time between two edits of a job's streamed text."""
TEXT_PACE_S = 0.25
"""The shortest time between two texts of one job queued for the notifier (the first goes at
once): the preview is put together at most this often, however many chunks arrive."""
PREVIEW_LIMIT = 6_000
"""Characters of one job's streamed text kept and shown (three Discord messages at most): the
end of it; the rest is in the job's log."""
ANSWER_LIMIT = 200_000
"""Characters of one job's final answer kept and posted: the start of it; the rest is in the
job's log."""
_FENCE = "```"


class TextStream:
    """The end of the text a job's agent has written so far, message by message."""

    def __init__(self, limit: int = PREVIEW_LIMIT) -> None:
        self._limit = limit
        self._done: deque[str] = deque()  # finished messages (stripped), oldest first
        self._done_size = 0
        self._current: deque[str] = deque()  # the chunks of the message being written
        self._current_size = 0
        self._cut = False  # text was dropped from the front
        self._fences_gone = 0  # code fences in dropped text of finished messages
        self._fences_going = 0  # and of the message being written (a replace takes them back)
        self._text = ""
        self._text_version = 0
        self.version = 0
        """Grows at every change (the scheduler sends when it differs from what it sent)."""
        self.joined = 0
        """Characters put together for :attr:`text` so far: the work streaming cost."""

    def add(self, delta: str) -> None:
        """Append a chunk to the message being written."""
        if not delta:
            return
        if len(delta) > self._limit:
            self._drop(delta[: -self._limit], current=True)
            delta = delta[-self._limit :]
        self._current.append(delta)
        self._current_size += len(delta)
        self._trim()
        self.version += 1

    def replace(self, text: str) -> None:
        """The message being written is now ``text`` (a CLI that re-sends it whole)."""
        tail = text[-self._limit :]
        if len(tail) == self._current_size and "".join(self._current) == tail:
            return
        self._current.clear()
        self._current_size = 0
        self._fences_going = 0  # the new text holds them again
        self.add(text)
        if not text:
            self.version += 1

    def end_message(self) -> None:
        """The message is complete; the next chunk starts a new paragraph."""
        message = "".join(self._current)
        self._current.clear()
        self._current_size = 0
        self._fences_gone += self._fences_going
        self._fences_going = 0
        if message.strip():
            message = message.strip("\n")
            self._done.append(message)
            self._done_size += len(message)
            self._trim()

    @property
    def text(self) -> str:
        """The preview: the last :data:`PREVIEW_LIMIT` characters, headed by ``…`` (and a fence
        reopened) when the front was cut."""
        if self._text_version == self.version and self.version:
            return self._text
        parts = [*self._done, "".join(self._current).strip("\n")]
        whole = "\n\n".join(p for p in parts if p.strip())
        fences = self._fences_gone + self._fences_going
        if len(whole) > self._limit:
            fences += whole[: -self._limit].count(_FENCE)
            whole = whole[-self._limit :]
            cut = True
        else:
            cut = self._cut
        if cut:
            head = "…\n" + (_FENCE + "\n" if fences % 2 else "")
            whole = head + whole[len(head) :]
        self.joined += len(whole)
        self._text, self._text_version = whole, self.version
        return whole

    def _trim(self) -> None:
        while self._done and self._done_size + self._current_size > self._limit:
            dropped = self._done.popleft()
            self._done_size -= len(dropped)
            self._drop(dropped, current=False)
        while self._current and self._current_size - len(self._current[0]) >= self._limit:
            dropped = self._current.popleft()
            self._current_size -= len(dropped)
            self._drop(dropped, current=True)

    def _drop(self, text: str, *, current: bool) -> None:
        self._cut = True
        if current:
            self._fences_going += text.count(_FENCE)
        else:
            self._fences_gone += text.count(_FENCE)


class Head:
    """The first ``limit`` characters of a text that arrives piece by piece (a final answer),
    and how many more came: appending costs the piece, reading costs the kept text."""

    def __init__(self, limit: int = ANSWER_LIMIT) -> None:
        self._limit = limit
        self._parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def add(self, piece: str) -> None:
        room = self._limit - self.kept
        if room <= 0:
            self.dropped += len(piece)
            return
        kept = piece[:room]
        self._parts.append(kept)
        self.kept += len(kept)
        self.dropped += len(piece) - len(kept)

    def clear(self) -> None:
        self._parts.clear()
        self.kept = self.dropped = 0

    @property
    def text(self) -> str:
        """What was kept (joined once, then kept joined)."""
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def answer(self) -> str | None:
        """The kept text, stripped, with a note when more came (None: only whitespace)."""
        text = self.text.strip()
        if not text:
            return None
        if self.dropped:
            text += (
                f"\n\n… ({self.dropped:,} more characters: the whole answer is in the run's log)"
            )
        return text


def pieces(text: str) -> list[str]:
    """``text`` as Discord messages: at most 2000 characters each, fences closed and reopened."""
    return split_message(text)
