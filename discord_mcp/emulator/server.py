"""Serving an emulator over HTTP with uvicorn: in a background thread, or in the running loop.

:func:`start_in_thread` is what tests and people use: it binds the port before returning (so
port 0 picks a free one and the URL is known), runs uvicorn with its own event loop in a daemon
thread, and returns once the server accepts connections. :func:`serve` does the same inside an
already running event loop. Both leave the process's signal handlers alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from types import TracebackType
from typing import Any

import uvicorn

from discord_mcp.emulator.app import Emulator
from discord_mcp.emulator.config import DEFAULT_HOST, EmulatorConfig
from discord_mcp.emulator.feed import close_feeds
from discord_mcp.emulator.outside import check_binding

_START_TIMEOUT = 10.0
_STOP_TIMEOUT = 5.0


class RunningEmulator:
    """A served emulator: where it is, the ids of its startup world, and how to stop it.

    ``stop()`` is idempotent and bounded; leaving a ``with`` block stops it too. ``emulator``
    is the served :class:`~discord_mcp.emulator.app.Emulator`; touch it only from the loop
    that serves it (with :func:`serve`, your own loop; never from another thread).
    """

    def __init__(self, emulator: Emulator, host: str, port: int, stop: Callable[[], None]) -> None:
        self.emulator = emulator
        self.host = host
        self.port = port
        self.base_url = base_url(host, port)
        self.api_base = self.base_url + "/api/v10"
        self.gateway_url = self.base_url.replace("http://", "ws://", 1) + "/gateway"
        self.token = emulator.config.token
        self.control_token = emulator.config.control_token
        """What control requests must carry (``Authorization: Bearer ...``), or None."""
        state = emulator.state
        self.guild_id = state.guild.id
        self.channel_id = state.channel.id
        self.bot_user_id = state.bot.id
        self.application_id = state.bot.id
        self.owner_user_id = state.owner.id
        self.bot_role_id = state.bot_role.id
        self._stop = stop
        self._stopped = False

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._stop()

    def __enter__(self) -> RunningEmulator:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<RunningEmulator {self.base_url}>"


class _Server(uvicorn.Server):
    """uvicorn's server, reporting readiness, stopping promptly, leaving signals alone.

    uvicorn polls ``should_exit`` every 0.1 s and pauses 0.1 s during shutdown; tests start
    and stop an emulator per test, so :meth:`request_exit` wakes the loop at once and
    :meth:`shutdown` waits only as long as connections actually take to close.
    """

    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None], feeds: object) -> None:
        super().__init__(config)
        self._on_ready = on_ready
        self._feeds = feeds
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        await super().startup(sockets=sockets)
        if self.started:
            self._on_ready()

    def request_exit(self) -> None:
        """Ask the server to stop; callable from any thread."""
        self.should_exit = True
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(wake.set)

    async def main_loop(self) -> None:
        assert self._wake is not None
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864_000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)

    async def _connections_closed(self) -> None:
        # uvicorn offers no "all connections closed" event; it polls too (every 0.1 s).
        while self.server_state.connections and not self.force_exit:  # noqa: ASYNC110
            await asyncio.sleep(0.005)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        close_feeds(self._feeds)  # endless event streams end now, not at the timeout
        for connection in list(self.server_state.connections):
            connection.shutdown()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                self._connections_closed(), self.config.timeout_graceful_shutdown or 1.0
            )
        for task in list(self.server_state.tasks):
            task.cancel()
        for server in self.servers:
            await server.wait_closed()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # The CLI and test runners own SIGINT/SIGTERM; uvicorn would replace and re-raise them.
        yield


def base_url(host: str, port: int) -> str:
    """The emulator's address (``http://host:port``); attachment URLs start with it."""
    url_host = f"[{host}]" if ":" in host else host
    return f"http://{url_host}:{port}"


