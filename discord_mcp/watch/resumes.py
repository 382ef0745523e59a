"""Resuming a run when its owner allows a tool call late (after the agent stopped waiting).

The daemon holds the gateway, so it is the process that resolves late answers (a click, a
reaction, a reply to the card); the decision service pokes :meth:`LateAllows.poke` whenever it
resolves something, and :meth:`LateAllows.run` looks again every few seconds for answers
another process recorded or that came in while the daemon was down. Each late Allow is claimed
once (:func:`discord_mcp.approvals.resume.claim`) and becomes a job in its run's thread that
tells the session the call may be retried.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from discord_mcp.approvals.resume import announcement, claim, due, resume_prompt
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


class LateAllows:
    """Turns late Allows of runs' approvals into jobs that resume those runs."""

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
                log.warning("resuming runs after late approvals failed: %s", exc)
            try:
                async with asyncio.timeout(every):
                    await self._wake.wait()
            except TimeoutError:
                pass

    async def check(self) -> list[str]:
        """Resume every run whose approval was allowed late; returns the jobs submitted."""
        submitted = []
        for decision in await off_loop(due, self._store):
            if self._engine.session(decision.thread_id) is None:
                continue  # not a run thread (or the session is gone): nothing to resume
            claimed = await off_loop(claim, self._store, decision.id)
            if claimed is None:
                continue
            sent = await self._rest.send_text(
                claimed.thread_id, announcement(claimed), allowed_mentions={"parse": []}
            )
            try:
                job = await self._engine.submit(
                    claimed.thread_id, str(sent[-1]["id"]), resume_prompt(claimed), "discord-mcp"
                )
            except RunError as exc:
                log.warning("could not resume thread %s: %s", claimed.thread_id, exc)
                await self._rest.send_text(
                    claimed.thread_id,
                    f"**{exc.code}**: the session could not be resumed ({exc.message}). Tell "
                    "the agent yourself that the tool is allowed now.",
                    allowed_mentions={"parse": []},
                )
                continue
            log.info("approval %s allowed late: resumed with job %s", claimed.id, job.job_id)
            submitted.append(job.job_id)
        return submitted
