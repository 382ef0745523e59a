"""Noticing that the person at the terminal answered a permission dialog first (Claude Code).

In an interactive Claude Code session the ``PermissionRequest`` hook runs while the dialog is
on screen, and whichever answers first wins. When the terminal wins, Claude Code does not stop
the hook (2.1.330, seen in a pty: the hook ran on to its own end, its late answer ignored). So
the hook watches the session's transcript (``transcript_path``, JSON lines): the tool call's
result appearing there means it was decided without us. The call is recognized by its tool name
and input (the hook's payload has no tool-use id); results already there when the hook started
belong to earlier calls. Reading is incremental, bounded and off the event loop: the first read
starts :data:`TAIL` bytes before the end, every later one takes at most :data:`CHUNK` bytes, and
a path that is not a regular file (a FIFO, a device) is never opened as one
(:func:`open_regular`): opening a FIFO blocks until someone writes to it, and a device never ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from discord_mcp.state.files import off_loop

POLL_S = 0.5
TAIL = 8 * 1024 * 1024
"""Where the first read starts, before the end: the call being decided is the latest one."""
CHUNK = 4 * 1024 * 1024
"""The most a later read takes (a line longer than this is skipped)."""


def open_regular(path: Path) -> BinaryIO | None:
    """``path`` opened for reading if it is a regular file, else None (never blocks)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        return os.fdopen(fd, "rb")
    except OSError:
        with contextlib.suppress(OSError):
            os.close(fd)
        return None


class TranscriptWatch:
    """Answers "was this tool call decided elsewhere?" from a Claude Code transcript."""

    def __init__(self, path: Path, tool_name: str, tool_input: Mapping[str, Any]) -> None:
        self._path = path
        self._tool = tool_name
        self._input = dict(tool_input)
        self._offset = 0
        self._partial: bytes | None = b""  # None: skipping to the next line
        self._calls: set[str] = set()
        self._decided: set[str] = set()
        self._primed = False  # after the first read: later results are news

    def _read(self) -> str | None:
        """Read new lines; the verdict ("allowed"/"denied") once the call was decided."""
        handle = open_regular(self._path)
        if handle is None:
            return None
        try:
            with handle:
                limit = CHUNK
                if not self._primed:  # all there is now, from TAIL bytes before the end
                    size = os.fstat(handle.fileno()).st_size
                    self._offset = max(0, size - TAIL)
                    self._partial = b"" if self._offset == 0 else None
                    limit = size - self._offset
                handle.seek(self._offset)
                chunk = handle.read(limit)
        except OSError:
            return None
        self._offset += len(chunk)
        if self._partial is None:  # in the middle of a line: skip to the next one
            _, newline, chunk = chunk.partition(b"\n")
            if newline:
                self._partial = b""
        lines = ((self._partial or b"") + chunk).split(b"\n")
        rest = lines.pop()
        if self._partial is not None:
            self._partial = rest if len(rest) <= CHUNK else None
        verdict = None
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            verdict = self._entry(entry) or verdict
        if not self._primed:  # the first read: what was decided before we started
            self._primed = True
            return None
        return verdict

    def _entry(self, entry: Any) -> str | None:
        if not isinstance(entry, dict):
            return None
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return None
        verdict = None
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == self._tool:
                if block.get("input") == self._input:
                    self._calls.add(str(block.get("id")))
            elif block.get("type") == "tool_result":
                call = str(block.get("tool_use_id"))
                if call in self._calls and call not in self._decided:
                    self._decided.add(call)
                    if self._primed:
                        verdict = "denied" if block.get("is_error") else "allowed"
        return verdict

    def prime(self) -> None:
        """Read what is there now: results already in the transcript are not news. Call it when
        the hook starts, before anything else can let the terminal answer unseen."""
        if not self._primed:
            self._read()

    async def decided(self, poll: float = POLL_S) -> str:
        """Wait until the call is decided elsewhere; "allowed" or "denied" at the terminal."""
        await off_loop(self.prime)
        while True:
            verdict = await off_loop(self._read)
            if verdict is not None:
                return verdict
            await asyncio.sleep(poll)


async def answered_at_terminal(watch: TranscriptWatch | None) -> str:
    """The reason shown on the card once the terminal answered (never returns otherwise)."""
    if watch is None:
        await asyncio.Event().wait()  # nothing to watch: never
        raise AssertionError("unreachable")
    verdict = await watch.decided()
    return f"Answered at the terminal ({verdict})"
