"""``/start <project> <prompt> [tool] [model]`` (and ``!start <project> [prompt]``): a new run
thread bound to a project, whose first job is the prompt.

From the channel's ``!start`` message the thread grows out of that message (its id is the
message's, so a crash between the two finds the same thread again); a slash command has no
message, so the thread is created on its own in the watched channel and its first message
repeats the prompt for everyone reading the thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from discord_mcp.errors import BadRequest, RunError
from discord_mcp.runs import JobView, SessionView
from discord_mcp.runs.constraints import Constraints
from discord_mcp.runs.engine.controls import check_model
from discord_mcp.runs.engine.launch import check_tool_enabled
from discord_mcp.runs.git import worktrees
from discord_mcp.state.files import off_loop
from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.control.words import clip

THREAD_EXISTS = 160004
NO_PINGS: dict[str, Any] = {"parse": []}


async def start(c: Controls, r: Request) -> Reply:
    name = r.get("project")
    if not name:
        raise RunError("E_BAD_ARGUMENTS", "usage: `!start <project> [first prompt]`")
    worktree = yes_no(r.get("worktree"), "worktree")
    starter = r.message_id if r.via == "text" and r.channel_id == c.settings.channel_id else None
    session, job = await open_session(
        c,
        project=name,
        prompt=r.get("prompt") or "",
        tool=r.get("tool"),
        model=r.get("model"),
        by=f"**/start** by <@{r.user_id}>",
        author=r.user_name,
        starter=starter,
        files=r.files,
        worktree=worktree,
    )
    queued = f"; job `{job.job_id}` queued" if job else ""
    return Reply(
        f"Started <#{session.thread_id}> for **{session.project_name}** with "
        f"`{session.tool}`{queued}.",
        quiet_in_text=True,
    )


async def open_session(
    c: Controls,
    *,
    project: str,
    prompt: str,
    tool: str | None,
    model: str | None,
    by: str,
    author: str,
    starter: str | None = None,
    files: Sequence[Mapping[str, Any]] = (),
    run_id: str | None = None,
    constraints: Constraints | None = None,
    debounce: bool = True,
    worktree: bool | None = None,
) -> tuple[SessionView, JobView | None]:
    """A new run thread for ``project`` whose first job is ``prompt`` and ``files`` (the
    owner's attachments, kept locally), if any.

    ``starter``: the channel message the thread grows out of (``!start``); without one the
    thread stands alone and its first message repeats the prompt, signed ``by``. ``run_id``
    and ``constraints``: the run's (``discord-watch submit``; default: a new run, the
    project's constraints). ``worktree``: the run works in a git worktree of its own (default:
    as the project says).

    Raises:
        RunError: E_PROJECT_NOT_FOUND, E_INVALID_TOOLSET, E_TOOL_NOT_ENABLED, E_INVALID_MODEL.
    """
    found = c.projects.get(project)
    chosen = (tool or found.default_tool).lower()
    check_tool_enabled(chosen, found.name, found.tools)
    check_model(model)
    channel = c.settings.channel_id
    title = f"{found.name} · {prompt or 'session'}"
    if starter is not None:
        try:
            thread = await c.rest.create_thread_from_message(channel, starter, title)
            thread_id = str(thread["id"])
        except BadRequest as exc:
            if exc.code != THREAD_EXISTS:
                raise
            thread_id = starter  # started before a crash: the thread is this message's
    else:
        thread_id = str((await c.rest.create_thread(channel, title))["id"])
    if c.watch_thread is not None:
        await c.watch_thread(thread_id)
    session = c.engine.session(thread_id) or await c.engine.start_session(
        thread_id,
        found.name,
        chosen,
        model,
        run_id=run_id,
        constraints=constraints,
        worktree=worktree,
    )
    how = f" (model `{session.model}`)" if session.model else ""
    text = (
        f"Session started for **{session.project_name}** with `{session.tool}`{how}. "
        "Write here to give it work; each message is one job, run in order."
    )
    if session.workdir is not None and session.run_id is not None:
        text += "\n" + await worktree_line(c, session.run_id)
    if starter is None and prompt:
        text += f"\n{by}:\n>>> {clip(prompt, 1500)}"
    posted = await c.rest.send_text(thread_id, text, allowed_mentions=NO_PINGS, reply_to=starter)
    job = None
    if prompt or files:
        carrier = starter or str(posted[0]["id"])  # the message the job is deduplicated on
        job = await c.engine.submit(thread_id, carrier, prompt, author, files, debounce=debounce)
    return c.engine.session(thread_id) or session, job


def yes_no(value: str | None, name: str) -> bool | None:
    """``yes``/``no`` (``true``/``false``...) as a bool; None when not given.

    Raises:
        RunError: E_BAD_ARGUMENTS.
    """
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered in ("yes", "true", "on", "1"):
        return True
    if lowered in ("no", "false", "off", "0"):
        return False
    raise RunError("E_BAD_ARGUMENTS", f"{name} is yes or no, not {value!r}")


async def worktree_line(c: Controls, run_id: str) -> str:
    """Where a worktree run works, and what it left out (said when it starts)."""
    record = await off_loop(worktrees.load, c.settings.home, run_id) or {}
    base = str(record.get("base_commit") or "")[:10]
    line = (
        f"It works in a git worktree of its own, on `{record.get('branch')}` from "
        f"`{record.get('base_branch') or 'HEAD'}` @ `{base}`; the project's checkout is not "
        "touched until you merge it."
    )
    kept_out = int(record.get("kept_out") or 0)
    if kept_out:
        line += (
            f" The project has {kept_out} uncommitted path{'s' if kept_out != 1 else ''}: they "
            "are not in the worktree (commit them first if the agent needs them)."
        )
    return line


async def continue_session(
    c: Controls,
    thread_id: str,
    prompt: str,
    *,
    by: str,
    author: str,
    timeout_s: float | None = None,
    debounce: bool = True,
) -> JobView:
    """Give an existing run thread its next job, showing the prompt in the thread first.

    Raises:
        RunError: E_NOT_IN_MANAGED_THREAD, E_SESSION_CLOSED, E_QUEUE_FULL.
    """
    session = c.engine.session(thread_id)
    if session is None:
        raise RunError(
            "E_NOT_IN_MANAGED_THREAD", f"thread {thread_id} is not a run session: see session list"
        )
    if session.closed:
        raise RunError(
            "E_SESSION_CLOSED", f"the session in thread {thread_id} is closed: reopen it first"
        )
    posted = await c.rest.send_text(
        thread_id, f"{by}:\n>>> {clip(prompt, 1800)}", allowed_mentions=NO_PINGS
    )
    return await c.engine.submit(
        thread_id, str(posted[0]["id"]), prompt, author, timeout_s=timeout_s, debounce=debounce
    )
