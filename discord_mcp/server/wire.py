"""This server's end of the MCP wire (stdout), and knowing when a response has left.

A decision's answer is marked delivered only once the response carrying it is written into the
pipe to the client. Marked before, a server killed between the mark and the write loses the
answer: its agent never read it, and no later session is given it (``check_pending`` hands over
only what was not delivered). Marked after, a kill between the write and the mark hands it to a
later session as well: at least once, never lost. What is written into a pipe stays there for
the reader when the writer dies, so "written" is the point after which the client will read it.

:class:`Wire` is the text file the MCP SDK's stdio transport writes its JSON-RPC lines to (one
``write`` and one ``flush`` per message). After each flush it runs the callbacks registered for
the responses it wrote (:meth:`Wire.after_response`). While serving, fd 1 points at stderr (as
the SDK does for the streams it claims itself), so nothing else in the process can write into
the wire; it is restored at the end.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import select
import stat
from collections.abc import Callable, Iterator

import anyio

log = logging.getLogger(__name__)


class Wire:
    """stdout for the MCP transport, with a callback once a given response was written."""

    def __init__(self) -> None:
        self._after: dict[str, list[Callable[[], None]]] = {}
        self._written: list[str] = []
        self._fd: int | None = None
        self._pipe = False

    def after_response(self, request_id: str, callback: Callable[[], None]) -> None:
        """Run ``callback`` (on the event loop) once the result of ``request_id`` is written.

        It never runs if that response is an error or never leaves (the client cancelled the
        request, the pipe broke, the process died).
        """
        self._after.setdefault(str(request_id), []).append(callback)

    @contextlib.contextmanager
    def claimed(self, fd: int = 1) -> Iterator[Wire]:
        """Serve on ``fd``: a private duplicate carries the wire, ``fd`` itself points at
        stderr meanwhile; restored on exit."""
        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
        try:
            os.dup2(2, fd)
            mode = os.fstat(private).st_mode
            self._fd, self._pipe = private, stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
            yield self
        finally:
            self._fd = None
            with contextlib.suppress(OSError):
                os.dup2(private, fd)
            os.close(private)

    # The text-file surface the SDK's stdio transport uses: a message is one ``write`` (kept
    # here) and one ``flush``, which puts it into the pipe. The pipe may be full (a client that
    # stopped reading), and a blocked write must not stop the loop, so a message goes from a
    # worker thread, unless it cannot block (:meth:`_put_now`): under load, every hop to a
    # thread waits for that thread to be scheduled, and most messages are small.

    async def write(self, text: str) -> int:
        if self._fd is None:
            raise RuntimeError("the wire is not claimed")
        self._written.append(text)
        return len(text)

    async def flush(self) -> None:
        fd = self._fd
        if fd is None:
            raise RuntimeError("the wire is not claimed")
        written, self._written = self._written, []
        if not written:
            return
        data = "".join(written).encode("utf-8")
        if not self._put_now(fd, data):
            await anyio.to_thread.run_sync(_put_all, fd, data)
        if self._after:
            for text in written:
                self._sent(text)

    def _put_now(self, fd: int, data: bytes) -> bool:
        """Write ``data`` on the spot if that cannot block; False if it was not written.

        That is at most ``PIPE_BUF`` bytes into a pipe, or a Unix socket (Node.js clients
        such as Claude Code and Gemini CLI give their servers socket pairs), that says it has
        room: a pipe then takes them whole, at once, and a socket does not wait for buffer
        space while it is under a quarter of its send buffer (what "room" means there).
        """
        if not self._pipe or len(data) > select.PIPE_BUF:
            return False
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        if not poller.poll(0):
            return False
        _put_all(fd, data)
        return True

    def _sent(self, text: str) -> None:
        if '"result"' not in text:  # a request, a notification or an error
            return
        try:
            message = json.loads(text)
        except ValueError:
            return
        if not isinstance(message, dict) or "result" not in message:
            return
        for callback in self._after.pop(str(message.get("id")), []):
            try:
                callback()
            except Exception:
                log.exception("after the response to request %s", message.get("id"))


def _put_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
