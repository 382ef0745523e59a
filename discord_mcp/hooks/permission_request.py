"""``discord-mcp hook permission-request``: Claude Code's and Codex's ``PermissionRequest``.

Both CLIs run the hook when they would ask a person to allow a tool call, with
``{"session_id", "transcript_path", "cwd", "hook_event_name": "PermissionRequest",
"permission_mode", "tool_name", "tool_input", ...}`` on stdin (Claude Code adds
``permission_suggestions``; Codex adds ``turn_id`` and ``model``, and calls its shell tool
``Bash`` with ``{"command", "description"}``), and both read::

    {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                            "decision": {"behavior": "allow"}}}
    {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                            "decision": {"behavior": "deny", "message": "..."}}}

or nothing (no decision: the CLI asks its own way). What each does meanwhile (2.1.330 / 0.169.0):

- Claude Code, interactive: the dialog is on screen while the hook runs; the first answer wins.
  When the terminal wins, the hook is not stopped: it sees the call's result appear in the
  transcript, closes the card ("Answered at the terminal") and exits without an answer.
- Claude Code, headless (``-p`` without a permission-prompt tool): the hook is the only way to
  say yes; no answer means denied.
- Codex: the hook runs before its own approval UI (TUI) or automatic review (``exec
  --approve-for-me``); no decision hands the request on to those.

When no one answers within the wait: an unattended session (headless Claude,
``CLAUDE_CODE_SESSION_ATTENDED=0``; Codex exec) is told that no one answered and the tool was
not run; an attended one gets no decision, so its terminal keeps asking. When the owner cannot be
asked at all (Discord down, settings missing, ...; :mod:`~discord_mcp.hooks.guard`): the call
is denied with the reason (exit code 2), except in an attended Claude Code session, whose
terminal keeps asking. Codex gets the denial even at its terminal: without a decision its
``--approve-for-me`` reviewer, not a person, might answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from discord_mcp.approvals.request import ToolRequest
from discord_mcp.approvals.service import Outcome
from discord_mcp.config import parse_flag
from discord_mcp.hooks.runner import HookOptions, configure_logging, decide, hook_settings
from discord_mcp.hooks.runner import session_label as label_of
from discord_mcp.hooks.transcript import TranscriptWatch, answered_at_terminal

EVENT = "PermissionRequest"


def request_of(payload: Mapping[str, Any], client: str) -> ToolRequest:
    return ToolRequest(
        client="codex" if client == "codex" else "claude",
        tool_name=str(payload.get("tool_name") or ""),
        tool_input=dict(payload.get("tool_input") or {}),
        session_id=str(payload.get("session_id") or ""),
        cwd=str(payload.get("cwd") or ""),
        route="hook",
        tool_use_id=str(payload.get("tool_use_id") or "") or None,
        turn_id=str(payload.get("turn_id") or "") or None,
        event=EVENT,
    )


def attended(client: str, environ: Mapping[str, str]) -> bool:
    """Whether a person may answer at the terminal."""
    if client == "claude":
        return environ.get("CLAUDE_CODE_SESSION_ATTENDED") == "1"
    # A discord-watch run (any yes spelling) has no one at a terminal; a bad value is an error
    # that blocks the call (hooks fail closed), never "attended".
    return not parse_flag("DISCORD_MCP_RUN", environ.get("DISCORD_MCP_RUN", ""))


def answer(outcome: Outcome, *, attended: bool) -> dict[str, Any] | None:
    """The hook's stdout for ``outcome`` (None: no decision)."""
    if outcome.how == "elsewhere" or (outcome.how == "timeout" and attended):
        return None
    decision: dict[str, Any] = {"behavior": outcome.behavior}
    if outcome.behavior == "deny":
        decision["message"] = outcome.message
    return {"hookSpecificOutput": {"hookEventName": EVENT, "decision": decision}}


def handle(
    payload: Mapping[str, Any], options: HookOptions, environ: Mapping[str, str]
) -> dict[str, Any] | None:
    import asyncio

    present = attended(options.client, environ)
    request = dataclasses.replace(request_of(payload, options.client), attended=present)
    settings = hook_settings(environ, options.env_file, request.cwd)
    configure_logging(settings)
    wait = options.wait if options.wait is not None else settings.approval_wait_seconds
    transcript = payload.get("transcript_path")
    watch = None
    if transcript and options.client == "claude":
        watch = TranscriptWatch(Path(str(transcript)), request.tool_name, request.tool_input)
        watch.prime()  # before the card is posted: a terminal answer from now on is news

    async def elsewhere() -> str:
        return await answered_at_terminal(watch)

    outcome = asyncio.run(
        decide(
            settings,
            request,
            wait=wait,
            label=label_of(request.session_id),
            elsewhere=elsewhere if watch is not None else None,
            process=options.process,
            reply=lambda o: answer(o, attended=present),
        )
    )
    return answer(outcome, attended=present)
