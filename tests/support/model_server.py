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

import gzip
import itertools
import json
import re
import sys
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import parse_qs, urlsplit

Api = Literal["anthropic", "openai", "gemini"]
RequestKind = Literal["turn", "continuation", "side", "unknown"]


# --------------------------------------------------------------------------------------------
# What the scripted model can say


@dataclass(frozen=True)
class Text:
    """The model answers with plain text and ends its turn."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """The model calls ``tool`` of the MCP server registered as ``server`` in the CLI.

    The wire name is derived per API: ``mcp__<server>__<tool>`` for Claude Code,
    namespace ``mcp__<server>`` + name ``<tool>`` for Codex (after a tool search),
    ``mcp_<server>_<tool>`` for Gemini CLI.
    """

    server: str
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ShellCall:
    """The model runs ``command`` with the CLI's own shell tool, not an MCP tool.

    Claude Code's ``Bash`` (``{"command", "description"}``), Codex's ``exec_command``
    (``{"cmd"}``, plus ``codex_arguments`` such as ``sandbox_permissions``), Gemini CLI's
    ``run_shell_command`` (``{"command", "description"}``). The tool must be offered to the
    model (headless Gemini offers it only in yolo mode).
    """

    command: str
    description: str = "run a shell command"
    codex_arguments: Mapping[str, Any] = field(default_factory=dict)

    def wire(self, api: Api) -> tuple[str, dict[str, Any]]:
        """The tool's name and arguments as ``api`` spells them."""
        if api == "anthropic":
            return "Bash", {"command": self.command, "description": self.description}
        if api == "openai":
            return "exec_command", {"cmd": self.command, **self.codex_arguments}
        return "run_shell_command", {"command": self.command, "description": self.description}


@dataclass(frozen=True)
class BuiltinCall:
    """The model calls one of the CLI's own tools by the name that CLI offers it under (e.g.
    Claude Code's ``Read`` or ``Write``, Gemini CLI's ``write_file``), with ``arguments``."""

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    def wire(self, api: Api) -> tuple[str, dict[str, Any]]:
        return self.tool, dict(self.arguments)


Reply = Text | ToolCall | ShellCall | BuiltinCall
Step = Reply | Callable[["ModelRequest"], Reply]


class ScriptError(Exception):
    """Raised by a step that cannot answer the request; the server answers HTTP 500."""


def wait_until(
    condition: Callable[[], Any], *, timeout: float, what: str, interval: float = 0.02
) -> Any:
    """Poll ``condition`` until it returns something truthy, and return that.

    Raises ``TimeoutError`` naming ``what`` after ``timeout`` seconds. For waiting on another
    process (a CLI, an MCP server) where no event can be awaited; the bound keeps a broken
    run from stalling the suite.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)


# --------------------------------------------------------------------------------------------
# Recorded requests


@dataclass(frozen=True)
class ToolResult:
    """A tool result the CLI sent back to the model, in whichever API's shape.

    ``text`` is the result's text content with the CLI's own wrapping removed (Codex's
    ``Wall time: ... Output:`` preamble, Gemini's ``<untrusted_context>`` tags); ``raw`` is the
    item exactly as sent.
    """

    api: Api
    call_id: str
    name: str | None
    text: str
    is_error: bool
    raw: Any


@dataclass
class ModelRequest:
    """One HTTP request the server received, with what it answered."""

    seq: int
    api: Api | None
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    kind: RequestKind = "unknown"
    reply: Reply | None = None
    error: str | None = None

    def dump(self) -> str:
        """The JSON body as text (non-ASCII kept), for substring checks."""
        return json.dumps(self.body, ensure_ascii=False)

    def contains(self, text: str) -> bool:
        """Whether ``text`` occurs anywhere in the body, decoded or JSON-escaped."""
        dumped = self.dump()
        return text in dumped or json.dumps(text, ensure_ascii=False)[1:-1] in dumped

    def tool_results(self) -> list[ToolResult]:
        """All tool results in the conversation history this request carries, oldest first."""
        if self.api == "anthropic":
            return _anthropic_tool_results(self.body, latest_only=False)
        if self.api == "openai":
            return _openai_tool_results(self.body, latest_only=False)
        if self.api == "gemini":
            return _gemini_tool_results(self.body, latest_only=False)
        return []

    def latest_tool_results(self) -> list[ToolResult]:
        """The tool results that just came back: those after the last user-authored message.

        Empty when the request starts a new user turn (the prompt, or a resumed session's
        next prompt), even if earlier turns called tools.
        """
        if self.api == "anthropic":
            return _anthropic_tool_results(self.body, latest_only=True)
        if self.api == "openai":
            return _openai_tool_results(self.body, latest_only=True)
        if self.api == "gemini":
            return _gemini_tool_results(self.body, latest_only=True)
        return []

    def user_texts(self) -> list[str]:
        """Text the user side of the conversation wrote (prompts, and what the CLI injected)."""
        if self.api == "anthropic":
            return _anthropic_user_texts(self.body)
        if self.api == "openai":
            return _openai_user_texts(self.body)
        if self.api == "gemini":
            return _gemini_user_texts(self.body)
        return []

    def offered_tools(self) -> list[str]:
        """Names of the tools offered to the model, as this API spells them."""
        if not isinstance(self.body, dict):
            return []
        names: list[str] = []
        for tool in self.body.get("tools") or []:
            if not isinstance(tool, dict):
                continue
            if self.api == "gemini":
                names += [d.get("name", "") for d in tool.get("functionDeclarations") or []]
            else:
                names.append(str(tool.get("name") or tool.get("type") or ""))
        return names


def _text_of(content: Any) -> str:
    """Join the text parts of a content value that is a string or a list of typed blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict)
        ).strip("\n")
    if content is None:
        return ""
    return json.dumps(content, ensure_ascii=False)


