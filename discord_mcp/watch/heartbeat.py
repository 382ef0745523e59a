"""Running scheduled prompts (seed 004's heartbeat) when they are due, through the engine.

A schedule aimed at a chat channel is that channel's heartbeat (issue 25): a turn with a fixed
prompt (read HEARTBEAT.md, act only on what it lists), composed and run by the chat desk; it
posts nothing of its own, and a failure is only logged.

A due schedule posts its prompt in its run thread (a schedule for a project opens that thread
the first time, and keeps it) and submits it as a job, as if the owner had written it there.
A run is skipped while the thread still has a job waiting (no pile-up behind a long job); a
run that cannot happen (the project removed, the session closed) says why in the thread or the
channel. Either way the next time counts from now. The wall clock is injectable (tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from discord_mcp.errors import DiscordError, RunError, StateError
from discord_mcp.runs.engine.schedules import Schedule
from discord_mcp.state.files import off_loop
from discord_mcp.watch.control.base import Controls
from discord_mcp.watch.control.words import clip

log = logging.getLogger(__name__)

TICK_S = 30.0
"""The longest the runner sleeps without looking at the schedules again."""
NO_PINGS: dict[str, Any] = {"parse": []}


class Heartbeats:
    def __init__(self, controls: Controls, *, tick: float = TICK_S) -> None:
        self._controls = controls
        self._tick = tick
        self._wake = asyncio.Event()

    def wake(self) -> None:
        """The schedules changed: look again now."""
        self._wake.set()

    async def run(self) -> None:
        store = self._controls.schedules
        while True:
            self._wake.clear()
            now = self._controls.wall()
            try:
                schedules = await off_loop(store.list)
            except StateError as exc:
                log.warning("reading the schedules failed: %s", exc)
                schedules = []
            for schedule in schedules:
                if schedule.next_time <= now:
                    try:
                        await self.fire(schedule, now)
                    except Exception:  # one broken schedule must not stop the others
                        log.exception("schedule %s failed", schedule.id)
            upcoming = [s.next_time - now for s in schedules if s.next_time > now]
            delay = max(0.01, min([*upcoming, self._tick]))
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wake.wait()

    async def fire(self, schedule: Schedule, now: float) -> None:
        if schedule.channel_id is not None:
            await self._heartbeat(schedule, now)
            return
        c = self._controls
        thread_id = schedule.thread_id
        job_id = None
        try:
            session = c.engine.session(thread_id) if thread_id else None
            if session is None:
                thread_id = await self._open_thread(schedule)
            elif session.pending:
                log.info("schedule %s skipped: its thread still has a job waiting", schedule.id)
                thread_id = session.thread_id
                return
            assert thread_id is not None
            said = f"\u23f0 Scheduled `{schedule.id}` ({schedule.when}):"
            posted = await c.rest.send_text(
                thread_id, f"{said}\n>>> {clip(schedule.prompt, 1500)}", allowed_mentions=NO_PINGS
            )
            job = await c.engine.submit(
                thread_id, str(posted[0]["id"]), schedule.prompt, f"schedule {schedule.id}"
            )
            job_id = job.job_id
        except (RunError, DiscordError) as exc:
            code = exc.code if isinstance(exc, RunError) else "E_DISCORD"
            detail = exc.message if isinstance(exc, RunError) else str(exc)
            log.warning("schedule %s could not run: %s", schedule.id, exc)
            with contextlib.suppress(DiscordError):
                await c.rest.send_text(
                    thread_id or c.settings.channel_id,
                    f"\u23f0 Scheduled `{schedule.id}` could not run: **{code}**: {detail}",
                    allowed_mentions=NO_PINGS,
                )
        finally:
            with contextlib.suppress(StateError):
                await off_loop(
                    c.schedules.ran, schedule.id, now=now, thread_id=thread_id, job_id=job_id
                )

    async def _heartbeat(self, schedule: Schedule, now: float) -> None:
        """A chat channel's heartbeat (:mod:`discord_mcp.watch.chat`): a turn with a fixed
        prompt, nothing posted for it; a failure is logged, and the next one comes on time."""
        c = self._controls
        channel_id = schedule.channel_id
        assert channel_id is not None
        job_id = None
        try:
            if c.chat is None:
                raise RunError("E_CHAT_NOT_FOUND", "this daemon has no chat channels")
            job = await c.chat.heartbeat(channel_id, schedule.id, now)
            job_id = job.job_id if job is not None else None
        except (RunError, DiscordError, StateError) as exc:
            log.warning("heartbeat %s in chat %s could not run: %s", schedule.id, channel_id, exc)
        finally:
            with contextlib.suppress(StateError):
                await off_loop(c.schedules.ran, schedule.id, now=now, thread_id=None, job_id=job_id)

    async def _open_thread(self, schedule: Schedule) -> str:
        c = self._controls
        if schedule.project is None:
            raise RunError(
                "E_SESSION_NOT_FOUND",
                f"the run thread of schedule {schedule.id} is no longer a session: remove the "
                "schedule, or add it again in another thread",
            )
        project = c.projects.get(schedule.project)
        title = f"\u23f0 {project.name} · {schedule.prompt}"
        thread_id = str((await c.rest.create_thread(c.settings.channel_id, title))["id"])
        if c.watch_thread is not None:
            await c.watch_thread(thread_id)
        await c.engine.start_session(thread_id, project.name)
        return thread_id
