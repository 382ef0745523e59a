"""A TCP proxy in front of the emulator that loses the keep-alive race on purpose.

A server closes a kept-alive connection once it has been idle for its keep-alive timeout
(uvicorn: 5 s). A client that writes its next request onto that connection at the same moment
gets no answer: the request left, the server had already decided to close, and the client reads
a reset. With real timers that happens only when the two moments meet (the scale benchmark met
them when a rate-limit wait of 5 s ended just as uvicorn's 5 s ran out). This proxy makes it
certain: it never closes an idle connection by itself, but a request that arrives on a
connection idle for ``keep_alive`` seconds or more is dropped, both sockets reset, exactly as if
the server's timer had fired first.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from types import TracebackType


class KeepAliveRace:
    """Forwards ``127.0.0.1:<port>`` to ``upstream``; see the module docstring."""

    def __init__(self, upstream_host: str, upstream_port: int, *, keep_alive: float) -> None:
        self._upstream = (upstream_host, upstream_port)
        self.keep_alive = keep_alive
        self.port = 0
        self.connections = 0
        self.dropped = 0
        self._last_answer: float | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> KeepAliveRace:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    def idle_for(self) -> float:
        """Seconds since the last answer went back to the client (0 before any)."""
        return 0.0 if self._last_answer is None else time.monotonic() - self._last_answer

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        answered: list[float] = []

        async def answers() -> None:
            while data := await up_reader.read(65536):
                writer.write(data)
                await writer.drain()
                answered[:] = [time.monotonic()]
                self._last_answer = answered[0]
            writer.close()

        async def requests() -> None:
            while data := await reader.read(65536):
                if answered and time.monotonic() - answered[0] >= self.keep_alive:
                    self.dropped += 1
                    writer.transport.abort()
                    up_writer.transport.abort()
                    return
                up_writer.write(data)
                await up_writer.drain()
            up_writer.close()

        tasks = [asyncio.create_task(answers()), asyncio.create_task(requests())]
        self._tasks.update(tasks)
        try:
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            self._tasks.difference_update(tasks)
            writer.transport.abort()
            up_writer.transport.abort()
