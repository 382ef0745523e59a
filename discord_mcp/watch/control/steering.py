"""``/tool``, ``/model``, ``/retry``, ``/stop``, ``/cancel``: steering a run thread's jobs."""

from __future__ import annotations

from discord_mcp.errors import RunError
from discord_mcp.watch.control.base import Controls, Reply, Request


async def tool(c: Controls, r: Request) -> Reply:
    session = c.session_of(r)
    changed = await c.engine.set_tool(session.thread_id, (r.get("tool") or "").lower())
    return Reply(f"From the next job on, this thread uses `{changed.tool}`.")


async def model(c: Controls, r: Request) -> Reply:
    session = c.session_of(r)
    changed = await c.engine.set_model(session.thread_id, r.get("model"))
    if changed.model is None:
        return Reply(f"From the next job on, `{changed.tool}` uses its default model.")
    return Reply(f"From the next job on, this thread asks for model `{changed.model}`.")


async def retry(c: Controls, r: Request) -> Reply:
    session = c.session_of(r)
    job_id = r.get("job") or session.retry_job_id
    if job_id is None:
        raise RunError(
            "E_JOB_NOT_RETRYABLE",
            "this thread has no failed job waiting for a retry: name one, e.g. from its status",
        )
    job = await c.engine.retry(session.thread_id, job_id)
    return Reply(f"Retrying as job `{job.job_id}` (attempt {job.attempt}).")


async def stop(c: Controls, r: Request) -> Reply:
    session = c.session_of(r)
    stopped = await c.engine.stop(session.thread_id)
    return Reply(f"Stopping job `{stopped.job_id}`." if stopped else "No job is running here.")


async def cancel(c: Controls, r: Request) -> Reply:
    session = c.session_of(r)
    cancelled = await c.engine.cancel(session.thread_id, r.get("job"))
    if not cancelled:
        return Reply("No job is waiting here.")
    names = ", ".join(f"`{job.job_id}`" for job in cancelled)
    jobs = "job" if len(cancelled) == 1 else "jobs"
    return Reply(f"Cancelled {len(cancelled)} waiting {jobs}: {names}.")
