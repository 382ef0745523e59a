"""How a chat turn looks in its channel: "typing" while it works, then only what the agent said.

A run thread shows a status message, the streamed answer and a final message per job; a chat
channel is a conversation, so none of that. While a turn works the bot is "typing" (refreshed
every 8 s; a failed call is logged, never fatal). When it ends, its final text is posted
(without pings) only if its agent sent nothing and reacted to nothing during the turn (the
mark its discord server leaves, :mod:`discord_mcp.chat.said`), so every CLI works without tool
use and none is repeated. A heartbeat's final text is never posted (it says nothing unless it
sends something). A failed turn is logged, and a message's turn says so in one short line
(its code only: the details may hold what the channel should not read) unless the chat was
added ``--on-failure silent``; a stop says nothing.

Every other thread's notices go to the run threads' notifier unchanged.
"""

from __future__ import annotations

import asyncio
import logging

from discord_mcp.chat.said import said_since
from discord_mcp.errors import DiscordError
from discord_mcp.runs import Activity, JobView, RunNotifier, SessionView
from discord_mcp.state.files import off_loop
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.chat.desk import ChatDesk, is_heartbeat
from discord_mcp.watch.notifier import TYPING_EVERY_S, stopped

log = logging.getLogger(__name__)
NO_PINGS: dict[str, list[str]] = {"parse": []}


class ChatNotifier:
    """A :class:`~discord_mcp.runs.RunNotifier` that handles the chat channels' jobs itself and
    hands every other job to ``inner``."""

    def __init__(
        self,
        inner: RunNotifier,
        desk: ChatDesk,
        rest: RestClient,
        *,
        typing_every: float = TYPING_EVERY_S,
    ) -> None:
        self.inner = inner
        self.desk = desk
        self.rest = rest
        self.typing_every = typing_every
        self._typing: dict[str, asyncio.Task[None]] = {}

    def _mine(self, job: JobView) -> bool:
        return self.desk.handles(job.thread_id)

    async def job_queued(self, job: JobView, position: int) -> None:
        if not self._mine(job):
            await self.inner.job_queued(job, position)

    async def job_started(self, job: JobView, session: SessionView) -> None:
        if not self._mine(job):
            await self.inner.job_started(job, session)
            return
        if job.job_id not in self._typing:
            self._typing[job.job_id] = asyncio.create_task(
                self._keep_typing(job.thread_id), name=f"chat-typing-{job.job_id}"
            )

    async def _keep_typing(self, channel_id: str) -> None:
        while True:
            try:
                await self.rest.trigger_typing(channel_id)
            except DiscordError as exc:  # cosmetic: never fatal
                log.info("the typing indicator in chat %s failed: %s", channel_id, exc)
            await asyncio.sleep(self.typing_every)

    async def job_activity(self, job: JobView, activity: Activity) -> None:
        if not self._mine(job):
            await self.inner.job_activity(job, activity)

    async def job_text(self, job: JobView, text: str) -> None:
        if not self._mine(job):
            await self.inner.job_text(job, text)

    async def job_finished(self, job: JobView, session: SessionView) -> None:
        typing = self._typing.pop(job.job_id, None)
        if typing is not None:
            await cancel_and_wait(typing, within=5)
        if not self._mine(job):
            await self.inner.job_finished(job, session)
            return
        heartbeat = all(is_heartbeat(m) for m in job.message_ids or (job.message_id,))
        if job.state != "success":
            if not stopped(job) and job.error_code not in ("E_INTERRUPTED",):
                log.warning(
                    "chat turn %s in %s failed: %s %s",
                    job.job_id,
                    job.thread_id,
                    job.error_code,
                    job.error_message,
                )
                chat = self.desk.chat(job.thread_id)
                silent = chat is not None and chat.on_failure == "silent"
                if not heartbeat and not silent and job.retried_by is None:
                    await self._post(
                        job, f"-# (no answer this time: {job.error_code or 'the agent failed'})"
                    )
            return
        if heartbeat:
            return
        since = job.started_at.timestamp() if job.started_at is not None else 0.0
        if await off_loop(said_since, self.desk.mark(job.thread_id), since):
            return  # it answered with its tools
        text = (job.final_text or job.result_excerpt or "").strip()
        if text:
            await self._post(job, text)

    async def _post(self, job: JobView, text: str) -> None:
        try:
            await self.rest.send_text(job.thread_id, text, allowed_mentions=NO_PINGS)
        except DiscordError as exc:
            log.warning("posting in chat %s failed: %s", job.thread_id, exc)
