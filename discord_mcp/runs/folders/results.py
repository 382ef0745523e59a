"""What a run folder's ``result.json`` says (issue 23): each turn's entry, and the run as its
latest turn left it. Pure functions of the engine's views; the recorder writes them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from discord_mcp.runs.constraints import Constraints, enforcement
from discord_mcp.runs.folders.error_codes import is_retryable, result_code
from discord_mcp.runs.journal.model import STOPPED_CODE, utc_iso
from discord_mcp.runs.journal.views import JobView, SessionView, Usage

USAGE_NAMES = (
    "input",
    "output",
    "cache_read",
    "cache_write",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
)
"""A result's token counts: ours as the CLI names them, then the CodeBridge seed's (issue 34):
``prompt_tokens`` is ``input``, ``completion_tokens`` is ``output``, ``total_tokens`` their
sum (None unless both are known)."""


def turn_status(job: JobView) -> str:
    """``completed``, ``failed`` or ``stopped``: a finished job as a turn of its run."""
    if job.state == "success":
        return "completed"
    if job.state == "cancelled" or job.error_code == STOPPED_CODE:
        return "stopped"
    return "failed"


def token_usage(usage: Usage | None) -> dict[str, int | None] | None:
    """A CLI's token counts as a result names them (None: it reported none)."""
    if usage is None:
        return None
    inputs, outputs = usage.input_tokens, usage.output_tokens
    return {
        "input": inputs,
        "output": outputs,
        "cache_read": usage.cached_input_tokens,
        "cache_write": usage.cache_write_tokens,
        "prompt_tokens": inputs,
        "completion_tokens": outputs,
        "total_tokens": inputs + outputs if inputs is not None and outputs is not None else None,
    }


def turn_entry(
    job: JobView, turn: int | None, summary: str | None, not_run: list[dict[str, Any]]
) -> dict[str, Any]:
    """A finished job as one of its run's ``turns`` (``turn`` None: it never started)."""
    status = turn_status(job)
    error = None
    if status == "failed":
        resets = job.resets_at.timestamp() if job.resets_at else None
        code = result_code(job.error_code, job.error_message, resets)
        error = {
            "code": code,
            "message": job.error_message or code,
            "retryable": is_retryable(code),
        }
    return {
        "turn": turn,
        "job_id": job.job_id,
        "message": job.prompt,
        "status": status,
        "engine": job.tool,
        "started_at": _iso(job.started_at),
        "finished_at": _iso(job.finished_at),
        "duration_ms": round((job.duration or 0.0) * 1000) if turn is not None else 0,
        "token_usage": token_usage(job.usage),
        "cost_usd": job.cost_usd,
        "summary": summary,
        "error": error,
        "calls_not_run": not_run,
    }


def run_result(
    run_id: str,
    session: SessionView,
    tool: str,
    turns: list[dict[str, Any]],
    latest: Mapping[str, Any],
    *,
    session_id: str | None,
    thread_url: str | None,
    artifacts: list[str],
    now: float,
) -> dict[str, Any]:
    """The run's result: its status and error are its latest turn's (the run stands as its
    latest event left it), its summary the last thing its agent said, its time, tokens and
    cost those of every turn."""
    constraints = Constraints.from_dict(session.constraints)
    started = [t["started_at"] for t in turns if t.get("started_at")]
    said = [t["summary"] for t in turns if t.get("turn") and t.get("summary")]
    return {
        "run_id": run_id,
        "status": latest["status"],
        "engine": tool,
        "project": session.project_name,
        "session_id": session_id,
        "thread_url": thread_url,
        "started_at": min(started) if started else None,
        "finished_at": latest.get("finished_at") or utc_iso(now),
        "duration_ms": sum(int(t.get("duration_ms") or 0) for t in turns),
        "token_usage": _sum_usage(turns),
        "cost_usd": _sum_cost(turns),
        "summary": said[-1] if said else None,
        "calls_not_run": [c for t in turns for c in t.get("calls_not_run") or []],
        "error": latest.get("error"),
        "turns": turns,
        "constraints": {**constraints.to_dict(), **enforcement(tool, constraints)},
        "artifacts": artifacts,
    }


def not_started(run_id: str, request: Mapping[str, Any], now: float) -> dict[str, Any]:
    """The result of a run whose request was taken but never started."""
    message = "discord-watch took the request but stopped before starting it: submit it again"
    return {
        "run_id": run_id,
        "status": "failed",
        "engine": request.get("engine"),
        "project": request.get("project"),
        "session_id": None,
        "thread_url": None,
        "started_at": None,
        "finished_at": utc_iso(now),
        "duration_ms": 0,
        "token_usage": None,
        "cost_usd": None,
        "summary": None,
        "calls_not_run": [],
        "error": {"code": "E_NOT_STARTED", "message": message, "retryable": True},
        "turns": [],
        "constraints": Constraints.from_dict(request.get("constraints")).to_dict(),
        "artifacts": [],
        "worktree": None,
        "branch": None,
        "base_commit": None,
        "head_commit": None,
        "changes": None,
        "landed": None,
    }


def _sum_usage(turns: list[dict[str, Any]]) -> dict[str, int | None] | None:
    counted = [t["token_usage"] for t in turns if t.get("token_usage")]
    if not counted:
        return None
    total: dict[str, int | None] = {}
    for name in USAGE_NAMES[:4]:
        values = [u[name] for u in counted if u.get(name) is not None]
        total[name] = sum(values) if values else None
    inputs, outputs = total["input"], total["output"]
    total["prompt_tokens"], total["completion_tokens"] = inputs, outputs
    total["total_tokens"] = inputs + outputs if inputs is not None and outputs is not None else None
    return total


def _sum_cost(turns: list[dict[str, Any]]) -> float | None:
    costs = [float(t["cost_usd"]) for t in turns if t.get("cost_usd") is not None]
    return round(sum(costs), 6) if costs else None


def _iso(moment: dt.datetime | None) -> str | None:
    return utc_iso(moment.timestamp()) if moment is not None else None
