"""Which decisions belong to the session a hook runs for, and the answers in words.

A hook gets the CLI's ``session_id``, ``cwd`` and ``transcript_path`` on stdin (Claude Code,
Codex and Gemini CLI alike); the decision files record who asked by a label
(:func:`discord_mcp.server.toolkit.session_label`). Two links, either one enough:

- the label: the server labels a question with the CLI's session id as its hooks do
  (:mod:`discord_mcp.session_labels`: Claude Code's ``CLAUDE_CODE_SESSION_ID``, Codex's
  ``_meta.sessionId``, Gemini CLI's as its ``SessionStart`` hook recorded it), and the hook
  looks for that label. A Gemini session whose hooks never recorded it has a ``gemini-<pid>``
  label that no hook matches.
- the transcript: every decision the agent asked or waited on has its id in a tool result of
  the session's transcript (``20261123-120000-9f3a1c``), whatever the CLI. The hook reads the
  transcript's last :data:`TRANSCRIPT_TAIL` bytes and looks for decision ids there.

So a session's decision is missed only when the CLI gives neither (a Codex or Gemini session
without a transcript path, or one whose question scrolled out of the last 8 MiB).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from discord_mcp.decisions.late import answer_words, files_line
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DecisionNotFound, StateCorrupt, StateError
from discord_mcp.hooks.runner import session_label
from discord_mcp.hooks.transcript import open_regular

log = logging.getLogger(__name__)

TRANSCRIPT_TAIL = 8 * 1024 * 1024
DECISION_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")


def transcript_ids(path: str | None) -> set[str]:
    """Decision ids mentioned in the transcript's last :data:`TRANSCRIPT_TAIL` bytes."""
    if not path:
        return set()
    transcript = open_regular(Path(path))  # a FIFO or a device is not read (it may never end)
    if transcript is None:
        log.info("the transcript %s is not a regular file that can be read", path)
        return set()
    try:
        with transcript:
            with contextlib.suppress(OSError):
                transcript.seek(-TRANSCRIPT_TAIL, 2)
            tail = transcript.read(TRANSCRIPT_TAIL)
    except OSError as exc:
        log.info("cannot read the transcript %s: %s", path, exc)
        return set()
    return set(DECISION_ID.findall(tail.decode("utf-8", errors="replace")))


def session_decisions(store: DecisionStore, payload: Mapping[str, Any]) -> list[Decision]:
    """The questions this hook's session asked (or waited on), oldest first.

    A hook runs at every turn's end, and the state directory keeps every decision ever asked:
    only files that hold the session's label are parsed, and the transcript's ids are read by
    name (a year of history, 50,000 decisions: 0.8 s instead of 2.7 s on a cold start).
    """
    session_id = str(payload.get("session_id") or "")
    label = session_label(session_id) if session_id else None
    ids = transcript_ids(str(payload.get("transcript_path") or "") or None)
    found: dict[str, Decision] = {}
    if label is not None:
        marker = json.dumps(label, ensure_ascii=False)[1:-1].encode("utf-8")  # as in the file
        for decision in store.open_decisions(containing=marker):
            if decision.session == label:
                found[decision.id] = decision
    for decision_id in sorted(ids - found.keys()):
        try:
            found[decision_id] = store.load(decision_id)
        except DecisionNotFound:
            continue  # an id the agent wrote that names no decision here
        except (StateCorrupt, StateError) as exc:
            log.error("%s", exc)
    return [decision for _, decision in sorted(found.items()) if decision.kind == "question"]


def answered_line(decision: Decision, *, away: bool = False) -> str:
    """One answer, for an agent: the question, who answered and what."""
    who = decision.answered_by_name or "the owner"
    line = (
        f"- decision {decision.id}: {decision.question!r} -> {who} answered: "
        f"{answer_words(decision)!r}"
    )
    if files := files_line(decision):
        line += f" ({files})"
    if away and decision.asker_waiting:
        line += " (another session had it in hand when it stopped and may already have received it)"
    return line


def pending_line(decision: Decision) -> str:
    return f"- decision {decision.id}: {decision.question!r} (asked {decision.asked_at})"
