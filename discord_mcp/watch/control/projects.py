"""``/project add|list|status|remove``: the projects agents may run in."""

from __future__ import annotations

import asyncio
from pathlib import Path

from discord_mcp.errors import RunError
from discord_mcp.runs.git.worktrees import in_work_tree
from discord_mcp.runs.project_checks import args_from_json
from discord_mcp.state.files import off_loop
from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.control.machines import projects_elsewhere, refuse_elsewhere, roster_of
from discord_mcp.watch.control.start import yes_no
from discord_mcp.watch.control.words import fit

ALL_TOOLS = "claude,codex,gemini"


async def add(c: Controls, r: Request) -> Reply:
    name, path = r.get("name") or "", r.get("path") or ""
    refuse_elsewhere(c, name)
    given = await asyncio.to_thread(_acceptable, path)
    tools = [t.strip().lower() for t in (r.get("tools") or ALL_TOOLS).split(",") if t.strip()]
    default = (r.get("default") or "").lower() or None
    approvals = (r.get("approvals") or "ask").strip().lower()
    trees = yes_no(r.get("worktrees"), "worktrees") or False
    raw_args = (r.get("args_json") or "").strip()
    tool_args = args_from_json(raw_args) if raw_args else None
    if trees and not await in_work_tree(await off_loop(c.projects.check_path, str(given))):
        raise RunError(
            "E_NOT_A_GIT_REPO",
            f"{given} is not a git repository with a commit, so its runs cannot have worktrees: "
            "run `git init` there and commit, or add it without worktrees",
        )
    project = await off_loop(
        c.projects.add,
        name,
        str(given),
        tools,
        default,
        tool_args,
        approvals=approvals,
        worktrees=trees,
    )
    return Reply(
        f"Added project **{project.name}** on `{c.settings.machine}`: `{project.path}`, tools "
        f"{', '.join(project.tools)}, default `{project.default_tool}`, approvals "
        f"`{project.approvals}`"
        + "".join(
            f", `{tool}` args `{' '.join(argv)}`" for tool, argv in project.args.items() if argv
        )
        + ("; each run gets a git worktree of its own." if project.worktrees else ".")
    )


def _acceptable(path: str) -> Path:
    """The path, unless it is the home directory itself or ``/`` (roots, not projects)."""
    given = Path(path).expanduser()
    if given.is_absolute() and given.resolve() in (Path.home().resolve(), Path("/")):
        what = "/" if given.resolve() == Path("/") else "your home directory"
        raise RunError("E_INVALID_PATH", f"{path} is {what} itself: give the project's own folder")
    return given


async def list_(c: Controls, r: Request) -> Reply:
    projects = c.projects.list()
    elsewhere = projects_elsewhere(roster_of(c))
    if not projects and not elsewhere:
        return Reply("No projects yet: add one with `/project add <name> <path>`.")
    here = f" on `{c.settings.machine}`" if elsewhere else ""
    lines = [f"**Projects**{here} ({len(projects)})"]
    for p in projects:
        lines.append(
            f"• **{p.name}** `{p.path}` · tools {', '.join(p.tools)} · default `{p.default_tool}`"
            + (f" · approvals `{p.approvals}`" if p.approvals != "ask" else "")
            + (" · worktrees" if p.worktrees else "")
        )
    if elsewhere:
        lines += ["", "**On the other machines**", *elsewhere]
    return Reply(fit(lines))


async def status(c: Controls, r: Request) -> Reply:
    project = c.projects.get(r.get("project") or "").name
    s = c.engine.project_status(project)
    return Reply(
        "\n".join(
            [
                f"**Project status: {s.project_name}**",
                f"session_total: {s.session_total}",
                f"running_sessions: {s.running_sessions}",
                f"queued_jobs: {s.queued_jobs}",
                f"failed_jobs_24h: {s.failed_jobs_24h}",
                f"last_error: {s.last_error or 'n/a'}"[:1500],
            ]
        )
    )


async def remove(c: Controls, r: Request) -> Reply:
    removed = await off_loop(c.projects.remove, r.get("project") or "")
    return Reply(
        f"Removed project **{removed.name}** (`{removed.path}`); its threads' next jobs will "
        "fail with E_PROJECT_NOT_FOUND."
    )
