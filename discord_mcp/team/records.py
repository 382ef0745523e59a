"""A machine's presence record: what it says about itself in Discord, and how it is read back.

One message per machine in the presence thread (:mod:`~discord_mcp.team.presence`): a short
line for people, then the record as a JSON block for the other machines. It carries the
machine's name, the projects it hosts, its running jobs and the questions waiting for the owner
there, never a secret (the bot's outbound redaction runs over it like over everything it
sends). The last-seen time is Discord's own: the message's ``edited_timestamp`` (else its
``timestamp``), so no machine's clock is trusted for it.

Reading is strict: only the bot's own messages, only a well-formed block signed with the key
derived from the bot token (:mod:`~discord_mcp.team.signing`: the bot posts for agents too, and
an agent's message must never speak for a machine), names that are valid machine names and
project names, lists cut to what a record may hold. Anything else is not a record (a person's
message in the thread, an agent's, a record of a version older than signing); a record from a
newer format with fields we do not know is still read for the fields we do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from discord_mcp.config.machine import is_machine_name
from discord_mcp.team.signing import RecordKey, Verdict

FORMAT = 2
"""2: signed (:mod:`~discord_mcp.team.signing`); 1: unsigned, no longer read."""
MARKER = "discord_mcp_machine"
"""The JSON block's first key: what makes a message a record (its value is the format)."""
CONTENT_LIMIT = 2000
LIST_MAX = 25
"""Projects, jobs and questions a record lists at most (totals are always given)."""
TEXT_MAX = 80
"""A waiting question's words, as a record shows them."""
_PROJECT = re.compile(r"^[A-Za-z0-9_.-]{1,60}$")
_SNOWFLAKE = re.compile(r"^[0-9]{1,21}$")
_KNOWS = re.compile(r"^[a-z0-9_-]{1,32}/[0-9a-f]{1,32}$")
_BLOCK = re.compile(r"```json\n(\{.*\})\n```", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Job:
    """A job running on the machine."""

    project: str
    thread_id: str
    tool: str
    job_id: str


@dataclass(frozen=True, slots=True)
class Waiting:
    """A question (or approval) waiting for the owner on the machine."""

    project: str
    kind: str
    question: str
    thread_id: str
    message_id: str
    asked_at: str


@dataclass(frozen=True, slots=True)
class MachineRecord:
    """One machine as its presence record says.

    ``message_id``, ``thread_id`` and ``seen_at`` come from Discord (where the record is and
    when it was last written, as a Unix time), not from the JSON.
    """

    name: str
    instance: str
    up_since: float
    projects: tuple[str, ...] = ()
    jobs: tuple[Job, ...] = ()
    waiting: tuple[Waiting, ...] = ()
    projects_total: int = 0
    jobs_total: int = 0
    waiting_total: int = 0
    gateway: bool = False
    version: str = ""
    knows: tuple[str, ...] = ()
    """The live machines whose records it has read, as ``name/instance``: a machine claims
    nothing (answers nothing at once) until every live one knows its current instance."""
    message_id: str = ""
    thread_id: str = ""
    seen_at: float = 0.0

    def hosts(self, project: str) -> bool:
        return project in self.projects


@dataclass(frozen=True, slots=True)
class Rejected:
    """A message that reads like a record but is not a machine's word (its signature)."""

    name: str
    verdict: Verdict
    format: int
    message_id: str


def render(record: MachineRecord, *, now: float, key: RecordKey) -> str:
    """The record's message, signed with ``key``: a line for people and the JSON block, at most
    2000 characters (lists are shortened until it fits; the totals stay).

    Texts must reach it as they will be sent (the bot's outbound redaction applied): a text
    changed after signing no longer matches its signature.
    """
    waiting = [replace(w, question=_clip(w.question, TEXT_MAX)) for w in record.waiting]
    jobs, projects = list(record.jobs), list(record.projects)
    while True:
        content = _content(record, projects, jobs, waiting, now, key)
        if len(content) <= CONTENT_LIMIT:
            return content
        if waiting:
            waiting.pop()
        elif jobs:
            jobs.pop()
        elif projects:
            projects.pop()
        else:  # nothing left to drop: a name and totals always fit
            return content[:CONTENT_LIMIT]


def _content(
    record: MachineRecord,
    projects: Sequence[str],
    jobs: Sequence[Job],
    waiting: Sequence[Waiting],
    now: float,
    key: RecordKey,
) -> str:
    body: dict[str, Any] = {
        MARKER: FORMAT,
        "name": record.name,
        "instance": record.instance,
        "up_since": round(record.up_since, 3),
        "version": record.version,
        "gateway": record.gateway,
        "projects": list(projects[:LIST_MAX]),
        "projects_total": max(record.projects_total, len(record.projects)),
        "jobs": [
            {"project": j.project, "thread": j.thread_id, "tool": j.tool, "job": j.job_id}
            for j in jobs[:LIST_MAX]
        ],
        "jobs_total": max(record.jobs_total, len(record.jobs)),
        "waiting": [
            {
                "project": w.project,
                "kind": w.kind,
                "question": w.question,
                "thread": w.thread_id,
                "message": w.message_id,
                "asked_at": w.asked_at,
            }
            for w in waiting[:LIST_MAX]
        ],
        "waiting_total": max(record.waiting_total, len(record.waiting)),
        "knows": list(record.knows[:LIST_MAX]),
    }
    shown = ", ".join(f"`{p}`" for p in projects[:8]) or "none"
    more = len(record.projects) - min(len(projects), 8)
    summary = (
        f"**Machine `{record.name}`** · seen <t:{int(now)}:R> · "
        f"projects {shown}{f' (+{more})' if more > 0 else ''} · "
        f"{body['jobs_total']} running · {body['waiting_total']} waiting for you"
    )
    note = "-# this machine's presence record, edited at most once a minute by discord-watch"
    block = json.dumps(key.sign(body, now=now), ensure_ascii=False, separators=(",", ":"))
    return f"{summary}\n{note}\n```json\n{block}\n```"


def parse(
    message: Mapping[str, Any], *, key: RecordKey, bot_id: str | None = None
) -> MachineRecord | None:
    """The record a message holds, or None (not the bot's, not a record, not signed with
    ``key``, or malformed)."""
    found = read(message, key=key, bot_id=bot_id)
    return found if isinstance(found, MachineRecord) else None


def read(
    message: Mapping[str, Any], *, key: RecordKey, bot_id: str | None = None
) -> MachineRecord | Rejected | None:
    """The record a message holds; :class:`Rejected` when it reads like one but its signature
    is missing, wrong or stale; None when it is no record at all."""
    author = message.get("author") or {}
    if not isinstance(author, Mapping) or not author.get("bot"):
        return None
    if bot_id is not None and str(author.get("id") or "") != bot_id:
        return None
    match = _BLOCK.search(str(message.get("content") or ""))
    if match is None:
        return None
    try:
        body = json.loads(match.group(1))
    except ValueError:
        return None
    if not isinstance(body, dict) or not isinstance(body.get(MARKER), int):
        return None
    name = body.get("name")
    if not isinstance(name, str) or not is_machine_name(name):
        return None
    seen = _unix(message.get("edited_timestamp")) or _unix(message.get("timestamp"))
    verdict = key.verdict(body, stored_at=seen)
    if verdict != "signed":
        return Rejected(name, verdict, body[MARKER], str(message.get("id") or ""))
    up_since = body.get("up_since")
    return MachineRecord(
        name=name,
        instance=_text(body.get("instance"), 64),
        up_since=float(up_since) if isinstance(up_since, int | float) else 0.0,
        projects=tuple(
            p for p in _items(body.get("projects")) if isinstance(p, str) and _PROJECT.match(p)
        ),
        jobs=tuple(j for j in (_job(x) for x in _items(body.get("jobs"))) if j is not None),
        waiting=tuple(w for w in (_waiting(x) for x in _items(body.get("waiting"))) if w),
        projects_total=_count(body.get("projects_total")),
        jobs_total=_count(body.get("jobs_total")),
        waiting_total=_count(body.get("waiting_total")),
        gateway=body.get("gateway") is True,
        version=_text(body.get("version"), 40),
        knows=tuple(k for k in _items(body.get("knows")) if isinstance(k, str) and _KNOWS.match(k)),
        message_id=str(message.get("id") or ""),
        thread_id=str(message.get("channel_id") or ""),
        seen_at=seen or 0.0,
    )


def _items(value: Any) -> list[Any]:
    return list(value[:LIST_MAX]) if isinstance(value, list) else []


def _text(value: Any, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _id(value: Any) -> str:
    return value if isinstance(value, str) and _SNOWFLAKE.match(value) else ""


def _job(value: Any) -> Job | None:
    if not isinstance(value, dict):
        return None
    project, thread = value.get("project"), _id(value.get("thread"))
    if not (isinstance(project, str) and _PROJECT.match(project) and thread):
        return None
    return Job(project, thread, _text(value.get("tool"), 40), _text(value.get("job"), 80))


def _waiting(value: Any) -> Waiting | None:
    if not isinstance(value, dict):
        return None
    thread = _id(value.get("thread"))
    if not thread:
        return None
    return Waiting(
        project=_text(value.get("project"), 60),
        kind=_text(value.get("kind"), 20) or "question",
        question=_text(value.get("question"), TEXT_MAX),
        thread_id=thread,
        message_id=_id(value.get("message")),
        asked_at=_text(value.get("asked_at"), 40),
    )


def _unix(value: Any) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
