"""A decision: one question to the owner, from asking to its one resolution.

A decision is a file (``decisions/<id>.json``, see :mod:`discord_mcp.decisions.store`). Its
status moves once, from ``pending`` to ``answered``, ``cancelled`` or ``expired``; whoever sees
the answer first makes that move with a locked compare-and-set, recording who answered, when and
how (``via``).

Two kinds share the format: a ``question`` (``ask_decision``) and an ``approval`` (an agent
CLI asking to run a tool, :mod:`discord_mcp.approvals`). An approval's request is the JSON
object in ``approval``; its answer is ``allow`` or ``deny`` with a ``scope`` and a ``note``.
"""

from __future__ import annotations

import dataclasses
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from discord_mcp.i18n import LANGUAGES

FORMAT_VERSION = 1
"""Version of the decision file format (a public contract; see CHANGELOG)."""

Status = Literal["pending", "answered", "cancelled", "expired"]
Via = Literal["text", "reaction", "button", "select", "modal"]
Kind = Literal["question", "approval"]
FINAL_STATUSES: frozenset[str] = frozenset({"answered", "cancelled", "expired"})


def new_decision_id(now: datetime | None = None) -> str:
    """A sortable, unique id such as ``20261122-161503-9f3a1c``."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(3)}"


def utc_now() -> str:
    """The current UTC time in ISO 8601 (what decision files store)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True, slots=True)
