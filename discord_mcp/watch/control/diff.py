"""``/diff [run]`` (issue 35): what a run changed, posted where the command was typed: code
blocks with ``diff`` highlighting when short, an attached ``.patch`` otherwise."""

from __future__ import annotations

from discord_mcp.errors import RunError
from discord_mcp.runs.folders.folders import RunFolder, check_run_id
from discord_mcp.state.files import off_loop
from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.landing.desk import show_diff


async def diff(c: Controls, r: Request) -> Reply:
    run_id = r.get("run")
    if run_id is None:
        session = c.session_of(r)
        if session.run_id is None:
            raise RunError("E_RUN_NOT_FOUND", "this thread's session has no run folder to show")
        run_id = session.run_id
    folder = RunFolder.of(c.settings.home, check_run_id(run_id))
    if not await off_loop(folder.root.is_dir):
        raise RunError("E_RUN_NOT_FOUND", f"there is no run {run_id}: check the id")
    await show_diff(c.rest, c.settings.home, run_id, r.channel_id, (c.settings.token.reveal(),))
    return Reply(f"The diff of run `{run_id}` is posted here.", quiet_in_text=True)
