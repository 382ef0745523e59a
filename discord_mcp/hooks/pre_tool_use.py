"""``discord-mcp hook pre-tool-use``: the ``PreToolUse`` hook of Claude Code and Codex.

Claude Code (``discord-watch`` runs): Claude Code lets reads and other tools its rules allow run
without a permission prompt (``Read`` of a ``.env`` in the project included). With ``--ask-all``
(a project's ``ask-all``) this hook answers every call (but this server's own tools) with
``permissionDecision: "ask"``, which sends it to the permission prompt, i.e. to the ``approve``
tool and the owner; without it (``ask``: the run's settings match only the read tools,
:data:`~discord_mcp.hooks.reads.CLAUDE_READS`), only a read that names a secret
(:func:`~discord_mcp.hooks.reads.reads_secret`) is sent there, and any other gets no decision
(Claude Code's own rules go on). It needs no Discord settings and answers at once.

Codex (``discord-watch`` runs): Codex asks about no command its sandbox allows, so this hook is
where a run's calls ask the owner: every call that writes or executes (``ask``: a shell command
that only reads, see :mod:`discord_mcp.judge.readonly`, runs without asking) or every call
(``ask-all``, or ``DISCORD_MCP_APPROVALS=ask-all``). Codex reads (0.169.0)::

    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                            "permissionDecisionReason": "..."}}

as "Command blocked by PreToolUse hook: <reason>", and no output as "go on". A call that also
needs to leave the sandbox then raises Codex's ``PermissionRequest``, which the owner's Allow
here already answers, once (:mod:`~discord_mcp.approvals.rules`: the same command in the same
turn, handed to this call's ``PreToolUse``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from discord_mcp.hooks.options import HookOptions

if TYPE_CHECKING:
    from discord_mcp.approvals.service import Outcome

OWN_TOOLS = "mcp__discord__"
SHELL = "Bash"


def _ask(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": reason,
        }
    }


def handle(
    payload: Mapping[str, Any], options: HookOptions, environ: Mapping[str, str]
) -> dict[str, Any] | None:
    tool = str(payload.get("tool_name") or "")
    if tool.startswith(OWN_TOOLS):
        return None
    if options.client != "codex":
        if options.ask_all:
            return _ask("every tool call asks the owner in Discord (ask-all)")
        from discord_mcp.hooks.reads import CLAUDE_READS, reads_secret

        arguments = payload.get("tool_input") or {}
        if tool in CLAUDE_READS and reads_secret(tool, arguments, str(payload.get("cwd") or "")):
            return _ask("this reads what may be a secret: the owner decides in Discord")
        return None
    mode = environ.get("DISCORD_MCP_APPROVALS", "").strip()
    if mode == "off":
        return None
    arguments = dict(payload.get("tool_input") or {})
    if not (options.ask_all or mode == "ask-all") and _reads(tool, arguments):
        return None
    return _decide(payload, tool, arguments, options, environ)


def _reads(tool: str, arguments: Mapping[str, Any]) -> bool:
    from discord_mcp.judge.readonly import is_read_only

    command = arguments.get("command")
    return tool == SHELL and isinstance(command, str) and is_read_only(command)


def _decide(
    payload: Mapping[str, Any],
    tool: str,
    arguments: dict[str, Any],
    options: HookOptions,
    environ: Mapping[str, str],
) -> dict[str, Any] | None:
    from discord_mcp.approvals.request import ToolRequest
    from discord_mcp.hooks.runner import configure_logging, decide, hook_settings, session_label

    request = ToolRequest(
        client="codex",
        tool_name=tool,
        tool_input=arguments,
        session_id=str(payload.get("session_id") or ""),
        cwd=str(payload.get("cwd") or ""),
        route="hook",
        tool_use_id=str(payload.get("tool_use_id") or "") or None,
        turn_id=str(payload.get("turn_id") or "") or None,
        event="PreToolUse",
    )
    settings = hook_settings(environ, options.env_file, request.cwd)
    configure_logging(settings)
    wait = options.wait if options.wait is not None else settings.approval_wait_seconds
    outcome = asyncio.run(
        decide(
            settings,
            request,
            wait=wait,
            label=session_label(request.session_id),
            process=options.process,
            reply=_answer,
        )
    )
    return _answer(outcome)


def _answer(outcome: Outcome) -> dict[str, Any] | None:
    if outcome.behavior == "allow":
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": outcome.message,
        }
    }
