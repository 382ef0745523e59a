"""The daemon's side of ``discord-watch submit|resume|stop`` (:mod:`.request_files`): claim
each request, do it with the same code as the slash commands, answer."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from discord_mcp.errors import DiscordError, RunError, StateError
from discord_mcp.runs import JobView
from discord_mcp.state.files import off_loop
from discord_mcp.watch.control.base import Controls
from discord_mcp.watch.control.start import continue_session, open_session
from discord_mcp.watch.request_files import POLL_S, Request, RequestBox

log = logging.getLogger(__name__)

SHELL = "**From the shell**"
FINISHED = frozenset({"success", "failed", "unknown_after_crash", "cancelled"})

Handler = Callable[[Controls, dict[str, Any]], Awaitable[dict[str, Any]]]


class ShellRequests:
    def __init__(self, controls: Controls, *, poll: float = POLL_S) -> None:
        self._controls = controls
        self._box = RequestBox(controls.settings.home)
        self._poll = poll

    async def run(self) -> None:
        sweeps = 0
        while True:
            try:
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
            if self._controls.guild_id is None:
                channel = await self._controls.rest.get_channel(self._controls.settings.channel_id)
                self._controls.guild_id = channel.get("guild_id")
            return {"ok": True, "result": await handler(self._controls, request.args)}
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


def _error(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "code": code, "message": message}


def job_result(c: Controls, job: JobView, final_text: str | None = None) -> dict[str, Any]:
    """A job as the shell commands print it (a public contract: see the CHANGELOG)."""
    usage = job.usage.to_dict() if job.usage else None
    session = c.engine.session(job.thread_id)
    return {
        "job_id": job.job_id,
        "thread_id": job.thread_id,
        "thread_url": c.link(job.thread_id),
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


async def submit(c: Controls, args: dict[str, Any]) -> dict[str, Any]:
    _, job = await open_session(
        c,
        project=str(args["project"]),
        prompt=str(args["prompt"]),
        tool=args.get("tool"),
        model=args.get("model"),
        by=SHELL,
        author="shell",
    )
    assert job is not None
    return job_result(c, job)


async def resume(c: Controls, args: dict[str, Any]) -> dict[str, Any]:
    job = await continue_session(
        c, str(args["thread"]), str(args["prompt"]), by=SHELL, author="shell"
    )
    return job_result(c, job)


async def stop(c: Controls, args: dict[str, Any]) -> dict[str, Any]:
    target = str(args["target"])
    job = c.engine.job(target)
    if job is None:
        session = c.engine.session(target)
        if session is None:
            raise RunError(
                "E_NOT_FOUND", f"{target!r} is neither a job nor a run thread: check the id"
            )
        stopped = await c.engine.stop(session.thread_id)
        return {"thread_id": session.thread_id, "stopped": stopped.job_id if stopped else None}
    if job.state == "queued":
        await c.engine.cancel(job.thread_id, job.job_id)
        return {"thread_id": job.thread_id, "stopped": job.job_id, "was": "queued"}
    if job.state != "running":
        raise RunError("E_JOB_NOT_RUNNING", f"job {job.job_id} is {job.state}: nothing to stop")
    await c.engine.stop(job.thread_id)
    return {"thread_id": job.thread_id, "stopped": job.job_id, "was": "running"}


async def job(c: Controls, args: dict[str, Any]) -> dict[str, Any]:
    found = c.engine.job(str(args["job_id"]))
    if found is None:
        raise RunError("E_JOB_NOT_FOUND", f"there is no job {args['job_id']!r} (or it is too old)")
    text = None
    if found.state in FINISHED:
        text = await asyncio.to_thread(c.engine.final_text, found.job_id)
    return job_result(c, found, text)


HANDLERS: dict[str, Handler] = {"submit": submit, "resume": resume, "stop": stop, "job": job}
