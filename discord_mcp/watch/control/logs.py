"""``/logs [job]``: the tail of a job's log (the CLI's own output, as it printed it)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from discord_mcp.errors import RunError
from discord_mcp.runs import JobView
from discord_mcp.runs.processes.runner import JobPaths
from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.control.words import clip

TAIL_BYTES = 16384
STDOUT_LINES = 10
STDERR_LINES = 3
LINE_CHARS = 120


async def logs(c: Controls, r: Request) -> Reply:
    job = pick_job(c, r.get("job"), r.channel_id)
    paths = JobPaths.for_job(c.settings.home, job.job_id)
    stdout, stderr = await asyncio.to_thread(_tails, paths.stdout, paths.stderr)
    return Reply(render(job, stdout, stderr))


def pick_job(c: Controls, job_id: str | None, channel_id: str) -> JobView:
    """The named job, else the running or latest job of the thread the command came from.

    Raises:
        RunError: E_JOB_NOT_FOUND.
    """
    if job_id:
        job = c.engine.job(job_id)
        if job is None:
            raise RunError("E_JOB_NOT_FOUND", f"there is no job {job_id!r} (or it is too old)")
        return job
    jobs = [j for j in c.engine.jobs(channel_id) if j.state != "queued"]
    if not jobs:
        raise RunError(
            "E_JOB_NOT_FOUND",
            "no job has run in this thread yet: name one (its id is in the thread's messages)",
        )
    return jobs[-1]


def _tails(stdout: Path, stderr: Path) -> tuple[list[str], list[str]]:
    return _tail(stdout, STDOUT_LINES), _tail(stderr, STDERR_LINES)


def _tail(path: Path, lines: int) -> list[str]:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - TAIL_BYTES))
            data = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in data.splitlines() if line.strip()][-lines:]


def summarize(line: str) -> str:
    """One log line, short: a JSON event as its type and its most telling text."""
    try:
        event = json.loads(line)
    except ValueError:
        return clip(line, LINE_CHARS)
    if not isinstance(event, dict):
        return clip(line, LINE_CHARS)
    kind = str(event.get("type") or "?")
    if isinstance(event.get("subtype"), str):
        kind += f"/{event['subtype']}"
    detail = ""
    for key in ("result", "message", "content", "text", "error", "item"):
        value = event.get(key)
        if value:
            detail = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            break
    return clip(f"{kind} {detail}".strip(), LINE_CHARS)


def render(job: JobView, stdout: list[str], stderr: list[str]) -> str:
    head = f"**Log of `{job.job_id}`** ({job.tool or 'not started'}, {job.state})"
    if job.error_code:
        head += f" · {job.error_code}"
    body = [summarize(line).replace("```", "'''") for line in stdout] or ["(no output yet)"]
    text = head + "\n```\n" + "\n".join(body) + "\n```"
    if stderr:
        err = "\n".join(clip(line, LINE_CHARS).replace("```", "'''") for line in stderr)
        text += f"\nstderr:\n```\n{err}\n```"
    return text[:2000]
