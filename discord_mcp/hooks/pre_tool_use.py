"""``discord-mcp hook pre-tool-use``: Claude Code's ``PreToolUse``, for ``ask-all``.

Claude Code lets reads and other tools its rules allow run without a permission prompt. With a
project's approvals set to ``ask-all``, this hook answers every tool call (except this server's
own tools) with ``permissionDecision: "ask"``, which sends it to the permission prompt, i.e. to
the ``approve`` tool and the owner. It needs no Discord settings and answers at once::

    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                            "permissionDecisionReason": "..."}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from discord_mcp.hooks.runner import HookOptions

OWN_TOOLS = "mcp__discord__"


def handle(
    payload: Mapping[str, Any], options: HookOptions, environ: Mapping[str, str]
) -> dict[str, Any] | None:
    tool = str(payload.get("tool_name") or "")
    if tool.startswith(OWN_TOOLS):
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "every tool call asks the owner in Discord (ask-all)",
        }
    }
