"""``/usage [project] [period]``: tokens and cost per day, project and thread.

Every finished job's usage is in the run journal (and its ledger, which keeps counting after
old jobs are dropped); Claude reports a cost in USD, Codex and Gemini only tokens.
"""

from __future__ import annotations

from collections import defaultdict

from discord_mcp.runs.controls import UsageRow, since_day
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
    if not rows:
        return Reply(f"{title}\nNo job finished in that period.")
    lines = [title, f"total: {_line(rows)}", "", "**by day**"]
    lines += [f"{day}: {_line(rs)}" for day, rs in _by(rows, "day").items()]
    if not project:
        lines += ["", "**by project**"]
        lines += [f"{name}: {_line(rs)}" for name, rs in _by(rows, "project").items()]
    threads = sorted(_by(rows, "thread_id").items(), key=lambda kv: _weight(kv[1]), reverse=True)
    lines += ["", "**top threads**"]
    lines += [f"<#{thread}>: {_line(rs)}" for thread, rs in threads[:TOP_THREADS]]
    return Reply(fit(lines))


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
