"""The daemon's side of the shell commands (:mod:`.request_files`, :mod:`.run_desk`): claim
each request, do it with the same code as the slash commands, answer.

Two doors, looked into every :data:`~discord_mcp.watch.request_files.POLL_S` seconds:
``runs/queue/`` for ``submit`` and ``resume`` (:class:`~discord_mcp.watch.run_desk.RunDesk`),
and ``watch/requests/`` for ``stop`` and ``job``. With Discord (``controls``) a stop is said in
the run's thread as a stop from Discord is; in local mode there is no Discord at all.
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
from discord_mcp.runs.engine import RunEngine
from discord_mcp.runs.error_codes import is_retryable
from discord_mcp.runs.folders import check_run_id, names_a_run
from discord_mcp.state.files import off_loop
from discord_mcp.watch.control.base import Controls
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
    ) -> None:
        self.engine = engine
        self.controls = controls
        self._box = RequestBox(home)
        self._desk = RunDesk(engine, home, controls)
        self._poll = poll

    async def run(self) -> None:
        sweeps = 0
        while True:
            try:
                await self._desk.take(time.time())
                for request in await off_loop(self._box.take, time.time()):
                    body = await self.handle(request)
                    await off_loop(self._box.answer, request.id, body)
                sweeps += 1
                if sweeps % 3000 == 0:
                    await off_loop(self._box.sweep, time.time())
            except StateError as exc:
                log.warning("shell requests: %s", exc)
            await asyncio.sleep(self._poll)

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
            return _error("E_DISCORD", f"Discord refused a step of it: {exc}")
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


HANDLERS: dict[str, Handler] = {"stop": stop, "job": job}