def _anthropic_tool_results(body: Any, *, latest_only: bool) -> list[ToolResult]:
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return []
    names: dict[str, str] = {}
    results: list[ToolResult] = []
    user_indexes = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    for index, message in enumerate(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                names[str(block.get("id"))] = str(block.get("name"))
            elif block.get("type") == "tool_result":
                if latest_only and (not user_indexes or index != user_indexes[-1]):
                    continue
                call_id = str(block.get("tool_use_id"))
                results.append(
                    ToolResult(
                        api="anthropic",
                        call_id=call_id,
                        name=names.get(call_id),
                        text=_text_of(block.get("content")),
                        is_error=bool(block.get("is_error")),
                        raw=block,
                    )
                )
    return results


def _anthropic_user_texts(body: Any) -> list[str]:
    texts: list[str] = []
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in messages if isinstance(messages, list) else []:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [b.get("text", "") for b in content if b.get("type") == "text"]
    return texts


_CODEX_WALL_TIME = re.compile(r"^Wall time: [^\n]*\nOutput:\s*$")


def _openai_output_text(output: Any) -> str:
    # Codex puts "Wall time: 0.01 seconds\nOutput:" in front of the MCP result's own parts.
    if isinstance(output, list):
        parts = [p for p in output if isinstance(p, dict)]
        if parts and _CODEX_WALL_TIME.match(str(parts[0].get("text", ""))):
            parts = parts[1:]
        return _text_of(parts)
    if isinstance(output, str):
        return re.sub(r"^Wall time: [^\n]*\nOutput:\n?", "", output)
    return _text_of(output)


def _openai_tool_results(body: Any, *, latest_only: bool) -> list[ToolResult]:
    items = body.get("input") if isinstance(body, dict) else None
    if not isinstance(items, list):
        return []
    names: dict[str, str] = {}
    results: list[ToolResult] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message" and item.get("role") == "user" and latest_only:
            results = []
        elif item.get("type") == "function_call":
            namespace = item.get("namespace")
            name = str(item.get("name"))
            names[str(item.get("call_id"))] = f"{namespace}__{name}" if namespace else name
        elif item.get("type") == "function_call_output":
            call_id = str(item.get("call_id"))
            output = item.get("output")
            results.append(
                ToolResult(
                    api="openai",
                    call_id=call_id,
                    name=names.get(call_id),
                    text=_openai_output_text(output),
                    is_error=False,
                    raw=item,
                )
            )
    return results


def _openai_user_texts(body: Any) -> list[str]:
    texts: list[str] = []
    items = body.get("input") if isinstance(body, dict) else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user":
            texts.append(_text_of(item.get("content")))
    return texts


_UNTRUSTED = re.compile(r"^<untrusted_context>\n?(.*?)\n?</untrusted_context>$", re.DOTALL)


def _gemini_tool_results(body: Any, *, latest_only: bool) -> list[ToolResult]:
    contents = body.get("contents") if isinstance(body, dict) else None
    if not isinstance(contents, list):
        return []
    results: list[ToolResult] = []
    for content in contents:
        if not isinstance(content, dict) or content.get("role") == "model":
            continue
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
        if latest_only and not responses:
            results = []  # a user-authored message starts a new turn
            continue
        for response in responses:
            payload = response.get("response")
            if isinstance(payload, dict) and set(payload) <= {"output", "error"}:
                text = str(payload.get("output", payload.get("error", "")))
            else:
                text = json.dumps(payload, ensure_ascii=False)
            match = _UNTRUSTED.match(text)
            results.append(
                ToolResult(
                    api="gemini",
                    call_id=str(response.get("id", "")),
                    name=response.get("name"),
                    text=match.group(1) if match else text,
                    is_error=isinstance(payload, dict) and "error" in payload,
                    raw=response,
                )
            )
    return results


def _gemini_user_texts(body: Any) -> list[str]:
    texts: list[str] = []
    contents = body.get("contents") if isinstance(body, dict) else None
    for content in contents if isinstance(contents, list) else []:
        if isinstance(content, dict) and content.get("role") == "user":
            texts += [p["text"] for p in content.get("parts") or [] if "text" in p]
    return texts


# --------------------------------------------------------------------------------------------
# Script helpers


def quote_tool_result(
    template: str = "The tool returned: {result}",
) -> Callable[[ModelRequest], Reply]:
    """A step that answers with text quoting the tool result that just came back.

    ``{result}`` in ``template`` is replaced by the result's text. Fails the request (and
    records an error) if the request carries no fresh tool result.
    """

    def step(request: ModelRequest) -> Reply:
        results = request.latest_tool_results()
        if not results:
            raise ScriptError("expected the request to carry a tool result, found none")
        return Text(template.format(result=results[-1].text))

    return step


def tool_round_trip(
    server: str,
    tool: str,
    arguments: Mapping[str, Any],
    template: str = "The tool returned: {result}",
) -> Callable[[ModelRequest], Reply]:
    """A step that decides from the request: call the tool, or quote its fresh result.

    If the request carries a tool result that just came back, answer with ``template`` (see
    :func:`quote_tool_result`); otherwise call ``tool``. Use it with ``repeat=True`` to serve a
    whole tool turn however many requests the CLI makes.
    """
    call = ToolCall(server, tool, dict(arguments))

    def step(request: ModelRequest) -> Reply:
        results = request.latest_tool_results()
        if results:
            return Text(template.format(result=results[-1].text))
        return call

    return step


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
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.script(*steps, repeat=repeat)

    # -- lifecycle

    def start(self) -> Self:
        """Bind a free port and serve in a daemon thread. Returns self."""
        if self._httpd is not None:
            return self
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
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
        events = [
            _event("message_start", message=start),
            _event("content_block_start", index=0, content_block=opening),
            _event("content_block_delta", index=0, delta=delta),
            _event("content_block_stop", index=0),
            _event(
                "message_delta",
                delta={"stop_reason": stop_reason, "stop_sequence": None},
                usage={"output_tokens": 5},
            ),
            _event("message_stop"),
        ]
        return 200, "text/event-stream", _sse(events)

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
            _event("response.created", response=response),
            _event("response.in_progress", response=response),
        ]
        added = {**item, "status": "in_progress"}
        if item["type"] == "message":
            added["content"] = []
        events.append(_event("response.output_item.added", output_index=0, item=added))
        if item["type"] == "message":
            part = item["content"][0]
            ids = {"item_id": item["id"], "output_index": 0, "content_index": 0}
            events += [
                _event("response.content_part.added", **ids, part={**part, "text": ""}),
                _event("response.output_text.delta", **ids, delta=part["text"]),
                _event("response.output_text.done", **ids, text=part["text"]),
                _event("response.content_part.done", **ids, part=part),
            ]
        elif item["type"] == "function_call":
            ids = {"item_id": item["id"], "output_index": 0}
            events += [
                _event("response.function_call_arguments.delta", **ids, delta=item["arguments"]),
                _event("response.function_call_arguments.done", **ids, arguments=item["arguments"]),
            ]
        events.append(_event("response.output_item.done", output_index=0, item=item))
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
        events.append(_event("response.completed", response=completed))
        for number, (_, data) in enumerate(events):
            data["sequence_number"] = number
        return 200, "text/event-stream", _sse(events)

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
            parts: list[dict[str, Any]] = [{"text": json.dumps(_fill_schema(schema or {}))}]
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
            return 200, "text/event-stream", f"data: {json.dumps(chunk)}\r\n\r\n".encode()
        return 200, "application/json", json.dumps(chunk).encode()


