"""Claude Code's permission-prompt tool: ``--permission-prompt-tool mcp__discord__approve``.

In print mode Claude Code calls the tool with ``{"tool_name", "input", "tool_use_id"}`` for every
tool call its permission rules would ask a person about, and expects one text block holding
JSON: ``{"behavior": "allow", "updatedInput": {...}}`` (the input to run with; we return it
unchanged) or ``{"behavior": "deny", "message": "..."}`` (the message goes back to the model
as the tool's error; the turn goes on). The session is Claude Code's ``CLAUDE_CODE_SESSION_ID``
(given to stdio MCP servers; stable across ``--resume``), which scopes "Allow for this session".

Bounds (Claude Code 2.1.330, measured against the scripted model): the call is bounded by
``MCP_TOOL_TIMEOUT`` (a wall clock; about 28 hours when unset; "MCP server "discord" tool
"approve" timed out after 5s" with 5000) and by a per-server ``timeout`` in the MCP config, which
we cannot see. It is not moved to the background (``CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS=2000``
with a 14 s wait: the answer still arrived) and the stdio idle timeout does not cut it
(``CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT=6000``, no progress for 14 s: same). We send progress
every 20 s anyway. The wait is ``DISCORD_MCP_APPROVAL_WAIT_SECONDS`` (600 s by default), capped
below ``MCP_TOOL_TIMEOUT``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from typing import Any

from discord_mcp.approvals.request import ToolRequest
from discord_mcp.approvals.service import ApprovalService, Outcome
from discord_mcp.decisions.service import Progress
from discord_mcp.errors import DiscordError, StateError, Unauthorized

log = logging.getLogger(__name__)

MARGIN_S = 15.0
NOT_ASKED = (
    "The owner could not be asked for approval ({why}), so this tool call was not run. Do not "
    "retry it at once: go on without it, try again in a few minutes, or tell the owner"
)
"""A denial when no card could reach the owner: fail closed, in words the model can act on
(never Discord's raw error line)."""


def prompt_wait_bound(wanted: float, environ: Mapping[str, str]) -> float:
    """``wanted`` seconds, capped below Claude Code's ``MCP_TOOL_TIMEOUT`` (milliseconds)."""
    raw = environ.get("MCP_TOOL_TIMEOUT", "").strip()
    try:
        limit = float(raw) / 1000 if raw else 0.0
    except ValueError:
        limit = 0.0
    if limit > 0:
        return min(wanted, max(limit - MARGIN_S, limit / 2))
    return wanted


def prompt_result(outcome: Outcome, tool_input: Mapping[str, Any]) -> str:
    """The text block Claude Code expects."""
    if outcome.behavior == "allow":
        return json.dumps({"behavior": "allow", "updatedInput": dict(tool_input)})
    return json.dumps({"behavior": "deny", "message": outcome.message})


async def answer_prompt(
    approvals: ApprovalService,
    *,
    tool_name: str,
    tool_input: Mapping[str, Any],
    tool_use_id: str | None,
    environ: Mapping[str, str],
    label: str,
    wait_seconds: float,
    progress: Progress | None = None,
) -> str:
    """Decide one permission prompt and return the text block for Claude Code."""
    request = ToolRequest(
        client="claude",
        tool_name=tool_name,
        tool_input=dict(tool_input),
        session_id=environ.get("CLAUDE_CODE_SESSION_ID", "").strip() or label,
        cwd=environ.get("CLAUDE_PROJECT_DIR", "") or os.getcwd(),
        route="prompt-tool",
        tool_use_id=tool_use_id,
    )
    try:
        outcome = await approvals.decide(
            request,
            max_wait=prompt_wait_bound(wait_seconds, environ),
            label=label,
            progress=progress,
        )
    except Exception as exc:  # fail closed: whatever went wrong, the call does not run
        why = _why_not_asked(exc)
        log.warning("approval of %s denied: the owner could not be asked (%s)", tool_name, exc)
        return json.dumps({"behavior": "deny", "message": NOT_ASKED.format(why=why)})
    return prompt_result(outcome, tool_input)


def _why_not_asked(exc: Exception) -> str:
    """What failed, for the model: a few words, no status line or route."""
    if isinstance(exc, Unauthorized):
        return "Discord refused the bot's token"
    if isinstance(exc, DiscordError):
        return "Discord did not take the approval card"
    if isinstance(exc, StateError):
        return "the approval could not be recorded on this machine"
    return "an unexpected error in discord-mcp"
