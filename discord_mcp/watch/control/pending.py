"""``/pending``: the questions (and approvals) still waiting for the owner, with jump links."""

from __future__ import annotations

from discord_mcp.runs.journal.model import parse_iso
from discord_mcp.state.files import off_loop
from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.control.machines import roster_of, waiting_elsewhere
from discord_mcp.watch.control.words import ago, clip, fit


async def pending(c: Controls, r: Request) -> Reply:
    decisions = [d for d in await off_loop(c.decisions.open_decisions) if d.status == "pending"]
    elsewhere = waiting_elsewhere(roster_of(c), c.link, c.wall())
    if not decisions and not elsewhere:
        return Reply("Nothing is waiting for you.")
    decisions.sort(key=lambda d: d.asked_at)
    now = c.wall()
    here = f" on `{c.settings.machine}`" if elsewhere else ""
    lines = [f"**Waiting for you**{here} ({len(decisions)})"]
    for d in decisions:
        kind = str(getattr(d, "kind", "") or "question")
        link = c.link(d.thread_id, d.card_message_id)
        lines.append(
            f"• {kind}: **{clip(d.question, 120)}** · {d.project} · asked "
            f"{ago(parse_iso(d.asked_at), now)} · [jump]({link})"
        )
    return Reply(fit(lines + elsewhere))
