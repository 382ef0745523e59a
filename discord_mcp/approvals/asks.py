"""What an ACP agent asks before it acts, and the answer (``session/request_permission``):
the run engine hands each ask to a :data:`PermissionAsker`, which the daemon wires to the
approval cards (:mod:`discord_mcp.approvals.acp`). Defined here, below the engine, so the
approvals never import the runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PermissionOption:
    """One answer an ACP agent offers for a permission request (``kind``: ``allow_once``,
    ``allow_always``, ``reject_once``, ``reject_always``, or one the protocol adds later)."""

    option_id: str
    name: str
    kind: str


@dataclass(frozen=True)
class PermissionAsk:
    """An ACP agent asks the owner before it acts (``session/request_permission``).

    Everything but the ids comes from the agent: untrusted, shown as its own words.
    """

    thread_id: str
    job_id: str
    project_name: str
    agent: str  # the agent's registered name
    session_id: str
    cwd: str
    title: str
    kind: str  # the tool call's kind: read, edit, execute, fetch, ... ("other" when unsaid)
    raw_input: Mapping[str, Any]
    options: tuple[PermissionOption, ...]
    tool_call_id: str = ""
    diffs: tuple[FileDiff, ...] = ()
    """The file edits the agent showed with the request (ACP ``diff`` tool call content)."""


@dataclass(frozen=True)
class FileDiff:
    """An edit an ACP agent shows: the file, its text before (None: a new file) and after."""

    path: str
    old_text: str | None
    new_text: str


@dataclass(frozen=True)
class PermissionChoice:
    """The answer: one of the agent's options, or None (the request is cancelled: nobody
    answered, the answer did not fit the options, or something failed). Never an allow by
    default."""

    option_id: str | None
    reason: str = ""
    note: str | None = None


PermissionAsker = Callable[[PermissionAsk], Awaitable[PermissionChoice]]
"""Asks the owner (the daemon wires it to the approval cards); bounded by the approval wait."""
