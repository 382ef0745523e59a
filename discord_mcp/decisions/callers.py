"""Who may wait on a decision, cancel it and be handed its answer.

A decision belongs to the project that asked it (:meth:`Settings.owns`), and, while the session
that asked it still runs, to that session: another project's agent, or another live session of
the project, that waits on its id would take the owner's answer and mark it delivered, and the
asker would never get it. Once the asking session is gone (its process's lease is free), any
session of the project may take the question over: an answer survives its asker's restart.

A session is known by its label (the Claude Code session id, else the client and the process);
a decision written without one is the project's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from discord_mcp.config import Settings
from discord_mcp.decisions.model import Decision
from discord_mcp.errors import NotYourDecision
from discord_mcp.state.leases import lease_alive


@dataclass(frozen=True, slots=True)
class Caller:
    """Who calls a tool about a decision: its session's label, and whether every session of
    its process is that one session (stdio: yes; HTTP serves many sessions from one process:
    no)."""

    session: str
    process_is_session: bool = True


def check_caller(
    settings: Settings, home: Path, own_lease: str | None, decision: Decision, caller: Caller
) -> None:
    """Raise unless ``caller`` (in the process holding ``own_lease``) may wait on
    ``decision``, cancel it and be handed its answer.

    Raises:
        NotYourDecision: with a sentence the calling agent can act on.
    """
    if not settings.owns(decision):
        raise NotYourDecision(
            f"decision {decision.id} was asked by another project ({decision.project}): only "
            "that project's agents can wait on it, cancel it or receive its answer. Use the "
            "decision_id your own ask_decision returned, or call check_pending for this "
            "project's open decisions"
        )
    if not decision.session or decision.session == caller.session:
        return
    lease = decision.asker_lease
    if lease is not None and lease == own_lease and caller.process_is_session:
        return  # this process asked it, or took it over (check_pending)
    if lease_alive(home, lease):
        raise NotYourDecision(
            f"decision {decision.id} was asked by another session of this project "
            f"({decision.session}) that is still running: only it can wait on it, cancel it or "
            "receive its answer. Ask with ask_decision yourself if you need an answer too"
        )
