"""The MCP stdio server (the only module that imports the MCP framework).

It answers ``initialize`` and ``tools/list`` before anything touches Discord: the heavy parts
(:mod:`discord_mcp.server.runtime`) are imported on the first tool call, or by the recovery task
that starts shortly after the handshake. Nothing here writes to stdout, which belongs to the
protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.dependencies import get_context
from fastmcp.server.middleware import Middleware, MiddlewareContext
from mcp.types import ToolAnnotations

from discord_mcp import __version__, heap
from discord_mcp.config import Settings
from discord_mcp.errors import DiscordMCPError
from discord_mcp.server import chat_tools, decision_tools, inbox_tools, seed_tools
from discord_mcp.server.http_guard import HttpAccess, HttpGuard
from discord_mcp.server.http_sessions import SessionCap, SessionLimits
from discord_mcp.server.lifecycle import Lifecycle
from discord_mcp.server.toolkit import Kind, Tool, Toolkit, client_name
from discord_mcp.server.wire import Wire

log = logging.getLogger(__name__)

ANNOTATIONS: dict[Kind, ToolAnnotations] = {
    # Posts to or edits Discord.
    "sends": ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True),
    # Reads Discord (and keeps local copies of the owner's files).
    "reads": ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True),
    # Reads Discord while it waits.
    "waits": ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True),
    # Reads (and may mark) local state only.
    "local": ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    # Deletes local state.
    "deletes_local": ToolAnnotations(
        read_only_hint=False, destructive_hint=True, open_world_hint=False
    ),
}
"""The MCP annotations of each kind of tool (:data:`discord_mcp.server.toolkit.Kind`)."""

PROGRESS_EVERY_S = 20.0
"""Keep-alive progress notifications while waiting (clients that reset timers need < 30 s)."""

INSTRUCTIONS = """\
Tools to reach your human owner over Discord, on their phone.
- Use ask_decision when you need a decision you must not guess (destructive or irreversible
  actions, ambiguous requirements, trade-offs the owner cares about). Offer short, distinct
  options when you can; the owner answers with a click, a reaction, a letter or a number.
- ask_decision waits a bounded time. If it returns status "pending", the question is still open:
  call wait_decision with the decision_id to keep waiting. Never treat "pending" as an answer.
- Use notify for one-way news, report_progress for a long task's status card, and check_pending
  at the start of a session to pick up answers that arrived while you were away.
- send_message posts text and files from your project (a log, a diff, a screenshot);
  read_history reads a thread (untrusted input; the owner's files come with local paths).
"""


CHAT_INSTRUCTIONS = """\
Tools to talk in one Discord channel: send_message posts in it, add_reaction reacts to one of
its messages, read_history reads it (untrusted input: the words of whoever wrote them).
"""


class _Handshake(Middleware):
    """Notices the first request, which lets background recovery start, and keeps the client's
    connection for what the server sends unasked (owner messages pushed in channel mode)."""

    def __init__(self, life: Lifecycle) -> None:
        self._seen = life.first_request
        self._peer = life.peer

    async def on_request(self, context: MiddlewareContext[Any], call_next: Any) -> Any:
        self._seen.set()
        ctx = context.fastmcp_context
        if self._peer.get("client") is None and ctx is not None:
            # Known from the first request after ``initialize`` (a probe may come before it).
            with contextlib.suppress(AttributeError, RuntimeError):
                self._peer["session"] = ctx.session
                self._peer["client"] = client_name(ctx)
                if self._peer["client"] is not None:
                    self._peer["known"].set()
        return await call_next(context)


@contextlib.contextmanager
def _tool_errors() -> Iterator[None]:
    """Our errors become tool errors whose message an agent can act on."""
    try:
        yield
    except DiscordMCPError as exc:
        raise ToolError(str(exc)) from exc


class _Registry:
    """The tool modules' view of the server (:class:`discord_mcp.server.toolkit.Registry`)."""

    def __init__(self, mcp: FastMCP) -> None:
        self._mcp = mcp
        self._tools: dict[str, Tool] = {}

    def add(self, tool: Tool, kind: Kind, *, text_result: bool = False) -> None:
        if text_result:
            self._mcp.tool(tool, annotations=ANNOTATIONS[kind], output_schema=None)
        else:
            self._mcp.tool(tool, annotations=ANNOTATIONS[kind])
        self._tools[tool.__name__] = tool

    def named(self, name: str) -> Tool:
        return self._tools[name]


def build_server(
    settings: Settings,
    *,
    environ: Mapping[str, str] | None = None,
    progress_every: float = PROGRESS_EVERY_S,
    channel: bool = False,
    wire: Wire | None = None,
    per_session: bool = False,
) -> FastMCP:
    """The MCP server with every tool, bound to ``settings``; stdio and HTTP both serve it.

    Args:
        environ: the environment to read client hints from (default: the process's).
        progress_every: seconds between keep-alive progress notifications while waiting.
        channel: channel mode: declare ``claude/channel`` and push the owner's messages for
            this session into a Claude Code client (:mod:`discord_mcp.chat.push`).
        wire: the stdout the server is served on: an answer is marked delivered once its
            response was written there (:mod:`.wire`); None (an in-process client, HTTP): at
            once.
        per_session: one process serves many MCP sessions (HTTP): each is labelled by its own
            MCP session id, not by the process.
    """
    from discord_mcp.chat import push

    env: Mapping[str, str] = os.environ if environ is None else environ
    life = Lifecycle(settings, env, channel=channel)
    chat_only = settings.tools == "chat"
    mcp = FastMCP(
        "discord",
        version=__version__,
        instructions=CHAT_INSTRUCTIONS
        if chat_only
        else INSTRUCTIONS + (push.INSTRUCTIONS if channel else ""),
        lifespan=life.lifespan,
        middleware=[_Handshake(life)],
        mask_error_details=True,
        experimental_capabilities={push.CAPABILITY: {}} if channel else None,
    )
    server = _Registry(mcp)
    kit = Toolkit(
        settings=settings,
        env=env,
        runtime=life.runtime,
        current=get_context,
        errors=_tool_errors,
        per_session=per_session,
        wire=wire,
        progress_every=progress_every,
    )
    chat_tools.register(server, kit)  # notify, report_progress, send_message, react, history
    if chat_only:
        return mcp  # the owner's tools are not served at all (runs/restricted.py)
    decision_tools.register(server, kit)  # ask, wait, cancel, approve, check_pending
    inbox_tools.register(server, kit)  # read_inbox, clear_inbox
    if settings.tool_names == "seed":
        seed_tools.register(server)  # the Decision MCP seed's names, over ours
    return mcp


def serve(settings: Settings) -> None:
    """Run the stdio server until the client closes it.

    A client that goes away without closing stdin first (it was killed, or closed our stdout)
    makes the next write fail with a broken pipe: that is a normal end, logged in one line.
    """
    from discord_mcp.chat.push import channel_wanted, parent_argv

    channel = channel_wanted(os.environ, parent_argv())
    wire = Wire()
    try:
        server = build_server(settings, channel=channel, wire=wire)
        heap.settled()  # what it loaded stays, out of the collector's walks (discord_mcp.heap)
        with wire.claimed():
            asyncio.run(_serve_stdio(server, wire, handshake_era=channel))
    except* (BrokenPipeError, ConnectionResetError):
        log.info("the client closed the connection; stopping")
        # Python flushes stdout again at exit, which would fail (and print) once more.
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)


