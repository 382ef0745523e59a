"""Resuming a run when its owner answers late (after the run's agent stopped listening).

Two late answers resume a run: the answer to a question the run asked with ``ask_decision``
(:mod:`discord_mcp.decisions.late`), and an Allow of a tool call the agent was told no one
answered (:mod:`discord_mcp.approvals.resume`). The daemon holds the gateway, so it is the
process that resolves late answers (a click, a reaction, a reply to the card); the decision
service pokes :meth:`LateAnswers.poke` whenever it resolves something, and
:meth:`LateAnswers.run` looks again every few seconds for answers another process recorded,
that came in while the daemon was down, or whose run's job has just ended. Each is claimed once
(:func:`discord_mcp.decisions.late.claim`, recorded on the decision file) and becomes a job in
its run's thread that resumes the session with the news.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from discord_mcp.approvals import resume as late_allows
from discord_mcp.decisions import late as late_questions
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DiscordError, RunError, StateError
from discord_mcp.runs import JobView, SessionView
from discord_mcp.state.files import off_loop
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)

CHECK_EVERY_S = 5.0


class _Engine(Protocol):
    async def submit(
        self, thread_id: str, message_id: str, prompt: str, author: str
    ) -> JobView: ...

    def session(self, thread_id: str) -> SessionView | None: ...


@dataclass(frozen=True, slots=True)
class _Kind:
    """One kind of late answer: which are due, the claim, and what the resumed job says."""

    due: Callable[[DecisionStore], list[Decision]]
    claim: Callable[[DecisionStore, str], Decision | None]
    prompt: Callable[[Decision], str]
    announcement: Callable[[Decision], str]
    tell_yourself: str


KINDS = (
    _Kind(
        late_questions.due,
        late_questions.claim,
        late_questions.resume_prompt,
        late_questions.announcement,
        "Tell the agent the answer yourself",
    ),
    _Kind(
        late_allows.due,
        late_allows.claim,
        late_allows.resume_prompt,
        late_allows.announcement,
        "Tell the agent yourself that the tool is allowed now",
    ),
)


def _due(store: DecisionStore) -> list[tuple[_Kind, Decision]]:
    return [(kind, decision) for kind in KINDS for decision in kind.due(store)]


class LateAnswers:
    """Turns runs' late answers (questions, Allows) into jobs that resume those runs."""

    def __init__(self, *, store: DecisionStore, engine: _Engine, rest: RestClient) -> None:
        self._store = store
        self._engine = engine
        self._rest = rest
        self._wake = asyncio.Event()

    def poke(self, _decision_id: str = "") -> None:
        """Something was resolved: look soon (callable from sync code on the loop)."""
        self._wake.set()

    async def run(self, every: float = CHECK_EVERY_S) -> None:
        """Check now and then until cancelled; never raises for Discord or state failures."""
        while True:
            self._wake.clear()
            try:
                await self.check()
            except (DiscordError, StateError) as exc:
                log.warning("resuming runs after late answers failed: %s", exc)
            try:
                async with asyncio.timeout(every):
                    await self._wake.wait()
            except TimeoutError:
                pass

    async def check(self) -> list[str]:
        """Resume every run whose question or approval was answered late; returns the jobs
        submitted."""
        submitted = []
        for kind, decision in await off_loop(_due, self._store):
            if self._engine.session(decision.thread_id) is None:
                continue  # not a run thread (or the session is gone): nothing to resume
            claimed = await off_loop(kind.claim, self._store, decision.id)
            if claimed is None:
                continue  # claimed before, or its job still runs (its asker is alive)
            sent = await self._rest.send_text(
                claimed.thread_id, kind.announcement(claimed), allowed_mentions={"parse": []}
            )
            try:
                job = await self._engine.submit(
                    claimed.thread_id, str(sent[-1]["id"]), kind.prompt(claimed), "discord-mcp"
                )
            except RunError as exc:
                log.warning("could not resume thread %s: %s", claimed.thread_id, exc)
                await self._rest.send_text(
                    claimed.thread_id,
                    f"**{exc.code}**: the session could not be resumed ({exc.message}). "
                    f"{kind.tell_yourself}.",
                    allowed_mentions={"parse": []},
                )
                continue
            log.info(
                "%s %s answered late: resumed with job %s", claimed.kind, claimed.id, job.job_id
            )
            submitted.append(job.job_id)
        return submitted
