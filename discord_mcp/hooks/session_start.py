"""``discord-mcp hook session-start``: a new session is given the answers that came while no
session was listening, so nothing depends on the agent remembering ``check_pending``.

Claude Code, Codex and Gemini CLI run ``SessionStart`` hooks when a session starts or resumes,
and add ``hookSpecificOutput.additionalContext`` to what the model sees first.

What it gives, for the project the session runs in (named after ``cwd``, as the server names
it) and for this session's own questions (:mod:`~discord_mcp.hooks.sessions`):

- answers that arrived while away: final, never handed to an agent, their asking process gone
  and nobody waiting on them; each is marked delivered in the same locked step
  (:meth:`~discord_mcp.decisions.store.DecisionStore.deliver_if_away`, as ``check_pending``
  does), so exactly one session gets it. A ``discord-watch`` run's questions are left to the
  daemon, which resumes that run with them (:mod:`discord_mcp.decisions.late`).
- questions still pending whose asker is gone, to pick up with ``wait_decision`` if needed.

Nothing to tell: no output. Fast and quiet like :mod:`~discord_mcp.hooks.stop`: decision files
only, no Discord, and any failure means no output and exit 0, logged to the log file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.hooks.runner import HookOptions, quiet_settings, remember_session
from discord_mcp.hooks.sessions import answered_line, pending_line, session_decisions
from discord_mcp.state.leases import lease_alive

log = logging.getLogger(__name__)


def decide(
    store: DecisionStore, payload: Mapping[str, Any], owns: Callable[[Decision], bool]
) -> dict[str, Any] | None:
    """The hook's answer (None: nothing to tell)."""
    own = {d.id for d in session_decisions(store, payload)}
    delivered, orphans = [], []
    for decision in store.open_decisions():
        if decision.kind != "question" or decision.from_run:
            continue
        if not owns(decision) and decision.id not in own:
            continue
        if decision.status == "answered" and not decision.delivered:
            if (stored := store.deliver_if_away(decision.id)) is not None:
                delivered.append(stored)
        elif decision.status == "pending" and not lease_alive(store.home, decision.asker_lease):
            orphans.append(decision)
    if not delivered and not orphans:
        return None
    parts = []
    if delivered:
        parts.append(
            "discord-mcp: your owner answered these questions in Discord while no session was "
            "listening. The answers are final and no other session has them; act on those that "
            "still matter:\n" + "\n".join(answered_line(d, away=True) for d in delivered)
        )
    if orphans:
        parts.append(
            "discord-mcp: these questions to your owner are still open and no session is "
            "waiting on them. If you need one, call wait_decision with its decision_id; if not, "
            "cancel_decision:\n" + "\n".join(pending_line(d) for d in orphans)
        )
    context = "\n\n".join(parts)
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}


def handle(
    payload: Mapping[str, Any], options: HookOptions, environ: Mapping[str, str]
) -> dict[str, Any] | None:
    settings = quiet_settings(environ, options.env_file, str(payload.get("cwd") or ""))
    if settings is None:
        return None
    remember_session(settings, payload)  # under Gemini CLI: its server's labels name it
    try:
        return decide(DecisionStore(settings.home), payload, settings.owns)
    except Exception:  # never break the user's agent: it starts as it would without us
        log.exception("the session-start hook failed; starting without it")
        return None
