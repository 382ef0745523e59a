"""The ACP engine's transcript side: the job's transcript lines and how they are read back.

Theory. An ACP agent (Agent Client Protocol: JSON-RPC over the agent's stdin/stdout) is not a
one-shot CLI: it is started once, told ``initialize``, then holds sessions (``session/new``,
``session/load``) in which each owner message is one ``session/prompt``. While a prompt runs
the agent sends ``session/update`` notifications (message chunks, tool calls, usage) and may
ask ``session/request_permission``; ``session/cancel`` ends the turn early. The
``agent-client-protocol`` package speaks the JSON-RPC; :mod:`.acp_wire` owns one
:class:`~discord_mcp.runs.adapters.acp_wire.AgentProcess` (the process started through the
spawner, its connection, its session). This module owns the lines written into the job's stdout
log, which :class:`AcpDecoder` reads back, the same way every CLI's log is read (the final
answer, tool calls, the session key, usage; and after a crash, what was seen).

It does not import the SDK (``acp.schema`` alone costs about 0.6 s of CPU): every
``discord-watch`` loads this module through the run engine, and only one that starts an ACP
agent needs :mod:`.acp_wire`.

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
import importlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from discord_mcp.runs.adapters.base import (
    Decoder,
    Invocation,
    InvocationRequest,
    Verdict,
    as_int,
)
from discord_mcp.runs.engine.streaming import Head
from discord_mcp.runs.journal.views import Tool, Usage

STREAM_LIMIT = 50 * 1024 * 1024
"""The biggest JSON-RPC line read from an agent (a file or an image may be large)."""
WIRE = "discord_mcp.runs.adapters.acp_wire"
"""The agent process and its client (the ACP SDK): imported where an agent starts, never before
(a daemon without ACP agents never pays ``acp.schema``; tests/watch/test_start_imports.py)."""


async def wire() -> ModuleType:
    """:data:`WIRE`, imported off the event loop (its first import is a second of CPU)."""
    return await asyncio.to_thread(importlib.import_module, WIRE)


OK_STOPS = frozenset({"end_turn", "max_tokens", "max_turn_requests"})
_SHOWN = 1600
"""Characters of a text segment after which its start, which a status message shows (400
characters of it), is known: later chunks of it change no activity."""


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


@dataclass(frozen=True)
class McpServerSpec:
    """A stdio MCP server to give the agent's session (discord-mcp as ``discord``)."""

    name: str
    command: str
    args: Sequence[str]
    env: Mapping[str, str]


class AgentGone(Exception):
    """The agent process ended (or its pipes closed) while we talked to it."""
