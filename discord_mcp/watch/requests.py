"""The daemon's side of the shell commands (:mod:`.request_files`, :mod:`.run_desk`): claim
each request, do it with the same code as the slash commands, answer.

Two doors, looked into every :data:`~discord_mcp.watch.request_files.POLL_S` seconds:
``runs/queue/`` for ``submit`` and ``resume`` (:class:`~discord_mcp.watch.run_desk.RunDesk`),
and ``watch/requests/`` for ``stop``, ``job``, and ``merge``, ``pr`` and ``discard`` (issue 35:
:class:`~discord_mcp.watch.landing.desk.LandingDesk`, each in a task of its own, since a push
may take minutes while a ``stop`` must not wait). With Discord (``controls``) a stop is said in
the run's thread as a stop from Discord is, and a landing on the run's card; in local mode
there is no Discord at all.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from discord_mcp.errors import DiscordError, RunError, StateError
from discord_mcp.runs import JobView
from discord_mcp.runs.engine.engine import RunEngine
from discord_mcp.runs.folders.error_codes import discord_failure, is_retryable
from discord_mcp.runs.folders.folders import check_run_id, is_run_id, names_a_run
from discord_mcp.state.files import off_loop
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.watch.control.base import Controls
from discord_mcp.watch.landing.desk import LandingDesk
from discord_mcp.watch.request_files import POLL_S, Request, RequestBox
from discord_mcp.watch.run_desk import RunDesk

log = logging.getLogger(__name__)

FINISHED = frozenset({"success", "failed", "unknown_after_crash", "cancelled"})

Handler = Callable[["ShellRequests", dict[str, Any]], Awaitable[dict[str, Any]]]


class ShellRequests:
    def __init__(
        self,
        engine: RunEngine,
        home: Path,
        *,
        controls: Controls | None = None,
        poll: float = POLL_S,
        landing: LandingDesk | None = None,
    ) -> None:
        self.engine = engine
        self.controls = controls
        self.landing = landing or LandingDesk(engine, home)
        self._box = RequestBox(home)
        self._desk = RunDesk(engine, home, controls)
        self._poll = poll
        self._slow: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        try:
            await self._run()
        finally:
            for task in list(self._slow):
                await cancel_and_wait(task, within=5)

    async def _run(self) -> None:
        sweeps = 0
        while True:
            try:
                await self._desk.take(time.time())
                for request in await off_loop(self._box.take, time.time()):
                    if request.command in SLOW:
                        task = asyncio.create_task(self._answer(request))
                        self._slow.add(task)
                        task.add_done_callback(self._slow.discard)
                        continue
                    await self._answer(request)
                sweeps += 1
                if sweeps % 3000 == 0:
                    await off_loop(self._box.sweep, time.time())
            except StateError as exc:
                log.warning("shell requests: %s", exc)
            await asyncio.sleep(self._poll)

    async def _answer(self, request: Request) -> None:
        body = await self.handle(request)
        try:
            await off_loop(self._box.answer, request.id, body)
        except StateError as exc:
            log.warning("answering shell request %s failed: %s", request.command, exc)

    async def handle(self, request: Request) -> dict[str, Any]:
        handler = HANDLERS.get(request.command)
        if handler is None:
            return _error("E_UNKNOWN_COMMAND", f"this daemon has no request {request.command!r}")
        try:
            return {"ok": True, "result": await handler(self, request.args)}
        except RunError as exc:
            return _error(exc.code, exc.message)
        except DiscordError as exc:
            log.warning("shell request %s failed talking to Discord: %s", request.command, exc)
            return _error(*discord_failure(exc))
        except (KeyError, TypeError, ValueError) as exc:
            return _error("E_BAD_ARGUMENTS", f"malformed request ({exc!r})")
        except StateError as exc:
            return _error("E_STATE", str(exc))
        except Exception:
            log.exception("shell request %s failed", request.command)
            return _error("E_INTERNAL", "the request failed; the daemon's log says why")

    def link(self, thread_id: str) -> str | None:
        return self.controls.link(thread_id) if self.controls is not None else None


def _error(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "code": code, "message": message, "retryable": is_retryable(code)}


def job_result(s: ShellRequests, job: JobView, final_text: str | None = None) -> dict[str, Any]:
    """A job as ``stop JOB`` and the ``job`` request show it (a public contract: CHANGELOG)."""
    usage = job.usage.to_dict() if job.usage else None
    session = s.engine.session(job.thread_id)
    return {
        "job_id": job.job_id,
        "thread_id": job.thread_id,
        "thread_url": s.link(job.thread_id),
        "run_id": session.run_id if session else None,
        "project": job.project_name or (session.project_name if session else None),
        "tool": job.tool or (session.tool if session else None),  # a waiting job: the next
        "state": job.state,
        "attempt": job.attempt,
        "retried_by": job.retried_by,
        "error_code": job.error_code,
        "error_message": job.error_message,
        "final_text": final_text,
        "duration": job.duration,
        "usage": usage,
        "cost_usd": job.cost_usd,
    }


async def stop(s: ShellRequests, args: dict[str, Any]) -> dict[str, Any]:
    target = str(args["target"])
    if names_a_run(target):
        ended = await s.engine.stop_run(check_run_id(target))
        return {"run_id": target, "thread_id": ended.thread_id, "stopped": True, "was": "run"}
    job = s.engine.job(target)
    if job is None:
        session = s.engine.session(target)
        if session is None:
            raise RunError(
                "E_NOT_FOUND", f"{target!r} is neither a run, a job nor a run thread: check the id"
            )
        stopped = await s.engine.stop(session.thread_id)
        return {
            "thread_id": session.thread_id,
            "stopped": stopped.job_id if stopped else None,
            **_how(stopped),
        }
    if job.state == "queued":
        await s.engine.cancel(job.thread_id, job.job_id)
        return {"thread_id": job.thread_id, "stopped": job.job_id, "was": "queued"}
    if job.state != "running":
        raise RunError("E_JOB_NOT_RUNNING", f"job {job.job_id} is {job.state}: nothing to stop")
    finished = await s.engine.stop(job.thread_id)
    return {"thread_id": job.thread_id, "stopped": job.job_id, "was": "running", **_how(finished)}


def _how(ended: JobView | None) -> dict[str, Any]:
    """How a stopped job ended, in its own words (an agent ended by force says so)."""
    if ended is None or ended.state == "running" or not ended.error_message:
        return {}
    return {"message": ended.error_message}


async def job(s: ShellRequests, args: dict[str, Any]) -> dict[str, Any]:
    found = s.engine.job(str(args["job_id"]))
    if found is None:
        raise RunError("E_JOB_NOT_FOUND", f"there is no job {args['job_id']!r} (or it is too old)")
    text = None
    if found.state in FINISHED:
        text = await asyncio.to_thread(s.engine.final_text, found.job_id)
    return job_result(s, found, text)


async def land(s: ShellRequests, args: dict[str, Any]) -> dict[str, Any]:
    """``merge``, ``pr`` and ``discard`` of a run (issue 35): the landing desk's, as the
    card's buttons do it."""
    run_id = str(args["run_id"])
    if not is_run_id(run_id):
        raise RunError("E_RUN_NOT_FOUND", f"{run_id!r} is not a run id")
    action = str(args["action"])
    return await s.landing.act(
        run_id, action, by="shell", via="shell", squash=bool(args.get("squash"))
    )


HANDLERS: dict[str, Handler] = {"stop": stop, "job": job, "land": land}
SLOW = frozenset({"land"})
"""Requests answered in a task of their own (a push may take minutes)."""