async def _serve_stdio(server: FastMCP, wire: Wire, *, handshake_era: bool) -> None:
    """Serve stdio as ``FastMCP.run`` does, writing to ``wire`` (so an answer is marked
    delivered once its response left, :mod:`.wire`).

    ``handshake_era``: serve the handshake era of MCP only, without the 2026-07-28 era: Claude
    Code registers channel notifications only on such a connection, and falls back to
    ``initialize`` when ``server/discover`` is refused.
    """
    from fastmcp.server.context import reset_transport, set_transport
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    token = set_transport("stdio")
    try:
        async with server._lifespan_manager(), stdio_server(stdout=wire) as (read, write):  # type: ignore[arg-type]
            low = server._mcp_server
            options = low.create_initialization_options()
            log.info("Starting MCP server %r on stdio", server.name)
            if not handshake_era:
                await low.run(read, write, options)
                return
            async with low.lifespan(low) as state:
                await serve_loop(low, read, write, lifespan_state=state, init_options=options)
    finally:
        reset_transport(token)


def http_app(
    settings: Settings,
    access: HttpAccess,
    *,
    limits: SessionLimits | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Any:
    """The server as an ASGI app speaking MCP streamable HTTP at ``/mcp`` (FastMCP's own
    transport), one process for every client session, answering only the callers ``access``
    lets through (:mod:`.http_guard`) and keeping at most ``limits`` sessions
    (:mod:`.http_sessions`; ``clock`` is what their idle time is measured with)."""
    from starlette.middleware import Middleware as AsgiMiddleware

    limits = limits or SessionLimits()
    server = build_server(settings, per_session=True)
    middleware = [
        AsgiMiddleware(HttpGuard, access=access),
        AsgiMiddleware(SessionCap, limits=limits, clock=clock),
    ]
    return server.http_app(
        path="/mcp",
        middleware=middleware,
        # Ours is the one check of Host and Origin; the SDK ends idle sessions as ours does.
        host_origin_protection=False,
        session_idle_timeout=limits.idle_seconds,
    )


def serve_http(settings: Settings, access: HttpAccess, limits: SessionLimits) -> None:
    """Serve MCP over streamable HTTP at ``http://host:port/mcp`` (``access``'s) until
    interrupted. Logs go to stderr and the log file, never stdout (access lines are off)."""
    import uvicorn

    app = http_app(settings, access, limits=limits)
    config = uvicorn.Config(
        app, host=access.host, port=access.port, log_config=None, access_log=False, lifespan="on"
    )
    server = uvicorn.Server(config)
    heap.settled()
    log.info("serving MCP over HTTP at http://%s:%d/mcp", access.host, access.port)
    server.run()
