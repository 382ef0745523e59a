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

The server lives in the package (:mod:`discord_mcp.demo.model`), where ``discord-mcp demo
--agent`` uses it too; this module re-exports it for the tests and adds :func:`wait_until`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from discord_mcp.demo.model import (
    Api,
    BuiltinCall,
    ModelRequest,
    ModelServer,
    Reply,
    RequestKind,
    ScriptError,
    ShellCall,
    Step,
    Text,
    ToolCall,
    ToolResult,
    quote_tool_result,
    tool_round_trip,
)
from tests.support.waiting import pauses

__all__ = [
    "Api",
    "BuiltinCall",
    "ModelRequest",
    "ModelServer",
    "Reply",
    "RequestKind",
    "ScriptError",
    "ShellCall",
    "Step",
    "Text",
    "ToolCall",
    "ToolResult",
    "quote_tool_result",
    "tool_round_trip",
    "wait_until",
]


def wait_until(
    condition: Callable[[], Any], *, timeout: float, what: str, interval: float = 0.02
) -> Any:
    """Poll ``condition`` until it returns something truthy, and return that.

    Raises ``TimeoutError`` naming ``what`` after ``timeout`` seconds. For waiting on another
    process (a CLI, an MCP server) where no event can be awaited; the bound keeps a broken
    run from stalling the suite.
    """
    deadline = time.monotonic() + timeout
    waits = pauses(interval)
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(next(waits))
