"""What every tool module is handed: the server to register on, and the server's shared parts.

The tools live in modules by concern (:mod:`.decision_tools`, :mod:`.chat_tools`,
:mod:`.inbox_tools`, :mod:`.seed_tools`); each has a ``register(server, kit)`` that adds its
tools to ``server`` (a :class:`Registry`). :mod:`discord_mcp.server.app` owns the MCP framework:
it builds the one server object, hands in a :class:`Registry` over it and a :class:`Toolkit`,
and reads as the list of those registrations. This module needs no framework: the running
call's context is any object shaped like a :class:`Call`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from discord_mcp.config import Settings
from discord_mcp.server.limits import max_block_seconds
from discord_mcp.server.roots import ClientProjects, short_client
from discord_mcp.session_labels import gemini_process, id_label, meta_session, remembered
from discord_mcp.state.quarantine import take_reports

if TYPE_CHECKING:
    from discord_mcp.decisions.callers import Caller
    from discord_mcp.decisions.model import Decision
    from discord_mcp.server.runtime import Runtime
    from discord_mcp.server.wire import Wire

Kind = Literal["sends", "reads", "waits", "local", "deletes_local"]
"""How a tool touches the world (its MCP annotations): ``sends`` posts to or edits Discord,
``reads`` reads Discord (and keeps local copies of the owner's files), ``waits`` reads Discord
while it waits, ``local`` reads (and may mark) local state only, ``deletes_local`` deletes
local state."""
Tool = Callable[..., Awaitable[Any]]


class Registry(Protocol):
    """The server the tools are registered on."""

    def add(self, tool: Tool, kind: Kind, *, text_result: bool = False) -> None:
        """Serve ``tool`` under its function's name; ``text_result``: it returns one text block
        (no structured result)."""

    def named(self, name: str) -> Tool:
        """A tool added before, by name (the seed's names call ours)."""


class Call(Protocol):
    """The running tool call, as the framework's context offers it."""

    @property
    def session(self) -> Any: ...

    @property
    def session_id(self) -> str | None: ...

    @property
    def request_id(self) -> str: ...

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None: ...


def client_name(call: Call) -> str | None:
    """The MCP client's name from its ``initialize`` (None before it, or without one)."""
    with contextlib.suppress(RuntimeError, AttributeError):
        params = call.session.client_params
        if params is not None:
            return str(params.client_info.name)
    return None


def request_meta(call: Call) -> Mapping[str, Any] | None:
    """The running request's ``_meta`` (None outside a request, or without one)."""
    with contextlib.suppress(AttributeError, RuntimeError, LookupError, ValueError):
        meta = call.request_context.meta  # type: ignore[attr-defined]
        if meta is None or isinstance(meta, Mapping):
            return meta
        dumped = meta.model_dump(by_alias=True)
        return dumped if isinstance(dumped, dict) else None
    return None


def session_label(
    environ: Mapping[str, str],
    client: str | None,
    *,
    meta: Mapping[str, Any] | None = None,
    home: Path | None = None,
) -> str:
    """Who is asking, short, as the session's approval hook labels it
    (:mod:`discord_mcp.session_labels`): Claude Code's session id from the environment, Codex's
    from the call's ``_meta``, Gemini CLI's as its hooks recorded it under ``home``; else the
    client and this process's id."""
    claude_session = environ.get("CLAUDE_CODE_SESSION_ID", "").strip()
    if claude_session:
        return id_label(claude_session)
    named = meta_session(meta)
    if named:
        return id_label(named)
    if home is not None and (recorded := remembered(home, gemini_process())):
        return id_label(recorded)
    return f"{short_client(client)}-{os.getpid()}"


def reported(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` with a ``warnings`` list if this process quarantined corrupt state files since
    the last tool result (each is reported once; ``doctor`` lists them all)."""
    reports = take_reports()
    if not reports:
        return result
    return {**result, "warnings": [report.sentence() for report in reports]}


@dataclass(frozen=True)
class Toolkit:
    """The server's parts every tool uses, bound to ``settings``.

    Args:
        env: the environment client hints are read from.
        runtime: the server's working parts, built on first use (:mod:`.runtime`).
        current: the running call's context (inside a tool call only).
        errors: turns our errors into the framework's tool errors, whose message an agent
            can act on.
        per_session: one process serves many MCP sessions (HTTP): each is labelled by its
            own MCP session id, not by the process.
        wire: the stdout the server is served on: an answer is marked delivered once its
            response was written there (:mod:`.wire`); None: at once.
        progress_every: seconds between keep-alive progress notifications while waiting.
    """

    settings: Settings
    env: Mapping[str, str]
    runtime: Callable[[], Runtime]
    current: Callable[[], Call]
    errors: Callable[[], AbstractContextManager[None]]
    per_session: bool
    wire: Wire | None
    progress_every: float
    projects: ClientProjects = field(default_factory=ClientProjects)
    """Over HTTP, each session's project as its client's MCP roots name it (:mod:`.roots`)."""

    def reported(self, result: dict[str, Any]) -> dict[str, Any]:
        return reported(result)

    def label(self) -> str:
        """Who asks: the process's session, or over HTTP the MCP session itself (two clients
        of one server never share a label, so their questions are never merged)."""
        call = self.current()
        if self.per_session:
            with contextlib.suppress(AttributeError, RuntimeError):
                if call.session_id:
                    client = short_client(client_name(call))
                    return f"{client}-{call.session_id.replace('-', '')[:8]}"
        return session_label(
            self.env, client_name(call), meta=request_meta(call), home=self.settings.home
        )

    async def project(self) -> str | None:
        """Over HTTP, the client's project as its MCP roots name it (None: the server's)."""
        call = self.current()
        with contextlib.suppress(AttributeError, RuntimeError):
            if self.per_session and call.session_id:
                return await self.projects.of(call.session_id, call.session)
        return None

    def block_bound(self, requested: float | None) -> float:
        """How long this call may block: ``requested``, capped below the client's limit."""
        bound = max_block_seconds(
            client_name(self.current()), self.env, self.settings.max_block_seconds
        )
        return bound if requested is None else max(0.0, min(requested, bound))

    def caller(self) -> Caller:
        """Who calls, for the decisions' owner check: over HTTP, one process serves many
        sessions, so this process having asked is not enough."""
        from discord_mcp.decisions.callers import Caller

        return Caller(self.label(), process_is_session=not self.per_session)

    async def waited(self, decision_id: str, max_wait: float) -> Decision:
        """The decision once answered or ``max_wait`` passed, with keep-alive progress."""
        service = self.runtime().service
        call = self.current()

        async def keep_alive(elapsed: float, decision: Decision) -> None:
            await call.report_progress(
                progress=round(elapsed, 1),
                message=f"waiting for the owner's answer in Discord: {decision.thread_url}",
            )

        decision = await service.wait(
            decision_id,
            max_wait=max_wait,
            progress=keep_alive,
            progress_every=self.progress_every,
            caller=self.caller(),
        )
        return await self.handed_over(decision)

    async def handed_over(self, decision: Decision) -> Decision:
        """The final ``decision`` this call returns, marked delivered once it reached the wire.

        Marking it before the response is written would lose it to a kill in between.
        """
        service = self.runtime().service
        if self.wire is None or not decision.is_final or decision.delivered:
            return await service.mark_delivered(decision)
        if not decision.asker_waiting:
            # Nobody waited when it came (a call took it later): say on the file, before the
            # answer leaves, that this session has it in hand, so that a session handed it after
            # a kill in between is told the asker may have received it.
            decision = await service.mark_taken(decision)

        async def mark() -> None:
            await service.mark_delivered(decision)

        def written() -> None:
            self.runtime().background.spawn(mark(), f"delivered-{decision.id}")

        self.wire.after_response(self.current().request_id, written)
        return decision