class Attempt:
    """Someone who is not an owner tried to answer; recorded, never obeyed."""

    user_id: str
    username: str
    via: str
    at: str
    message_id: str | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    """Everything about one question. The fields are the file format (version 1)."""

    id: str
    project: str
    session: str
    question: str
    context: str | None
    options: tuple[str, ...]
    channel_id: str
    thread_id: str
    card_message_id: str
    thread_url: str
    asked_at: str
    deadline: str | None = None
    on_timeout: str | None = None
    mention: bool = False
    reaction_emojis: tuple[str, ...] = ()
    status: Status = "pending"
    answer: str | None = None
    selected_option: str | None = None
    selected_index: int | None = None
    answered_by: str | None = None
    answered_by_name: str | None = None
    via: Via | None = None
    answered_at: str | None = None
    cancel_reason: str | None = None
    delivered: bool = False
    """True once a tool call returned the final result to an agent."""
    clarifications: int = 0
    seen_message_id: str | None = None
    """Every thread message up to this id has been handled (the polling cursor)."""
    handled_message_ids: tuple[str, ...] = ()
    """Messages after the cursor already handled live (from the gateway)."""
    owner_ids: tuple[str, ...] = ()
    """Who may answer, as configured by the process that asked (empty: the reader's owners)."""
    refused: tuple[Attempt, ...] = ()
    refusal_replied_to: tuple[str, ...] = ()
    """Users already told they cannot answer (told once per decision)."""
    notices: tuple[str, ...] = ()
    """One-time notices already posted in the thread (e.g. ``content_hidden``)."""
    asker_lease: str | None = None
    """The asking process's lease (:mod:`discord_mcp.state.leases`): while it is alive, an
    answer belongs to that session and is not handed to another one as "arrived while away"."""
    card_buttons: bool = False
    """The card carries buttons (it was posted, or upgraded, while a gateway was live)."""
    final_shown: bool = False
    """The card shows the outcome (edited after the decision became final)."""
    answer_message_id: str | None = None
    """The reply that answered, when it carried files (to fetch them again)."""
    attachments: tuple[dict[str, Any], ...] = ()
    """The files of the answering reply (entries of :mod:`discord_mcp.files.store`, without a
    path: the tools add it once the file is kept)."""
    urgent: bool = False
    """The agent marked it urgent: reminders ignore quiet hours."""
    reminders: int = 0
    """Reminders sent for it so far (:mod:`discord_mcp.decisions.reminders`)."""
    reminded_at: str | None = None
    """When the last reminder went out (UTC, ISO 8601)."""
    kind: Kind = "question"
    """``question`` or ``approval`` (added in format 1 without a bump: older readers ignore it,
    and every field below it is optional)."""
    approval: dict[str, Any] | None = None
    """An approval's request (client, tool, input, session, cwd; see
    :class:`discord_mcp.approvals.request.ToolRequest`)."""
    scope: str | None = None
    """An allowed approval: ``once`` or ``session`` (a rule for later identical requests)."""
    note: str | None = None
    """A denied approval: the owner's words, passed to the agent as the reason."""
    gave_up_at: str | None = None
    """An approval whose asker stopped waiting (the agent was told no one answered). It stays
    pending: a late answer is still recorded, and a late Allow may resume a run."""
    language: str = "en"
    """What the bot writes about it is in this language (``en``, ``ko``, ``ja``, ``zh``;
    :mod:`discord_mcp.i18n`), chosen when it was asked. Added in format 1 without a bump: a
    file without it, or with a language this version does not know, reads as ``en``."""
    from_run: bool = False
    """Asked by the discord-mcp server of a ``discord-watch`` run (``DISCORD_MCP_RUN``): an
    answer that arrives after that run's agent stopped resumes the run
    (:mod:`discord_mcp.decisions.late`)."""
    resumed_at: str | None = None
    """When a late answer resumed the asking run (recorded once, under the file's lock)."""
    own_thread: bool = False
    """The question opened its thread (rather than being asked in one it was given, such as a
    run's): once it is final and shown, and nothing else is open there, the thread is archived
    (:mod:`discord_mcp.decisions.threads`). Added in format 1 without a bump: a file without it
    never has its thread archived."""
    asker_waiting: bool = False
    """A call was waiting on it when it was answered, or a call of the asking session took the
    answer later (recorded before its response left). An answer is marked delivered only once
    its response has left (at least once, never lost): if that process died in between, the
    next session that is handed the answer is told the asker may have received it already."""
    project_key: str | None = None
    """The asking project's identity (:attr:`discord_mcp.config.Settings.project_key`): its
    resolved directory, or ``name:<PROJECT_NAME>``. None in files written before it existed
    (they are matched by ``project``)."""
    machine: str | None = None
    """The machine that asked (:attr:`discord_mcp.config.Settings.machine`): its name is in
    every ``custom_id`` of the card, so only that machine answers a click
    (:mod:`discord_mcp.team`). None in files written before it existed: their cards carry no
    machine, and are answered where the file is."""
    version: int = field(default=FORMAT_VERSION)

    @property
    def is_final(self) -> bool:
        """Answered, cancelled or expired: nothing will change it any more."""
        return self.status in FINAL_STATUSES

    def deadline_passed(self, now: datetime) -> bool:
        """Whether the agent's own ``timeout_seconds`` has run out."""
        return self.deadline is not None and now >= datetime.fromisoformat(self.deadline)

    def handled(self, message_id: str) -> bool:
        """Whether this thread message was already judged (by polling or live)."""
        cursor = self.seen_message_id
        return (
            cursor is not None and int(message_id) <= int(cursor)
        ) or message_id in self.handled_message_ids

    def replace(self, **changes: Any) -> Decision:
        """A copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        """The file's JSON document."""
        document = dataclasses.asdict(self)
        for name in (
            "options",
            "reaction_emojis",
            "refusal_replied_to",
            "refused",
            "handled_message_ids",
            "owner_ids",
            "notices",
            "attachments",
        ):
            document[name] = list(document[name])
        return document

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> Decision:
        """Read a file's document; unknown fields (from newer minor versions) are ignored.

        Raises:
            KeyError, TypeError, ValueError: a required field is missing or mistyped.
        """
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in document.items() if k in known}
        values["options"] = tuple(str(o) for o in values.get("options", ()))
        values["reaction_emojis"] = tuple(values.get("reaction_emojis", ()))
        values["refusal_replied_to"] = tuple(values.get("refusal_replied_to", ()))
        values["handled_message_ids"] = tuple(values.get("handled_message_ids", ()))
        values["owner_ids"] = tuple(values.get("owner_ids", ()))
        values["notices"] = tuple(values.get("notices", ()))
        values["attachments"] = tuple(
            a for a in values.get("attachments", ()) if isinstance(a, dict)
        )
        values["refused"] = tuple(Attempt(**a) for a in values.get("refused", ()))
        if values.get("approval") is not None and not isinstance(values["approval"], dict):
            raise ValueError("approval must be an object")
        if values.get("language") not in LANGUAGES:
            values["language"] = "en"
        decision = cls(**values)
        if decision.status not in ("pending", *FINAL_STATUSES):
            raise ValueError(f"unknown status {decision.status!r}")
        return decision
