"""A run's readable transcript (``logs/events.md``): what the agent said, which tools it called
with which arguments, and what they returned, from each turn's raw CLI output.

Tolerant like the decoders (:mod:`discord_mcp.runs.adapters.base`): a line that is not an event,
or an event we do not know, is skipped; the raw stream stays in ``logs/turn-NNN.stdout.ndjson``.
Long tool results are cut (:data:`RESULT_LIMIT`); the agent's own text never is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

RESULT_LIMIT = 1500
ARGUMENT_LIMIT = 500


def render_turn(
    tool: str, turn: int, message: str, lines: Iterable[str], *, status: str | None = None
) -> str:
    """One turn as Markdown: a heading, the message, then its events in order."""
    head = f"## Turn {turn} · {tool}" + (f" · {status}" if status else "")
    body = [head, "", _quote(message or "(no message)"), ""]
    render = {"claude": _claude, "codex": _codex, "gemini": _gemini}.get(tool, _any_agent)
    entries: list[str] = []
    for event in _events(lines):
        try:
            entries.extend(render(iter([event])))
        except (AttributeError, KeyError, TypeError, ValueError):
            continue  # a known event with a shape we did not expect: skipped, as decoders do
    if tool not in ("claude", "codex"):
        entries = _join_gemini_text(entries)  # Gemini's and ACP agents' text comes in pieces
    body.append("\n\n".join(entries) or "_(no output)_")
    return "\n".join(body).rstrip() + "\n"


def _join_gemini_text(entries: list[str]) -> list[str]:
    """Gemini streams its text in pieces, rendered one event at a time: join neighbours."""
    joined: list[str] = []
    for entry in entries:
        if entry.startswith(_TEXT) and joined and joined[-1].startswith(_TEXT):
            joined[-1] += entry[len(_TEXT) :]
        else:
            joined.append(entry)
    return joined


_TEXT = "**Assistant**\n\n"


def _events(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        text = line.strip()
        if not text.startswith("{"):
            continue
        try:
            event = json.loads(text)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" for line in text.splitlines() or [""])


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more)"


def _block(text: str, limit: int = RESULT_LIMIT) -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}\n{_cut(text.rstrip(), limit)}\n{fence}"


def _arguments(value: Any) -> str:
    if isinstance(value, dict) and isinstance(value.get("command"), str) and len(value) <= 2:
        return str(value["command"])
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


def _call(name: str, arguments: Any) -> str:
    return f"**Tool call** `{name}`\n{_block(_arguments(arguments), ARGUMENT_LIMIT)}"


def _result(text: str, *, error: bool = False) -> str:
    return f"**{'Tool error' if error else 'Result'}**\n{_block(text)}"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict)
        ).strip()
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _claude(events: Iterator[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for event in events:
        kind = event.get("type")
        content = (event.get("message") or {}).get("content")
        if kind == "assistant" and isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and str(block.get("text", "")).strip():
                    out.append(_TEXT + str(block["text"]).strip())
                elif block.get("type") == "tool_use":
                    out.append(_call(str(block.get("name")), block.get("input")))
        elif kind == "user" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    error = bool(block.get("is_error"))
                    out.append(_result(_text_of(block.get("content")), error=error))
        elif kind == "result":
            out.append(_final(event.get("is_error"), event.get("result")))
    return out


def _codex(events: Iterator[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for event in events:
        kind = event.get("type")
        item = event.get("item")
        if kind == "item.completed" and isinstance(item, dict):
            out.extend(_codex_item(item))
        elif kind == "turn.failed":
            error = event.get("error") or {}
            out.append(_final(True, error.get("message") if isinstance(error, dict) else error))
        elif kind == "turn.completed":
            out.append("_(turn completed)_")
    return out


def _codex_item(item: dict[str, Any]) -> list[str]:
    kind = item.get("type")
    if kind == "agent_message":
        return [_TEXT + str(item.get("text", "")).strip()]
    if kind == "command_execution":
        output = str(item.get("aggregated_output") or "")
        code = item.get("exit_code")
        return [
            _call("shell", {"command": item.get("command")}),
            _result(output + (f"\n(exit code {code})" if code not in (None, 0) else ""),
                    error=code not in (None, 0)),
        ]  # fmt: skip
    if kind == "file_change":
        changes = [
            f"{c.get('kind', 'change')} {c.get('path')}"
            for c in item.get("changes") or []
            if isinstance(c, dict)
        ]
        return [_call("file_change", "\n".join(changes))]
    if kind == "mcp_tool_call":
        name = f"mcp__{item.get('server')}__{item.get('tool')}"
        result = item.get("result") if isinstance(item.get("result"), dict) else {}
        text = _text_of(result.get("content")) if result else json.dumps(item.get("error"))
        return [_call(name, item.get("arguments")), _result(text, error=bool(item.get("error")))]
    if kind == "web_search":
        return [_call("web_search", {"query": item.get("query")})]
    if kind == "error":
        return [f"_error: {item.get('message')}_"]
    return []


def _gemini(events: Iterator[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for event in events:
        kind = event.get("type")
        if kind == "message" and event.get("role") == "assistant":
            if str(event.get("content", "")):
                out.append(_TEXT + str(event.get("content", "")))
        elif kind == "tool_use":
            out.append(_call(str(event.get("tool_name")), event.get("parameters")))
        elif kind == "tool_result":
            output = event.get("output")
            if output is None and event.get("error"):
                output = json.dumps(event["error"], ensure_ascii=False)
            out.append(_result(str(output or ""), error=event.get("status") != "success"))
        elif kind == "result":
            error = event.get("error") if isinstance(event.get("error"), dict) else {}
            failed = event.get("status") != "success"
            out.append(_final(failed, (error or {}).get("message") if failed else None))
    return out


def _any_agent(events: Iterator[dict[str, Any]]) -> list[str]:
    """An ACP agent's transcript lines (``acp_update`` and the rest, see
    :mod:`discord_mcp.runs.adapters.acp`); a line of a headless CLI is read as Claude's."""
    out: list[str] = []
    for event in events:
        kind = event.get("type")
        if kind == "acp_update" and isinstance(event.get("update"), dict):
            out.extend(_acp_update(event["update"]))
        elif kind == "acp_result":
            stop = event.get("stop_reason")
            failed = stop not in ("end_turn", "max_tokens", "max_turn_requests")
            out.append(_final(failed, f"the turn ended with {stop or 'no reason'}"))
        elif kind == "acp_error":
            out.append(_final(True, event.get("message")))
        else:
            out.extend(_claude(iter([event])))
    return out


