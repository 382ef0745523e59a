"""The requests the scripted model received, read in each API's own shape."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from discord_mcp.demo.model.replies import Api, Reply

RequestKind = Literal["turn", "continuation", "side", "unknown"]


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


def api_for(path: str) -> Api | None:
    if path in ("/v1/messages", "/messages"):
        return "anthropic"
    if path in ("/v1/responses", "/responses"):
        return "openai"
    if path.startswith("/v1beta/models/"):
        return "gemini"
    return None
