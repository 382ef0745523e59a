"""``/usage [project] [period]``: tokens and cost per day, project and thread.

Every finished job's usage is in the run journal (and its ledger, which keeps counting after
old jobs are dropped); Claude reports a cost in USD, Codex and Gemini only tokens. In a run
thread whose engine reports its context window (ACP agents' ``usage_update``), the first line
says how full it was at the end of the last job.
"""

from __future__ import annotations

from collections import defaultdict

from discord_mcp.runs.engine.controls import UsageRow, since_day
from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.control.words import fit

DEFAULT_PERIOD = "7d"
TOP_THREADS = 5


async def usage(c: Controls, r: Request) -> Reply:
    period = (r.get("period") or DEFAULT_PERIOD).lower()
    since = since_day(period, c.wall())
    project = r.get("project")
    if project:
        project = c.projects.get(project).name
    rows = c.engine.usage_rows(project, since)
    scope = f" for **{project}**" if project else ""
    title = f"**Usage{scope}, {'all time' if since is None else f'since {since}'}**"
    context = _context(c, r.channel_id)
    if not rows:
        return Reply("\n".join([title, *context, "No job finished in that period."]))
    lines = [title, *context, f"total: {_line(rows)}", "", "**by day**"]
    lines += [f"{day}: {_line(rs)}" for day, rs in _by(rows, "day").items()]
    if not project:
        lines += ["", "**by project**"]
        lines += [f"{name}: {_line(rs)}" for name, rs in _by(rows, "project").items()]
    threads = sorted(_by(rows, "thread_id").items(), key=lambda kv: _weight(kv[1]), reverse=True)
    lines += ["", "**top threads**"]
    lines += [f"<#{thread}>: {_line(rs)}" for thread, rs in threads[:TOP_THREADS]]
    return Reply(fit(lines))


def _context(c: Controls, channel_id: str) -> list[str]:
    """This thread's context window as its engine last reported it, when it did."""
    session = c.engine.session(channel_id)
    if session is None:
        return []
    for job in reversed(c.engine.jobs(session.thread_id)):
        usage = job.usage
        if usage is not None and usage.context_used is not None and usage.context_size:
            share = 100 * usage.context_used / usage.context_size
            return [
                f"context window (`{job.tool}`, after job `{job.job_id}`): "
                f"{usage.context_used:,} of {usage.context_size:,} tokens ({share:.0f}%)"
            ]
    return []


def _by(rows: list[UsageRow], field: str) -> dict[str, list[UsageRow]]:
    groups: dict[str, list[UsageRow]] = defaultdict(list)
    for row in rows:
        groups[str(getattr(row, field))].append(row)
    return dict(groups)


def _weight(rows: list[UsageRow]) -> tuple[float, int]:
    return sum(r.cost_usd for r in rows), sum(r.input_tokens + r.output_tokens for r in rows)


def _line(rows: list[UsageRow]) -> str:
    jobs = sum(r.jobs for r in rows)
    tokens_in = sum(r.input_tokens for r in rows)
    tokens_out = sum(r.output_tokens for r in rows)
    cost = sum(r.cost_usd for r in rows)
    money = f" · ${cost:.4f}" if cost else ""
    return f"{jobs} jobs · {tokens_in:,} in / {tokens_out:,} out tokens{money}"
