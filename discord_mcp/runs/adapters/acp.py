"""The ACP engine's wire side: one agent process, its connection, and the job's transcript.

Theory. An ACP agent (Agent Client Protocol: JSON-RPC over the agent's stdin/stdout) is not a
one-shot CLI: it is started once, told ``initialize``, then holds sessions (``session/new``,
``session/load``) in which each owner message is one ``session/prompt``. While a prompt runs
the agent sends ``session/update`` notifications (message chunks, tool calls, usage) and may
ask ``session/request_permission``; ``session/cancel`` ends the turn early. The
``agent-client-protocol`` package speaks the JSON-RPC; this module owns one
:class:`AgentProcess` (the process started through the spawner, its connection, its session)
and the lines it writes into the job's stdout log, which :class:`AcpDecoder` reads back, the
same way every CLI's log is read (the final answer, tool calls, the session key, usage; and
after a crash, what was seen).

Transcript lines (one JSON object each, in the job's stdout log)::

    {"type": "acp_session", "session_id": "...", "loaded": true}
    {"type": "acp_update", "update": {...the session/update's update, as sent...}}
    {"type": "acp_result", "stop_reason": "end_turn", "usage": {...}}
    {"type": "acp_error", "message": "..."}

The agent is untrusted: its updates are decoded tolerantly (unknown kinds are counted and
skipped), its text is shown as its own, and nothing it says answers a permission request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import acp
from acp import schema
from acp.utils import serialize_params

from discord_mcp.errors import RunError
from discord_mcp.runs.adapters.acp_models import ModelMenu, menu_of, switch_request
from discord_mcp.runs.adapters.base import (
    Decoder,
    Invocation,
    InvocationRequest,
    Verdict,
    as_int,
)
from discord_mcp.runs.engine.streaming import Head
from discord_mcp.runs.journal.views import Tool, Usage

log = logging.getLogger(__name__)

STREAM_LIMIT = 50 * 1024 * 1024
"""The biggest JSON-RPC line read from an agent (a file or an image may be large)."""
_EXIT_SETTLE_S = 2.0
"""After a request failed with a closed pipe, how long to wait for the process's exit."""
OK_STOPS = frozenset({"end_turn", "max_tokens", "max_turn_requests"})
_SHOWN = 1600
"""Characters of a text segment after which its start, which a status message shows (400
characters of it), is known: later chunks of it change no activity."""

UpdateSink = Callable[[dict[str, Any]], None]
PermissionSink = Callable[[schema.RequestPermissionRequest], Awaitable[dict[str, Any]]]


def transcript_line(kind: str, **fields: Any) -> str:
    """One line of the job's transcript (see the module doc)."""
    return json.dumps({"type": kind, **fields}, ensure_ascii=False, default=str) + "\n"