def _config(config: EmulatorConfig | None, options: dict[str, Any]) -> EmulatorConfig:
    base = config or EmulatorConfig()
    return dataclasses.replace(base, **options) if options else base


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must say TCP: asyncio sets TCP_NODELAY only on sockets that do, and without it
    # every response on a kept-alive connection waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def _uvicorn_config(emulator: Emulator) -> uvicorn.Config:
    return uvicorn.Config(
        emulator.app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        # The gateway is a websocket on this server; the legacy "websockets" protocol
        # implementation emits deprecation warnings, the sans-I/O one does not.
        ws="websockets-sansio",
        timeout_graceful_shutdown=1,
        server_header=False,
        date_header=False,  # the emulator's own (its clock may be moved forward: control_time.py)
    )


def start_in_thread(
    host: str = DEFAULT_HOST,
    port: int = 0,
    *,
    config: EmulatorConfig | None = None,
    **options: Any,
) -> RunningEmulator:
    """Serve a new emulator from a background thread; returns once it accepts connections.

    ``options`` are :class:`EmulatorConfig` fields (``token``, ``rate_limit_scale``,
    ``exchange_hook``, ``control_token``...), applied over ``config``. Raises ``OSError`` if
    the port is taken, ``ValueError`` for an address beyond loopback without a
    ``control_token``, and ``RuntimeError`` if the server does not start within 10 seconds.
    """
    emulator = Emulator(_config(config, options))
    check_binding(host, emulator.config.control_token, emulator.config.token)
    sock = _bind(host, port)
    emulator.guard.bound_host = host
    bound_port = sock.getsockname()[1]
    emulator.state.media_base = base_url(host, bound_port)
    ready = threading.Event()
    server = _Server(_uvicorn_config(emulator), ready.set, emulator.routes)
    failures: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(server.serve(sockets=[sock]))
        except BaseException as exc:  # reported to the starting thread below
            failures.append(exc)
        finally:
            ready.set()

    thread = threading.Thread(target=run, name=f"discord-mcp-emulator-{bound_port}", daemon=True)
    thread.start()

    def stop() -> None:
        server.request_exit()
        thread.join(_STOP_TIMEOUT)
        if thread.is_alive():
            server.force_exit = True
            thread.join(_STOP_TIMEOUT)
        sock.close()

    if not ready.wait(_START_TIMEOUT) or failures or not server.started:
        stop()
        reason = repr(failures[0]) if failures else "it did not start in time"
        raise RuntimeError(f"the emulator could not start on {host}:{bound_port}: {reason}")
    return RunningEmulator(emulator, host, bound_port, stop)


@contextlib.asynccontextmanager
async def serve(
    host: str = DEFAULT_HOST,
    port: int = 0,
    *,
    config: EmulatorConfig | None = None,
    **options: Any,
) -> AsyncIterator[RunningEmulator]:
    """Serve a new emulator inside the running event loop for the duration of the block.

    ``running.emulator`` (its state, limiter, faults) may be used directly from this loop.
    """
    emulator = Emulator(_config(config, options))
    check_binding(host, emulator.config.control_token, emulator.config.token)
    sock = _bind(host, port)
    emulator.guard.bound_host = host
    emulator.state.media_base = base_url(host, sock.getsockname()[1])
    ready = asyncio.Event()
    server = _Server(_uvicorn_config(emulator), ready.set, emulator.routes)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        ready_wait = asyncio.create_task(ready.wait())
        await asyncio.wait(
            {task, ready_wait}, timeout=_START_TIMEOUT, return_when="FIRST_COMPLETED"
        )
        ready_wait.cancel()
        if not server.started:
            raise RuntimeError(f"the emulator could not start on {host}:{sock.getsockname()[1]}")

        def stop() -> None:
            # Stopping early only asks; leaving the block waits for the server to finish.
            server.request_exit()

        yield RunningEmulator(emulator, host, sock.getsockname()[1], stop)
    finally:
        server.request_exit()
        try:
            await asyncio.wait_for(task, _STOP_TIMEOUT)
        except TimeoutError:
            server.force_exit = True
            task.cancel()
        sock.close()
