"""``/start <project> <prompt> [tool] [model]`` (and ``!start <project> [prompt]``): a new run
thread bound to a project, whose first job is the prompt.

From the channel's ``!start`` message the thread grows out of that message (its id is the
message's, so a crash between the two finds the same thread again); a slash command has no
message, so the thread is created on its own in the watched channel and its first message
repeats the prompt for everyone reading the thread.
"""

from __future__ import annotations

from typing import Any

from discord_mcp.errors import BadRequest, RunError
from discord_mcp.runs.controls import check_model
from discord_mcp.runs.launch import check_tool_enabled
from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.control.words import clip

THREAD_EXISTS = 160004
NO_PINGS: dict[str, Any] = {"parse": []}


async def start(c: Controls, r: Request) -> Reply:
    name = r.get("project")
    if not name:
        raise RunError("E_BAD_ARGUMENTS", "usage: `!start <project> [first prompt]`")
    project = c.projects.get(name)
    tool = (r.get("tool") or project.default_tool).lower()
    check_tool_enabled(tool, project.name, project.tools)
    model = check_model(r.get("model"))
    prompt = r.get("prompt") or ""
    channel = c.settings.channel_id
    title = f"{project.name} · {prompt or 'session'}"
    starter = r.message_id if r.via == "text" and r.channel_id == channel else None
    if starter is not None:
        try:
            thread_id = str(
                (await c.rest.create_thread_from_message(channel, starter, title))["id"]
            )
        except BadRequest as exc:
            if exc.code != THREAD_EXISTS:
                raise
            thread_id = starter  # started before a crash: the thread is this message's
    else:
        thread_id = str((await c.rest.create_thread(channel, title))["id"])
    if c.watch_thread is not None:
        await c.watch_thread(thread_id)
    session = c.engine.session(thread_id) or await c.engine.start_session(
        thread_id, project.name, tool, model
    )
    how = f" (model `{session.model}`)" if session.model else ""
    text = (
        f"Session started for **{session.project_name}** with `{session.tool}`{how}. "
        "Write here to give it work; each message is one job, run in order."
    )
    if starter is None and prompt:
        text += f"\n**/start** by <@{r.user_id}>:\n>>> {clip(prompt, 1500)}"
    posted = await c.rest.send_text(thread_id, text, allowed_mentions=NO_PINGS, reply_to=starter)
    job = None
    if prompt:
        carrier = starter or str(posted[0]["id"])  # the message the job is deduplicated on
        job = await c.engine.submit(thread_id, carrier, prompt, r.user_name)
    queued = f"; job `{job.job_id}` queued" if job else ""
    return Reply(
        f"Started <#{thread_id}> for **{session.project_name}** with `{session.tool}`{queued}.",
        quiet_in_text=True,
    )
