"""``discord-mcp hook stop``: an agent does not end its turn while its question is open.

Claude Code's and Codex's ``Stop`` and Gemini CLI's ``AfterAgent`` fire when the agent is about
to end its turn, with ``stop_hook_active`` true when it is already continuing because a stop
hook said so. Answering ``{"decision": "block", "reason": ...}`` makes the agent go on, with
the reason as its next instruction (all three CLIs take that shape).

For the questions of this session (:mod:`~discord_mcp.hooks.sessions`):

- answered, but no agent received the answer: the answer is in the reason, and the decision is
  marked delivered in the same locked step (so it is told once, here or by a tool, never twice);
- still pending: the agent is told to call ``wait_decision``, unless ``stop_hook_active``: then
  it may stop. A hook that blocked every time would never let an agent end its turn while the
  owner sleeps; blocking once means the agent waits one more bound before it ends the turn.
- nothing open: no output, the turn ends.

Fast and quiet: it reads decision files and the transcript, talks to no one, and any failure
means no output and exit 0 (the agent stops as it would without us), logged to the log file.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.hooks.runner import HookOptions, quiet_settings
from discord_mcp.hooks.sessions import answered_line, pending_line, session_decisions

log = logging.getLogger(__name__)


def _deliver(store: DecisionStore, decision: Decision) -> Decision | None:
    def mark(current: Decision) -> Decision | None:
        if current.status != "answered" or current.delivered:
            return None
        return current.replace(delivered=True)

    stored, written = store.update(decision.id, mark)
    return stored if written else None


def decide(store: DecisionStore, payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """The hook's answer for ``payload`` (None: let the agent stop)."""
    mine = session_decisions(store, payload)
    answered = [d for d in mine if d.status == "answered" and not d.delivered]
    told = [stored for d in answered if (stored := _deliver(store, d)) is not None]
    pending = [] if payload.get("stop_hook_active") else [d for d in mine if d.status == "pending"]
    if not told and not pending:
        return None
    parts = []
    if told:
        parts.append(
            "Your owner answered in Discord while you were not waiting. These answers are "
            "final; act on them before you end your turn:\n"
            + "\n".join(answered_line(d) for d in told)
        )
    if pending:
        ids = ", ".join(repr(d.id) for d in pending)
        parts.append(
            "You asked your owner in Discord and have no answer yet:\n"
            + "\n".join(pending_line(d) for d in pending)
            + f"\nDo not end your turn or proceed on it: call wait_decision with decision_id "
            f"{ids} now (again while it returns pending). If you no longer need an answer, "
            "call cancel_decision instead."
        )
    return {"decision": "block", "reason": "\n\n".join(parts)}


def handle(
    payload: Mapping[str, Any], options: HookOptions, environ: Mapping[str, str]
) -> dict[str, Any] | None:
    settings = quiet_settings(environ, options.env_file, str(payload.get("cwd") or ""))
    if settings is None:
        return None
    try:
        return decide(DecisionStore(settings.home), payload)
    except Exception:  # never break the user's agent: it stops as it would without us
        log.exception("the stop hook failed; letting the agent stop")
        return None
