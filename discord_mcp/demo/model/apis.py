"""The three wire formats the scripted model speaks, each answering one request with the
script's next reply: Anthropic Messages (Claude Code), OpenAI Responses (Codex, with its
tool-search round trip) and Gemini (with its JSON side calls).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from discord_mcp.demo.model.playback import Playback
from discord_mcp.demo.model.recorded import ModelRequest
from discord_mcp.demo.model.replies import BuiltinCall, ShellCall, Text, ToolCall
from discord_mcp.demo.model.script import ScriptError
from discord_mcp.demo.model.wire import event, fill_schema, sse


def answer(model: Playback, request: ModelRequest) -> tuple[int, str, bytes]:
    """Answer one API request: (status, content type, body)."""
    try:
        if request.api == "anthropic":
            return _anthropic(model, request)
        if request.api == "openai":
            return _openai(model, request)
        if request.api == "gemini":
            return _gemini(model, request)
        raise ScriptError("no model API at this path")
    except ScriptError as exc:
        model.record_error(request, str(exc))
    except Exception as exc:  # a broken step must fail the CLI run, not hang it
        model.record_error(request, f"{type(exc).__name__}: {exc}")
    message = f"scripted model server: {request.error}"
    body = {"type": "error", "error": {"type": "api_error", "message": message}}
    if request.api == "gemini":
        body = {"error": {"code": 500, "message": message, "status": "INTERNAL"}}
    return 500, "application/json", json.dumps(body).encode()


# --------------------------------------------------------------------------------------------
# Anthropic Messages


def _anthropic(model: Playback, request: ModelRequest) -> tuple[int, str, bytes]:
    body = request.body if isinstance(request.body, dict) else {}
    request.kind = "turn"
    reply = model.reply_for(request)
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
            "id": model.new_id("toolu"),
            "name": name,
            "input": arguments,
        }
        stop_reason = "tool_use"
    else:
        block = {"type": "text", "text": reply.text}
        stop_reason = "end_turn"
    message: dict[str, Any] = {
        "id": model.new_id("msg"),
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


# --------------------------------------------------------------------------------------------
# OpenAI Responses (Codex)


def _openai(model: Playback, request: ModelRequest) -> tuple[int, str, bytes]:
    body = request.body if isinstance(request.body, dict) else {}
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    last = items[-1] if items else {}
    pending = (
        model.take_search(str(last.get("call_id")))
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
            "id": model.new_id("fc"),
            "call_id": model.new_id("call"),
            "namespace": namespace,
            "name": pending.tool,
            "arguments": json.dumps(dict(pending.arguments)),
            "status": "completed",
        }
    else:
        request.kind = "turn"
        reply = model.reply_for(request)
        request.reply = reply
        if isinstance(reply, ShellCall | BuiltinCall):
            name, arguments = reply.wire("openai")
            if name not in request.offered_tools():
                raise ScriptError(
                    f"tool {name} is not offered to the model (offered: {request.offered_tools()})"
                )
            item = {
                "type": "function_call",
                "id": model.new_id("fc"),
                "call_id": model.new_id("call"),
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
            call_id = model.new_id("call_ts")
            model.remember_search(call_id, reply)
            item = {
                "type": "tool_search_call",
                "id": model.new_id("ts"),
                "call_id": call_id,
                "status": "completed",
                "execution": "client",
                "arguments": {"query": reply.tool, "limit": 8},
            }
        else:
            item = {
                "type": "message",
                "id": model.new_id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
    response: dict[str, Any] = {
        "id": model.new_id("resp"),
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


# --------------------------------------------------------------------------------------------
# Gemini


def _gemini(model: Playback, request: ModelRequest) -> tuple[int, str, bytes]:
    body = request.body if isinstance(request.body, dict) else {}
    match = re.fullmatch(r"/v1beta/models/([^/:]+):(\w+)", request.path)
    version, method = (match.group(1), match.group(2)) if match else ("gemini-stub", "")
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
        reply = model.reply_for(request)
        request.reply = reply
        if isinstance(reply, ToolCall | ShellCall | BuiltinCall):
            if isinstance(reply, ShellCall | BuiltinCall):
                name, arguments = reply.wire("gemini")
            else:
                name, arguments = f"mcp_{reply.server}_{reply.tool}", dict(reply.arguments)
            if name not in request.offered_tools():
                raise ScriptError(
                    f"tool {name} is not offered to the model (offered: {request.offered_tools()})"
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
        "modelVersion": version,
        "responseId": model.new_id("resp"),
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
