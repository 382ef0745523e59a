"""How runs look in Discord: a status message per job, typing while it runs, then the answer.

The status message is edited in place (at most every 1.2 s, which the engine already paces),
sharing the thread's edit budget with the streamed text (:mod:`.edits`: coalesced, leaving room
for the writers that cannot wait); a status message older than
:data:`~.edits.FRESH_FOR_S` is posted anew rather than edited (Discord allows few edits of
messages older than an hour). The final answer is a *new* message, because edits notify nobody:
with the preview's removal and the status's final edit it is durable work (:mod:`.outbox`),
queued in the state directory and sent piece by piece whatever it takes, never cut by the
notifier's time bound. Text from the agent is posted without pings (``allowed_mentions``
empty): it is the agent's output, not ours to trust.

Where each status message is, is kept on disk (:mod:`.status_board`): a job reattached after a
restart keeps its message, and :meth:`DiscordNotifier.sweep` marks final the messages of jobs
that ended while no daemon could say so. A failure mentions the owners (``mention``:
``failures``, the default; ``all``: every finished job; ``none``). A job the engine retries on
its own (a temporary error, or a usage limit until its reset) says so instead of "failed".
A turn the ACP watchdog ended (``E_AGENT_SILENT``) closed its session: its thread is archived
after the message that says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

from discord_mcp import i18n
from discord_mcp.approvals.report import not_run_during, not_run_section
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DiscordError, StateError
from discord_mcp.i18n import text
from discord_mcp.runs import Activity, JobView, SessionView
from discord_mcp.runs.acp.acp_endings import SHUTDOWN_CODE, SILENT_CODE
from discord_mcp.runs.journal.model import STOPPED_CODE
from discord_mcp.state.files import off_loop
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.edits import ChannelEdits
from discord_mcp.watch.live_text import LiveText
from discord_mcp.watch.outbox import Delivery, Outbox, Step, answer_steps, new_nonce_prefix
from discord_mcp.watch.status_board import StatusBoard

log = logging.getLogger(__name__)

AFTER_FINAL_WITHIN_S = 120.0
LAST_WORDS_WITHIN_S = 10.0
"""How long a stopping daemon waits to post the threads it tells why their turn ended."""
"""How long what follows a job's answer (its run's changes card) waits for the answer to be
posted; a longer wait (a ban, a long answer at Discord's pace) lets it follow anyway."""
TYPING_EVERY_S = 8.0
"""Discord shows "typing" for about 10 s per trigger."""
MIN_EDIT_INTERVAL_S = 1.2
ORDER_WAIT_S = 5.0
"""How long a new job's first message waits for the answers before it in its thread."""
NO_PINGS: dict[str, list[str]] = {"parse": []}
Mention = Literal["failures", "all", "none"]


def _elapsed(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def status_text(
    job: JobView,
    activity: Activity | None = None,
    *,
    final: str | None = None,
    language: str = "en",
) -> str:
    """The job's status message (its own words in ``language``; the agent's as they are)."""
    tool = job.tool or "agent"
    how = text(language, "run.resuming" if job.resumed else "run.new_session")
    head = final or text(language, "run.running", tool=tool, how=how)
    lines = [f"{head} · job `{job.job_id}`"]
    if activity is not None:
        lines[0] += f" · {_elapsed(activity.elapsed)}"
        if activity.tool_call_count:
            shown = activity.tool_calls[-5:]
            lines.append(text(language, "run.tools_used", count=activity.tool_call_count))
            lines.extend(f"• `{_clip(c.name, 60)}` {_clip(c.summary, 120)}" for c in shown)
        if activity.last_text:
            lines.append("> " + _clip(activity.last_text, 400))
        if activity.note:
            lines.append(f"-# {_clip(activity.note, 200)}")
    return "\n".join(lines)[:2000]


class DiscordNotifier:
    """The run engine's notifier, posting to each job's thread.

    Args:
        rest: the REST client.
        home: the state directory (where status messages are remembered, and the approvals a
            job's final message lists when its tool calls were not run); None: memory only.
        owners: who is mentioned (see the module doc).
        mention: ``failures``, ``all`` or ``none``.
        language: ``DISCORD_MCP_LANGUAGE``; ``auto``: each job's status lines are in the
            language of the owner's prompt.
    """

    def __init__(
        self,
        rest: RestClient,
        *,
        home: Path | None = None,
        owners: Iterable[str] = (),
        mention: Mention = "failures",
        language: str = "auto",
    ) -> None:
        self._language = language
        self._rest = rest
        self._board = StatusBoard(home)
        self._store = DecisionStore(home) if home is not None else None
        self._status = self._board.entries  # job id -> (thread id, message id)
        self._owners = sorted(owners)
        self._mention = mention
        self._typing: dict[str, asyncio.Task[None]] = {}
        self._last_edit: dict[str, float] = {}
        self._live: dict[str, LiveText] = {}  # job id -> its streamed answer
        self.edits = ChannelEdits(rest)
        """The running edits (status messages, streamed text), one budget per channel."""
        self.outbox = Outbox(rest, home, edits=self.edits)
        """The jobs' final messages, durable (its ``on_done`` says where each went)."""
        self.after_final: Callable[[JobView, SessionView], None] | None = None
        """Told once a job's final message is posted (or, at the latest, after
        :data:`AFTER_FINAL_WITHIN_S`): the run's changes card follows it
        (:mod:`discord_mcp.watch.landing`)."""
        self._following: set[asyncio.Task[None]] = set()
        self._last_words: set[str] = set()  # threads told the daemon's stop ended their turn

    def language(self, job: JobView) -> str:
        """The language of ``job``'s status lines."""
        return i18n.choose(self._language, job.prompt)

    async def _post(self, thread_id: str, content: str) -> str | None:
        try:
            sent = await self._rest.send_text(thread_id, content, allowed_mentions=NO_PINGS)
        except DiscordError as exc:
            log.warning("posting to thread %s failed: %s", thread_id, exc)
            return None
        return sent[-1]["id"] if sent else None

    async def _in_order(self, thread_id: str) -> None:
        """Let the answers queued for ``thread_id`` go first (bounded: a thread whose answer
        waits long for Discord does not hold its next job's messages for ever)."""
        await self.outbox.drained(thread_id, within=ORDER_WAIT_S)

    async def job_queued(self, job: JobView, position: int) -> None:
        """Say so only when the job has to wait behind others in its thread."""
        ahead = (
            position - 1 + sum(1 for thread, _ in self._status.values() if thread == job.thread_id)
        )
        if ahead > 0:
            key = "run.queued_one" if ahead == 1 else "run.queued_many"
            await self._in_order(job.thread_id)
            await self._post(
                job.thread_id, text(self.language(job), key, job=job.job_id, count=ahead)
            )

    async def job_started(self, job: JobView, session: SessionView) -> None:
        kept = self._status.get(job.job_id) if job.reattached else None
        if kept is not None:  # picked up again after a restart: the same message carries on
            with contextlib.suppress(DiscordError):
                await self._rest.edit_message(
                    kept[0],
                    kept[1],
                    content=status_text(job, language=self.language(job)),
                    allowed_mentions=NO_PINGS,
                )
        else:
            await self._in_order(job.thread_id)
            message_id = await self._post(
                job.thread_id, status_text(job, language=self.language(job))
            )
            if message_id:
                await self._board.put(job.job_id, job.thread_id, message_id)
        self._typing[job.job_id] = asyncio.create_task(
            self._keep_typing(job.thread_id), name=f"typing-{job.job_id}"
        )

    async def aclose(self) -> None:
        """Stop every typing indicator, the running edits and the outbox's worker (the daemon
        is stopping; its REST client closes next; what is queued stays on disk). The threads
        whose turn ended with the daemon (an ACP agent's) are posted first, within a bound."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LAST_WORDS_WITHIN_S):
                for thread_id in sorted(self._last_words):
                    await self.outbox.drained(thread_id, LAST_WORDS_WITHIN_S)
        typing, self._typing = list(self._typing.values()), {}
        for task in [*typing, *self._following]:
            await cancel_and_wait(task, within=5)
        await self.outbox.aclose()
        await self.edits.aclose()

    async def _keep_typing(self, thread_id: str) -> None:
        while True:
            try:
                await self._rest.trigger_typing(thread_id)
            except DiscordError as exc:  # a missing indicator is cosmetic: never fatal
                log.info("the typing indicator in thread %s failed: %s", thread_id, exc)
            await asyncio.sleep(TYPING_EVERY_S)

    async def job_text(self, job: JobView, text: str) -> None:
        """The agent's answer so far, streamed into the job's thread (see :mod:`.live_text`)."""
        live = self._live.get(job.job_id)
        if live is None:
            live = self._live[job.job_id] = LiveText(self._rest, job.thread_id, edits=self.edits)
        live.update(text)

    async def job_activity(self, job: JobView, activity: Activity) -> None:
        where = self._status.get(job.job_id)
        if where is None:
            return
        now = time.monotonic()
        if now - self._last_edit.get(job.job_id, 0.0) < MIN_EDIT_INTERVAL_S:
            return
        self._last_edit[job.job_id] = now
        content = status_text(job, activity, language=self.language(job))
        if not self.edits.old(where[1]):
            self.edits.put(where[0], where[1], content)
            return
        # Too old to edit while the job runs: the status goes on in a new message below, and
        # the old one goes (durably: a delete that must wait does not hold this call).
        message_id = await self._post(where[0], content)
        if message_id is None:
            return
        await self._board.put(job.job_id, where[0], message_id)
        await self.outbox.add(
            Delivery(
                id=f"{job.job_id}-status-{where[1]}",
                channel_id=where[0],
                steps=[Step("delete", where[1])],
                queued_at=time.time(),
                job_id=job.job_id,
            )
        )

    async def job_finished(self, job: JobView, session: SessionView | None) -> None:
        """Queue the job's end (:mod:`.outbox`): the preview removed, the status final, the
        answer posted. Returns once it is on disk; it is sent whatever it takes."""
        typing = self._typing.pop(job.job_id, None)
        if typing is not None:
            await cancel_and_wait(typing, within=5)
        self._last_edit.pop(job.job_id, None)
        live = self._live.pop(job.job_id, None)
        preview = await live.stop() if live is not None else ()
        not_run = await self._not_run(job)
        steps = [Step("delete", message_id) for message_id in preview]
        where = await self._board.pop(job.job_id)
        if where is not None:
            final = status_text(
                job, final=final_head(job, not_run, self.language(job)), language=self.language(job)
            )
            if where[0] == job.thread_id:
                steps.append(Step("edit", where[1], content=final, allowed_mentions=NO_PINGS))
            else:  # a status kept elsewhere (never, today): its own delivery
                await self.outbox.add(
                    Delivery(
                        id=f"{job.job_id}-status",
                        channel_id=where[0],
                        steps=[Step("edit", where[1], content=final, allowed_mentions=NO_PINGS)],
                        queued_at=time.time(),
                        job_id=job.job_id,
                    )
                )
        content = final_message(job, not_run, self.language(job))
        pings = self._pings(job)
        if pings:
            content = " ".join(f"<@{o}>" for o in pings) + " " + content
        steps += answer_steps(
            content, {"parse": [], "users": pings}, nonce_prefix=new_nonce_prefix()
        )
        await self.outbox.add(
            Delivery(
                id=job.job_id,
                channel_id=job.thread_id,
                steps=steps,
                queued_at=time.time(),
                job_id=job.job_id,
                run_id=session.run_id if session is not None else None,
            )
        )
        if self.after_final is not None and session is not None:
            follow = asyncio.create_task(
                self._after_final(self.after_final, job, session), name=f"after-{job.job_id}"
            )
            self._following.add(follow)
            follow.add_done_callback(self._following.discard)
        if job.error_code == SHUTDOWN_CODE:
            self._last_words.add(job.thread_id)
        if job.error_code == SILENT_CODE:  # the watchdog closed the session: so is its thread
            archive = asyncio.create_task(
                self._archive_after(job.thread_id), name=f"archive-{job.job_id}"
            )
            self._following.add(archive)
            archive.add_done_callback(self._following.discard)

    async def _after_final(
        self, tell: Callable[[JobView, SessionView], None], job: JobView, session: SessionView
    ) -> None:
        """Tell ``tell`` once the answer queued before it is posted: the card comes after."""
        await self.outbox.drained(job.thread_id, AFTER_FINAL_WITHIN_S)
        tell(job, session)

    async def _archive_after(self, thread_id: str) -> None:
        """Archive ``thread_id`` once the message saying why is posted (the watchdog)."""
        await self.outbox.drained(thread_id, AFTER_FINAL_WITHIN_S)
        try:
            await self._rest.archive_thread(thread_id)
        except DiscordError as exc:
            log.warning("archiving thread %s failed: %s", thread_id, exc)

    def _pings(self, job: JobView) -> list[str]:
        if self._mention == "none" or job.retried_by is not None or stopped(job):
            return []  # a job retried on its own needs nobody yet; a stop was asked for
        if self._mention == "all" or job.state in ("failed", "unknown_after_crash"):
            return list(self._owners)
        return []

    async def _not_run(self, job: JobView) -> list[Decision]:
        """The job's tool calls that were denied or never answered (its approvals)."""
        if self._store is None:
            return []
        try:
            return await off_loop(
                not_run_during, self._store, job.thread_id, job.started_at, job.finished_at
            )
        except StateError as exc:
            log.warning("could not read the approvals of job %s: %s", job.job_id, exc)
            return []

    async def _mark_final(self, job: JobView, not_run: list[Decision] | None = None) -> None:
        where = await self._board.pop(job.job_id)
        if where is None:
            return
        with contextlib.suppress(DiscordError):
            await self._rest.edit_message(
                where[0],
                where[1],
                content=status_text(
                    job,
                    final=final_head(job, not_run, self.language(job)),
                    language=self.language(job),
                ),
                allowed_mentions=NO_PINGS,
            )

    async def sweep(self, job_view: Callable[[str], JobView | None]) -> None:
        """Mark final every remembered status message whose job is no longer running
        (``job_view``: the engine's ``job(job_id)``), and send what a previous daemon left in
        the outbox; run once at startup."""
        self.outbox.start()
        for job_id in list(self._status):
            job = job_view(job_id)
            if job is None:
                await self._board.pop(job_id)
            elif job.state != "running":
                await self._mark_final(job)


def final_head(job: JobView, not_run: list[Decision] | None = None, language: str = "en") -> str:
    """The first line a finished job's status message ends with (never a plain "Done" when
    tool calls were denied or never answered)."""
    lang = language
    code = job.error_code or "error"
    if job.state == "success":
        cost = f" · ${job.cost_usd:.4f}" if job.cost_usd else ""
        took = {"elapsed": _elapsed(job.duration), "tool": job.tool, "cost": cost}
        if not_run:
            key = "run.not_run_one" if len(not_run) == 1 else "run.not_run_many"
            return text(lang, key, count=len(not_run), **took)
        return text(lang, "run.done", **took)
    if job.state == "unknown_after_crash":
        return text(lang, "run.unknown_after_crash")
    if stopped(job):
        return text(lang, "run.stopped")
    if job.retried_by is not None and job.resets_at is not None:
        return text(lang, "run.usage_limit")
    if job.retried_by is not None:
        return text(lang, "run.temporary_error", code=code)
    return text(lang, "run.failed", code=code)


def final_message(job: JobView, not_run: list[Decision] | None = None, language: str = "en") -> str:
    """The answer (or the failure) as a new message, ending with how to go on; the tool calls
    that were denied or never answered are listed. The agent's words are never translated."""
    lang = language
    section = not_run_section(not_run or [])
    code = job.error_code or "error"
    if job.state == "success":
        body = (job.final_text or job.result_excerpt or text(lang, "run.no_text")).strip()
        if section:
            body = f"{_clip_block(body, 1400)}\n\n{section}"
        return f"{body}\n\n{text(lang, 'run.continue')}"
    if job.state == "unknown_after_crash":
        return text(lang, "run.crashed", job=job.job_id)
    if stopped(job):
        return text(lang, "run.stopped_message", job=job.job_id)
    message = _clip(job.error_message or text(lang, "run.cli_failed"), 1500)
    if job.retried_by is not None and job.resets_at is not None:
        return text(
            lang,
            "run.usage_limit_message",
            tool=job.tool,
            next=job.retried_by,
            at=f"{job.resets_at:%Y-%m-%d %H:%M}",
            unix=int(job.resets_at.timestamp()),
        )
    if job.retried_by is not None:
        return text(
            lang,
            "run.temporary_error_message",
            job=job.job_id,
            code=code,
            message=_clip(message, 300),
            next=job.retried_by,
        )
    if section:
        message = _clip(message, max(1500 - len(section), 200)) + f"\n{section}"
    return text(lang, "run.failed_message", job=job.job_id, code=code, message=message)


def stopped(job: JobView) -> bool:
    """A job stopped on request: not a failure (no ping, no retry hint)."""
    return job.state == "failed" and job.error_code == STOPPED_CODE


def _clip_block(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
