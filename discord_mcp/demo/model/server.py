"""A scripted stand-in for the model APIs of Claude Code, Codex and Gemini CLI.

The end-to-end tests run the real agent CLIs against this server instead of a real model. One
server speaks all three wire formats, chosen by path:

- Anthropic Messages: ``POST /v1/messages`` (SSE when ``stream`` is true, JSON otherwise), for
  Claude Code with ``ANTHROPIC_BASE_URL=<base_url>``.
- OpenAI Responses: ``POST /v1/responses`` (SSE), for Codex with a provider whose
  ``base_url`` is ``<base_url>/v1``.
- Gemini: ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` and
  ``:generateContent``, for Gemini CLI with ``GOOGLE_GEMINI_BASE_URL=<base_url>``.

A test scripts what "the model" does with :meth:`ModelServer.script`: an ordered list of steps,
one per model request. A step is a reply (:class:`Text`, :class:`ToolCall`) or a function that
decides the reply from the request (see :func:`tool_round_trip`, :func:`quote_tool_result`)::

    model.script(tool_round_trip("echo", "ask_decision", {"question": "A or B?"}), repeat=True)
    ...  # run a CLI
    assert model.tool_results()[0].text == '{"answer":"B"}'
    assert model.requests_containing("B")

Requests that are protocol plumbing rather than a model turn do not use up a step: Gemini's
JSON side calls (router classifier, next-speaker check) get a generic schema-shaped answer, and
Codex's tool-search round trip (a :class:`ToolCall` becomes ``tool_search_call``, then the
``function_call`` once Codex returns ``tool_search_output``) counts as the one step.

Every request is recorded (:attr:`ModelServer.requests`). Anything the script could not handle
(script exhausted, tool not offered to the model, unknown path) is answered with HTTP 500, so
the CLI fails fast with retries off, and is recorded in :attr:`ModelServer.errors`.

The server also acts as a refusing HTTP(S) proxy: point a CLI's ``HTTPS_PROXY`` at
:attr:`ModelServer.proxy_url` (with ``NO_PROXY=127.0.0.1``) and every attempt to reach the
internet is refused and listed in :attr:`ModelServer.outbound_attempts`.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
import uuid
from types import TracebackType
from typing import Any, Self

from discord_mcp.demo.model.recorded import Api, ModelRequest, ToolResult
from discord_mcp.demo.model.script import (
    BuiltinCall,
    Reply,
    ScriptError,
    ShellCall,
    Step,
    Text,
    ToolCall,
)
from discord_mcp.demo.model.serving import Handler, HTTPServer
from discord_mcp.demo.model.wire import event, fill_schema, sse

# --------------------------------------------------------------------------------------------
# The server


class ModelServer:
    """The scripted model server; runs in a background thread on 127.0.0.1, port chosen by the OS.

    Use as a context manager (or :meth:`start` / :meth:`stop`). Thread-safe: requests from
    several CLIs may arrive concurrently; steps are handed out in arrival order.
    """

    def __init__(self, *steps: Step, repeat: bool = False) -> None:
        self._lock = threading.Lock()
        self._requests: list[ModelRequest] = []
        self._errors: list[str] = []
        self._outbound: list[str] = []
        self._steps: list[Step] = []
        self._cursor = 0
        self._repeat = False
        # Codex tool search: call_id of the tool_search_call we emitted -> the call it unlocks.
        self._pending_searches: dict[str, ToolCall] = {}
        self._ids = itertools.count(1)
        self._httpd: HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.script(*steps, repeat=repeat)

    # -- lifecycle

    def start(self) -> Self:
        """Bind a free port and serve in a daemon thread. Returns self."""
        if self._httpd is not None:
            return self
        httpd = HTTPServer(("127.0.0.1", 0), Handler)
        httpd.model = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"model-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket; returns within about a second."""
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the model server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``: ANTHROPIC_BASE_URL and GOOGLE_GEMINI_BASE_URL."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``<base_url>/v1``: the ``base_url`` of a Codex model provider."""
        return f"{self.base_url}/v1"

    @property
    def proxy_url(self) -> str:
        """Use as HTTP(S)_PROXY to refuse and record any traffic meant for the internet."""
        return self.base_url

    # -- scripting

    def script(self, *steps: Step, repeat: bool = False) -> None:
        """Replace the script. Each model turn request takes the next step, in order.

        With ``repeat=True`` the last step stays in force once reached (for steps that decide
        from the request); otherwise a request after the last step is an error.
        """
        with self._lock:
            self._steps = list(steps)
            self._cursor = 0
            self._repeat = repeat

    def _next_step(self) -> Step:
        with self._lock:
            if self._cursor < len(self._steps):
                step = self._steps[self._cursor]
                self._cursor += 1
                return step
            if self._repeat and self._steps:
                return self._steps[-1]
        raise ScriptError(f"the model script is exhausted ({len(self._steps)} step(s) used)")

    @property
    def steps_used(self) -> int:
        """How many steps of the current script have been handed out."""
        with self._lock:
            return self._cursor

    # -- inspection

    @property
    def requests(self) -> list[ModelRequest]:
        """Every request received, in arrival order (a snapshot)."""
        with self._lock:
            return list(self._requests)

    def turn_requests(self, api: Api | None = None) -> list[ModelRequest]:
        """Requests for the model's next move: every API request except side calls.

        Includes Codex's tool-search continuations (the request that gets the actual call).
        """
        return [
            r
            for r in self.requests
            if r.kind in ("turn", "continuation") and (api is None or r.api == api)
        ]

    def requests_containing(self, text: str) -> list[ModelRequest]:
        """Requests whose body contains ``text`` anywhere."""
        return [r for r in self.requests if r.contains(text)]

    def tool_results(self) -> list[ToolResult]:
        """Every distinct tool result the CLIs sent back, in the order first seen."""
        seen: set[tuple[Api, str]] = set()
        results: list[ToolResult] = []
        for request in self.requests:
            for result in request.tool_results():
                key = (result.api, result.call_id + "\0" + result.text)
                if key not in seen:
                    seen.add(key)
                    results.append(result)
        return results

    def tool_calls(self) -> list[tuple[ModelRequest, ToolCall]]:
        """The tool calls the script made, with the request each one answered."""
        return [(r, r.reply) for r in self.requests if isinstance(r.reply, ToolCall)]

    @property
    def errors(self) -> list[str]:
        """Requests the server could not answer as scripted (each was answered with HTTP 500)."""
        with self._lock:
            return list(self._errors)

    @property
    def outbound_attempts(self) -> list[str]:
        """Targets of proxy requests (CONNECT host:port or absolute URLs) that were refused."""
        with self._lock:
            return list(self._outbound)

    def describe(self) -> str:
        """A compact log of the requests, for assertion messages."""
        lines = []
        for r in self.requests:
            reply = r.reply if r.reply is not None else r.error
            lines.append(f"#{r.seq} {r.api} {r.kind} {r.method} {r.path}: {reply!r}")
        return "\n".join(lines) or "(no requests)"

    # -- request handling (called from handler threads)

    def _record(self, request: ModelRequest) -> None:
        with self._lock:
            request.seq = len(self._requests) + 1
            self._requests.append(request)

    def _record_error(self, request: ModelRequest, message: str) -> None:
        request.error = message
        with self._lock:
            self._errors.append(
                f"request #{request.seq} {request.method} {request.path}: {message}"
            )

    def _record_outbound(self, target: str) -> None:
        with self._lock:
            self._outbound.append(target)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_stub_{next(self._ids):04d}{uuid.uuid4().hex[:12]}"

    def _reply_for(self, request: ModelRequest) -> Reply:
        step = self._next_step()
        reply = step(request) if callable(step) else step
        if not isinstance(reply, Text | ToolCall | ShellCall | BuiltinCall):
            raise ScriptError(f"a step returned {reply!r}, not a Reply")
        return reply

    def _handle(self, request: ModelRequest) -> tuple[int, str, bytes]:
        """Answer one API request: (status, content type, body)."""
        try:
            if request.api == "anthropic":
                return self._anthropic(request)
            if request.api == "openai":
                return self._openai(request)
            if request.api == "gemini":
                return self._gemini(request)
            raise ScriptError("no model API at this path")
        except ScriptError as exc:
            self._record_error(request, str(exc))
        except Exception as exc:  # a broken step must fail the CLI run, not hang it
            self._record_error(request, f"{type(exc).__name__}: {exc}")
        message = f"scripted model server: {request.error}"
        body = {"type": "error", "error": {"type": "api_error", "message": message}}
        if request.api == "gemini":
            body = {"error": {"code": 500, "message": message, "status": "INTERNAL"}}
        return 500, "application/json", json.dumps(body).encode()

    # Anthropic Messages

    def _anthropic(self, request: ModelRequest) -> tuple[int, str, bytes]:
        body = request.body if isinstance(request.body, dict) else {}
        request.kind = "turn"
        reply = self._reply_for(request)
        request.reply = reply
        if isinstance(reply, ToolCall | ShellCall | BuiltinCall):
            if isinstance(reply, ShellCall | BuiltinCall):
                name, arguments = reply.wire("anthropic")
            else:
                name, arguments = f"mcp__{reply.server}__{reply.tool}", dict(reply.arguments)
            if name not in request.offered_tools():
                raise ScriptError(
                    f"tool {name} is not offered to the model (offered: {request.offered_tools()})"
                )
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": self._new_id("toolu"),
                "name": name,
                "input": arguments,
            }
            stop_reason = "tool_use"
        else:
            block = {"type": "text", "text": reply.text}
            stop_reason = "end_turn"
        message: dict[str, Any] = {
            "id": self._new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-stub"),
            "content": [block],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 10,
                "output_tokens": 5,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }
        if not body.get("stream"):
            return 200, "application/json", json.dumps(message).encode()
        start = {**message, "content": [], "stop_reason": None}
        start["usage"] = {**message["usage"], "output_tokens": 1}
        if block["type"] == "tool_use":
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        deltas = [delta]
        if isinstance(reply, Text) and reply.pieces > 1:
            deltas = [{"type": "text_delta", "text": piece} for piece in reply.split()]
        events = [
            event("message_start", message=start),
            event("content_block_start", index=0, content_block=opening),
            *(event("content_block_delta", index=0, delta=d) for d in deltas),
            event("content_block_stop", index=0),
            event(
                "message_delta",
                delta={"stop_reason": stop_reason, "stop_sequence": None},
                usage={"output_tokens": 5},
            ),
            event("message_stop"),
        ]
        return 200, "text/event-stream", sse(events)

    # OpenAI Responses (Codex)

    def _openai(self, request: ModelRequest) -> tuple[int, str, bytes]:
        body = request.body if isinstance(request.body, dict) else {}
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        last = items[-1] if items else {}
        with self._lock:
            pending = (
                self._pending_searches.pop(str(last.get("call_id")), None)
                if last.get("type") == "tool_search_output"
                else None
            )
        if pending is not None:
            # Codex answered our tool search: now make the call the step asked for.
            request.kind = "continuation"
            request.reply = pending
            namespace = f"mcp__{pending.server}"
            found = [
                tool.get("name")
                for group in last.get("tools") or []
                if group.get("name") == namespace
                for tool in group.get("tools") or []
            ]
            if pending.tool not in found:
                raise ScriptError(
                    f"Codex's tool search did not return {namespace}/{pending.tool}: "
                    f"{json.dumps(last.get('tools'))[:500]}"
                )
            item: dict[str, Any] = {
                "type": "function_call",
                "id": self._new_id("fc"),
                "call_id": self._new_id("call"),
                "namespace": namespace,
                "name": pending.tool,
                "arguments": json.dumps(dict(pending.arguments)),
                "status": "completed",
            }
        else:
            request.kind = "turn"
            reply = self._reply_for(request)
            request.reply = reply
            if isinstance(reply, ShellCall | BuiltinCall):
                name, arguments = reply.wire("openai")
                if name not in request.offered_tools():
                    raise ScriptError(
                        f"tool {name} is not offered to the model "
                        f"(offered: {request.offered_tools()})"
                    )
                item = {
                    "type": "function_call",
                    "id": self._new_id("fc"),
                    "call_id": self._new_id("call"),
                    "name": name,
                    "arguments": json.dumps(arguments),
                    "status": "completed",
                }
            elif isinstance(reply, ToolCall):
                # Codex defers MCP tools behind a client-side tool search: the model has to
                # search first; the call itself goes out when the search result comes back.
                if "tool_search" not in request.offered_tools():
                    raise ScriptError(
                        f"Codex offered no tool_search, so no MCP tools are configured "
                        f"(offered: {request.offered_tools()})"
                    )
                call_id = self._new_id("call_ts")
                with self._lock:
                    self._pending_searches[call_id] = reply
                item = {
                    "type": "tool_search_call",
                    "id": self._new_id("ts"),
                    "call_id": call_id,
                    "status": "completed",
                    "execution": "client",
                    "arguments": {"query": reply.tool, "limit": 8},
                }
            else:
                item = {
                    "type": "message",
                    "id": self._new_id("msg"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                }
        response: dict[str, Any] = {
            "id": self._new_id("resp"),
            "object": "response",
            "created_at": int(time.time()),
            "status": "in_progress",
            "model": body.get("model", "gpt-stub"),
            "output": [],
        }
        events = [
            event("response.created", response=response),
            event("response.in_progress", response=response),
        ]
        added = {**item, "status": "in_progress"}
        if item["type"] == "message":
            added["content"] = []
        events.append(event("response.output_item.added", output_index=0, item=added))
        if item["type"] == "message":
            part = item["content"][0]
            ids = {"item_id": item["id"], "output_index": 0, "content_index": 0}
            events += [
                event("response.content_part.added", **ids, part={**part, "text": ""}),
                *(
                    event("response.output_text.delta", **ids, delta=piece)
                    for piece in (reply.split() if isinstance(reply, Text) else [part["text"]])
                ),
                event("response.output_text.done", **ids, text=part["text"]),
                event("response.content_part.done", **ids, part=part),
            ]
        elif item["type"] == "function_call":
            ids = {"item_id": item["id"], "output_index": 0}
            events += [
                event("response.function_call_arguments.delta", **ids, delta=item["arguments"]),
                event("response.function_call_arguments.done", **ids, arguments=item["arguments"]),
            ]
        events.append(event("response.output_item.done", output_index=0, item=item))
        completed = {
            **response,
            "status": "completed",
            "output": [item],
            "usage": {
                "input_tokens": 10,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 5,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": 15,
            },
        }
        # Without response.completed Codex reports "stream disconnected before completion".
        events.append(event("response.completed", response=completed))
        for number, (_, data) in enumerate(events):
            data["sequence_number"] = number
        return 200, "text/event-stream", sse(events)

    # Gemini

    def _gemini(self, request: ModelRequest) -> tuple[int, str, bytes]:
        body = request.body if isinstance(request.body, dict) else {}
        match = re.fullmatch(r"/v1beta/models/([^/:]+):(\w+)", request.path)
        model, method = (match.group(1), match.group(2)) if match else ("gemini-stub", "")
        if method == "countTokens":
            # Gemini counts the tokens of a file it reads into the prompt (``@path``): plumbing.
            request.kind = "side"
            return 200, "application/json", json.dumps({"totalTokens": 10}).encode()
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if config.get("responseMimeType") == "application/json" or schema:
            # A side call (router classifier, next-speaker check, ...): answer with JSON of
            # the requested shape; it is plumbing, not a scripted model turn.
            request.kind = "side"
            parts: list[dict[str, Any]] = [{"text": json.dumps(fill_schema(schema or {}))}]
        else:
            request.kind = "turn"
            reply = self._reply_for(request)
            request.reply = reply
            if isinstance(reply, ToolCall | ShellCall | BuiltinCall):
                if isinstance(reply, ShellCall | BuiltinCall):
                    name, arguments = reply.wire("gemini")
                else:
                    name, arguments = f"mcp_{reply.server}_{reply.tool}", dict(reply.arguments)
                if name not in request.offered_tools():
                    raise ScriptError(
                        f"tool {name} is not offered to the model "
                        f"(offered: {request.offered_tools()})"
                    )
                parts = [{"functionCall": {"name": name, "args": arguments}}]
            else:
                parts = [{"text": reply.text}]
        chunk = {
            "candidates": [
                {
                    "content": {"parts": parts, "role": "model"},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "totalTokenCount": 15,
            },
            "modelVersion": model,
            "responseId": self._new_id("resp"),
        }
        if method == "streamGenerateContent":
            said = request.reply if isinstance(request.reply, Text) else None
            if said is not None and said.pieces > 1:
                return 200, "text/event-stream", _gemini_pieces(chunk, said.split())
            return 200, "text/event-stream", f"data: {json.dumps(chunk)}\r\n\r\n".encode()
        return 200, "application/json", json.dumps(chunk).encode()


def _gemini_pieces(chunk: dict[str, Any], pieces: list[str]) -> bytes:
    """The streamed answer as one SSE frame per piece (the last one says it is finished)."""
    frames = []
    for number, piece in enumerate(pieces, 1):
        one = json.loads(json.dumps(chunk))
        one["candidates"][0]["content"]["parts"] = [{"text": piece}]
        if number < len(pieces):
            del one["candidates"][0]["finishReason"], one["usageMetadata"]
        frames.append(f"data: {json.dumps(one)}\r\n\r\n")
    return "".join(frames).encode()
