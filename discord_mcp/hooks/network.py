"""``discord-mcp hook network --client claude|gemini``: the early, explained refusal of a run
without network.

The promise itself is kept by the operating system: every command of such a run's agent runs in
a network namespace of its own (:mod:`discord_mcp.runs.offline`). This hook only spares the
agent a command that would fail there anyway, with a reason it can act on ("this run has no
network") instead of a connection error. Wired by the run adapters for a run whose constraints
say no network (:mod:`discord_mcp.runs.constraints`): Claude Code's ``PreToolUse`` (in the
run's ``--settings`` file) and Gemini CLI's ``BeforeTool`` (in the overlay settings of runs
without network). It needs no Discord settings and answers at once, from the tool call alone:

- a web tool, or a tool of an MCP server other than ours: denied;
- a shell command that uses the network (:func:`~discord_mcp.judge.network.network_use`):
  denied, with the reason as the tool's error, so the agent can do without;
- anything else: no decision (the CLI's own rules, and our approvals, go on as usual).

Fail closed: an event it cannot read, or any error of its own, is a denial, never "no
decision" (for both CLIs a hook that fails lets the call run).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from discord_mcp.hooks.runner import HookOptions


def handle(
    payload: Mapping[str, Any], options: HookOptions, environ: Mapping[str, str]
) -> dict[str, Any] | None:
    try:
        from discord_mcp.judge.network import network_use

        tool_input = payload.get("tool_input")
        arguments = dict(tool_input) if isinstance(tool_input, Mapping) else {}
        reason = network_use(str(payload.get("tool_name") or ""), arguments)
    except Exception as exc:  # fail closed: see the module doc
        reason = f"the network guard failed ({exc!r}); this run has no network"
    if reason is None:
        return {} if options.client == "gemini" else None
    return deny(options.client, reason)


def deny(client: str, reason: str) -> dict[str, Any]:
    """A denial as ``client`` reads it."""
    if client == "gemini":
        return {"decision": "deny", "reason": reason}
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