def _acp_update(update: dict[str, Any]) -> list[str]:
    """One ``session/update``. An agent may announce a call (``tool_call``) before it runs, or
    only report it once done (``tool_call_update``, as ``gemini --acp`` does for a command it
    asked permission for): a finished call is shown with its title and its output."""
    what = update.get("sessionUpdate")
    if what == "agent_message_chunk":
        content = update.get("content") or {}
        text = content.get("text") if content.get("type") == "text" else None
        return [_TEXT + text] if isinstance(text, str) and text else []
    if what == "tool_call":
        return [_call(_acp_title(update), update.get("rawInput") or update.get("title") or "")]
    if what == "tool_call_update" and update.get("status") in ("completed", "failed"):
        output = _acp_output(update)
        failed = update.get("status") == "failed"
        return [f"**Tool {'failed' if failed else 'done'}** `{_acp_title(update)}`"] + (
            [_result(output, error=failed)] if output else []
        )
    return []


def _acp_title(update: dict[str, Any]) -> str:
    return str(update.get("title") or update.get("kind") or update.get("toolCallId") or "tool")


def _acp_output(update: dict[str, Any]) -> str:
    """A call's output: its content's text parts (diffs named by path), else its raw output."""
    parts: list[str] = []
    for item in update.get("content") or []:
        if not isinstance(item, dict):
            continue
        inner = item.get("content")
        if item.get("type") == "content" and isinstance(inner, dict) and inner.get("text"):
            parts.append(str(inner["text"]))
        elif item.get("type") == "diff":
            parts.append(f"diff of {item.get('path')}")
    if parts:
        return "\n".join(parts)
    raw = update.get("rawOutput")
    return "" if raw is None else _text_of(raw)


def _final(error: Any, text: Any) -> str:
    if error:
        return f"**Failed**: {text or 'no details'}"
    return "_(turn completed)_"