def _fill_schema(schema: Mapping[str, Any]) -> Any:
    """A minimal value matching a JSON schema (enums take their first value)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: _fill_schema(sub) for name, sub in properties.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return max(1, int(schema.get("minimum", 1)))
    if kind == "boolean":
        return False
    return "scripted"


def _event(name: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    """An SSE event whose data repeats its name as ``type``, as both APIs do."""
    return name, {"type": name, **fields}


def _sse(events: Sequence[tuple[str, Mapping[str, Any]]]) -> bytes:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


def _api_for(path: str) -> Api | None:
    if path in ("/v1/messages", "/messages"):
        return "anthropic"
    if path in ("/v1/responses", "/responses"):
        return "openai"
    if path.startswith("/v1beta/models/"):
        return "gemini"
    return None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    model: ModelServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A CLI that exits (or is killed) mid-response resets its connection: not our error.
        # Anything else is a bug in the server and must fail the test, not just print.
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError):
            return
        with self.model._lock:
            self.model._errors.append(f"handler crashed: {type(exc).__name__}: {exc}")


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 with Content-Length on every body, SSE included: the whole event stream is
    # built before sending, so undici (Claude, Gemini) and reqwest (Codex) keep connections
    # alive without chunked encoding.
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    # Idle keep-alive connections are closed after this, so handler threads do not pile up.
    timeout = 30

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output clean; every request is recorded instead

    def do_CONNECT(self) -> None:
        self.server.model._record_outbound(self.path)
        self._send(403, "text/plain", b"outbound traffic refused by the test harness\n")
        self.close_connection = True

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        model = self.server.model
        raw = self._read_body()
        target = self.path
        if target.startswith(("http://", "https://")):
            # Absolute-form request: a client sent plain HTTP through us as its proxy.
            parts = urlsplit(target)
            if parts.hostname not in ("127.0.0.1", "localhost"):
                model._record_outbound(target)
                self._send(403, "text/plain", b"outbound traffic refused by the test harness\n")
                return
            target = parts.path + (f"?{parts.query}" if parts.query else "")
        parts = urlsplit(target)
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body: Any = (
                json.loads(_decode(raw, headers.get("content-encoding", ""))) if raw else None
            )
        except (ValueError, OSError) as exc:
            body = {"_undecodable": f"{type(exc).__name__}: {exc}"}
        api = _api_for(parts.path) if self.command == "POST" else None
        request = ModelRequest(
            seq=0,  # numbered when recorded
            api=api,
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query),
            headers=headers,
            body=body,
        )
        model._record(request)
        status, content_type, payload = model._handle(request)
        self._send(status, content_type, payload)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            return b"".join(self._chunks())
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _chunks(self) -> Iterator[bytes]:
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline().strip():  # trailers, then the blank line
                    pass
                return
            yield self.rfile.read(size)
            self.rfile.readline()

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-cache")
        self.send_header("request-id", f"req_stub_{uuid.uuid4().hex[:12]}")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
        self.wfile.flush()


def _decode(raw: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding == "gzip":
        return gzip.decompress(raw)
    if encoding == "deflate":
        return zlib.decompress(raw)
    if encoding in ("", "identity"):
        return raw
    raise OSError(f"unsupported Content-Encoding {encoding!r}")