class AcpDecoder(Decoder):
    """Reads an ACP job's transcript: text, tool calls, session key, usage, the stop reason."""

    tool = "acp"

    def __init__(self) -> None:
        super().__init__()
        self._segment = Head()  # the start of the text since the last tool call
        self._all = Head()  # the start of every text of the turn
        self.stop_reason: str | None = None
        self.error: str | None = None
        self._announced: set[str] = set()  # tool calls seen as ``tool_call``

    def handle(self, event: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind == "acp_session":
            self.session_key = str(event["session_id"])
            return True
        if kind == "acp_result":
            self.final_seen = True
            self.stop_reason = str(event.get("stop_reason") or "")
            self._take_usage(event.get("usage"))
            self.final_text = self._final()
            return True
        if kind == "acp_error":
            self.error = str(event.get("message") or "the agent failed")
            self.note = self.error
            return True
        if kind != "acp_update":
            self.unknown_events += 1
            return False
        return self._update(event["update"])

    def _update(self, update: dict[str, Any]) -> bool:
        what = update.get("sessionUpdate")
        if what == "agent_message_chunk":
            content = update.get("content") or {}
            text = content.get("text") if content.get("type") == "text" else None
            if not isinstance(text, str) or not text:
                return False
            shown = self._segment.kept
            self._segment.add(text)
            self._all.add(text)
            self.stream.add(text)
            if shown >= _SHOWN:
                return False  # the status shows the segment's start, which is known by now
            return self.set_text(self._segment.text)
        if what == "tool_call":
            self._segment = Head()
            self.stream.end_message()
            title = update.get("title") or update.get("kind") or "tool"
            self._announced.add(str(update.get("toolCallId")))
            self.add_tool_call(str(title), update.get("rawInput") or {})
            return True
        if what == "tool_call_update":
            status = update.get("status")
            call = str(update.get("toolCallId"))
            added = status in ("completed", "failed") and call not in self._announced
            if added:
                # Reported only once done (gemini --acp, for a call it asked permission for).
                self._announced.add(call)
                self._segment = Head()
                self.stream.end_message()
                title = update.get("title") or update.get("kind") or "tool"
                self.add_tool_call(str(title), update.get("rawInput") or {})
            if status == "failed":
                self.note = f"tool call failed: {update.get('title') or update.get('toolCallId')}"
                return True
            return added
        if what == "usage_update":
            used, size = as_int(update.get("used")), as_int(update.get("size"))
            if used is not None and size:
                self.context = (used, size)
            return False
        if what in ("agent_thought_chunk", "plan", "user_message_chunk"):
            return False
        self.unknown_events += 1
        return False

    def next_prompt(self) -> None:
        """Another prompt of ours follows in the same job (a denial's note): the final answer
        is the one to it."""
        self._segment = Head()
        self._all = Head()
        self.stream.end_message()

    def _take_usage(self, usage: Any) -> None:
        fields = usage if isinstance(usage, dict) else {}
        inputs = as_int(fields.get("inputTokens", fields.get("input_tokens")))
        outputs = as_int(fields.get("outputTokens", fields.get("output_tokens")))
        total = as_int(fields.get("totalTokens", fields.get("total_tokens")))
        cached = as_int(fields.get("cachedReadTokens", fields.get("cached_read_tokens")))
        used, size = self.context or (None, None)
        if inputs is None and outputs is None and total is None and used is None:
            return
        self.usage = Usage(
            input_tokens=inputs,
            output_tokens=outputs,
            cached_input_tokens=cached,
            total_tokens=total,
            context_used=used,
            context_size=size,
        )

    def _final(self) -> str | None:
        return self._segment.answer() or self._all.answer()

    def verdict(self) -> Verdict | None:
        if not self.final_seen:
            if self.error is not None:
                return Verdict(False, self.error)
            return None
        if self.stop_reason in OK_STOPS:
            return Verdict(True)
        if self.stop_reason == "cancelled":
            return Verdict(False, "the turn was cancelled")
        return Verdict(False, f"the agent ended its turn with {self.stop_reason or 'no reason'}")


class AcpAdapter:
    """What the engine's CLI machinery needs of an ACP agent: a decoder for its transcript.

    Agents are not started per job by argv (see :class:`AgentProcess`); ``invocation`` is never
    called for them.
    """

    def __init__(self, tool: Tool) -> None:
        self.tool = tool

    def invocation(self, request: InvocationRequest) -> Invocation:
        raise NotImplementedError("ACP agents are started by the ACP engine, not per job")

    def decoder(self) -> Decoder:
        decoder = AcpDecoder()
        decoder.tool = self.tool  # type: ignore[misc]
        return decoder

    def steer_line(self, text: str) -> str | None:
        return None  # an agent is steered over its connection (AcpRun.steer), not by stdin


# --------------------------------------------------------------------------------------------
# The client side of the connection


class AcpClient:
    """Our side of the protocol: updates go to the running turn, permissions to the owner.

    Nothing here touches the file system or terminals: we do not offer those capabilities, so
    an agent does its own reading, writing and running (and asks permission for it).
    """

    def __init__(self) -> None:
        self.on_update: UpdateSink | None = None
        self.on_permission: PermissionSink | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        sink = self.on_update
        if sink is None:
            return  # a replay during session/load, or between turns: not this job's text
        try:
            data = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        except AttributeError:
            return
        sink(data)

    async def request_permission(
        self, options: list[schema.PermissionOption], session_id: str, tool_call: Any, **kw: Any
    ) -> schema.RequestPermissionResponse:
        sink = self.on_permission
        request = schema.RequestPermissionRequest(
            options=options, session_id=session_id, tool_call=tool_call
        )
        outcome: dict[str, Any] = {"outcome": "cancelled"}
        if sink is not None:
            try:
                outcome = await sink(request)
            except Exception:  # fail closed: any error is a cancelled request, never an allow
                log.exception("answering an ACP permission request failed; cancelling it")
                outcome = {"outcome": "cancelled"}
        return schema.RequestPermissionResponse.model_validate({"outcome": outcome})

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None


# --------------------------------------------------------------------------------------------
# One agent process


@dataclass(frozen=True)
class McpServerSpec:
    """A stdio MCP server to give the agent's session (discord-mcp as ``discord``)."""

    name: str
    command: str
    args: Sequence[str]
    env: Mapping[str, str]

    def to_acp(self) -> schema.McpServerStdio:
        return schema.McpServerStdio(
            name=self.name,
            command=self.command,
            args=list(self.args),
            env=[schema.EnvVariable(name=k, value=v) for k, v in self.env.items()],
        )


class AgentGone(Exception):
    """The agent process ended (or its pipes closed) while we talked to it."""


class AgentProcess:
    """One running agent, its connection and (once opened) its session.

    ``process``: an asyncio subprocess with stdin and stdout pipes (started by the spawner).
    """

    def __init__(self, process: asyncio.subprocess.Process, *, request_timeout: float) -> None:
        self.process = process
        self.client = AcpClient()
        assert process.stdin is not None
        assert process.stdout is not None
        client: Any = self.client  # the Protocol's decorated signatures do not type-check
        self.conn = acp.connect_to_agent(client, process.stdin, process.stdout)
        self.session_id: str | None = None
        self.models: ModelMenu | None = None  # what the session offers (acp_models)
        self.can_load = False
        self.steering = False
        self.agent_name = ""
        self._timeout = request_timeout
        self._exited: asyncio.Task[int] = asyncio.ensure_future(process.wait())

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def alive(self) -> bool:
        return not self._exited.done()

    @property
    def exit_code(self) -> int | None:
        return self._exited.result() if self._exited.done() else None

    async def call(self, request: Awaitable[Any], *, within: float | None = None) -> Any:
        """Await one request, unless the process ends first (AgentGone) or time runs out."""
        task = asyncio.ensure_future(request)
        try:
            async with asyncio.timeout(self._timeout if within is None else within):
                done, _ = await asyncio.wait(
                    {task, self._exited}, return_when=asyncio.FIRST_COMPLETED
                )
        except TimeoutError:
            task.cancel()
            raise
        if task in done:
            if task.exception() is not None and not isinstance(task.exception(), acp.RequestError):
                # The pipe closed under the request: was it the process ending?
                await asyncio.wait({self._exited}, timeout=_EXIT_SETTLE_S)
                if self._exited.done():
                    raise AgentGone(f"the agent process ended (exit code {self.exit_code})")
            return task.result()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        raise AgentGone(f"the agent process ended (exit code {self.exit_code})")

    async def initialize(self) -> None:
        response = await self.call(
            self.conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION,
                client_capabilities=schema.ClientCapabilities(),
                client_info=schema.Implementation(name="discord-mcp", version="0.1.0"),
            )
        )
        capabilities = response.agent_capabilities
        self.can_load = bool(capabilities and capabilities.load_session)
        meta = response.field_meta or {}
        steering = meta.get("steering") if isinstance(meta, dict) else None
        self.steering = isinstance(steering, dict) and steering.get("supported") is True
        self.agent_name = response.agent_info.name if response.agent_info else ""

    async def open(
        self, cwd: str, mcp: Sequence[McpServerSpec], resume: str | None, mode: str | None
    ) -> tuple[str, bool]:
        """Load ``resume`` (when the agent can) or start a new session; (session id, loaded).

        The answers are read raw: the models a session offers are in parts the SDK drops
        (:mod:`.acp_models`)."""
        servers: list[Any] = [server.to_acp() for server in mcp]
        loaded = False
        if resume and self.can_load:
            try:
                load = schema.LoadSessionRequest(cwd=cwd, session_id=resume, mcp_servers=servers)
                answer = await self.request("session/load", serialize_params(load))
                self.session_id, loaded = resume, True
                self.models = menu_of(answer)
            except acp.RequestError as exc:
                log.info("the agent could not load session %s (%s); starting anew", resume, exc)
        if not loaded:
            new = schema.NewSessionRequest(cwd=cwd, mcp_servers=servers)
            answer = await self.request("session/new", serialize_params(new))
            self.session_id = schema.NewSessionResponse.model_validate(answer).session_id
            self.models = menu_of(answer)
        session_id = self.session_id
        assert session_id is not None
        if mode:
            try:
                await self.call(self.conn.set_session_mode(session_id=session_id, mode_id=mode))
            except acp.RequestError as exc:
                log.warning("the agent refused session mode %r: %s", mode, exc)
        return session_id, loaded

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """One request, its answer as the agent sent it (JSON), bounded like every call.

        The SDK's typed calls drop what its schema does not know (the unstable ``models``,
        ``session/set_model``): these go through its connection's own ``send_request``."""
        wire = self.conn._conn  # the SDK's JSON-RPC connection (agent-client-protocol 0.12)
        return await self.call(wire.send_request(method, params))

    async def switch_model(self, model_id: str) -> None:
        """Switch the open session to ``model_id``, one the session offers.

        Raises:
            RunError: E_INVALID_MODEL (the agent offers no models, or not that one, or
                refused the switch).
        """
        menu, session_id = self.models, self.session_id
        if menu is None or session_id is None:
            raise RunError(
                "E_INVALID_MODEL",
                f"{self.agent_name or 'the agent'} offers no model choice in its session, so "
                f"model {model_id!r} cannot be chosen: set the model back to default",
            )
        if not menu.offers(model_id):
            raise RunError(
                "E_INVALID_MODEL",
                f"{self.agent_name or 'the agent'} does not offer model {model_id!r}; it offers "
                + ", ".join(menu.ids()),
            )
        method, params = switch_request(menu, session_id, model_id)
        try:
            answer = await self.request(method, params)
        except acp.RequestError as exc:
            raise RunError(
                "E_INVALID_MODEL", f"the agent refused to switch to model {model_id!r}: {exc}"
            ) from None
        self.models = menu_of(answer) or ModelMenu(menu.models, model_id, menu.how, menu.config_id)

    def prompt(self, text: str) -> Awaitable[schema.PromptResponse]:
        assert self.session_id is not None
        return self.conn.prompt(
            session_id=self.session_id, prompt=[schema.TextContentBlock(type="text", text=text)]
        )

    async def cancel(self) -> None:
        if self.session_id is not None and self.alive:
            with contextlib.suppress(Exception):
                await self.conn.cancel(session_id=self.session_id)

    async def close(self, grace: float) -> None:
        """End the agent: close its stdin, then SIGTERM, then SIGKILL; bounded."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.conn.close(), grace)
        stdin = self.process.stdin
        if stdin is not None:
            with contextlib.suppress(Exception):
                stdin.close()
        for stop in (self._terminate, self._kill):
            if not self.alive:
                break
            stop()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._exited), grace)
        if self.alive:
            log.warning("agent process %d did not end", self.pid)

    def _terminate(self) -> None:
        _signal_group(self.process, 15)

    def _kill(self) -> None:
        _signal_group(self.process, 9)


def _signal_group(process: asyncio.subprocess.Process, signum: int) -> None:
    import os

    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)  # the agent leads its own group (see the spawner)
