"""``/project new NAME [tools] [default] [git:yes]``: a new project folder, from the phone.

The folder is created as ``<first allowed root>/<NAME>`` (``DISCORD_WATCH_ROOTS``; default:
the home directory), never over an existing one, and then registered like ``/project add``
would: the same path rules (not a root itself, not the home directory, not a credentials
folder; :meth:`~discord_mcp.runs.projects.ProjectRegistry.check_path`). A folder that cannot be
registered is removed again. ``git:yes`` runs ``git init`` in it
(:mod:`discord_mcp.runs.git.command`: argv, no shell, bounded).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from pathlib import Path

from discord_mcp.errors import RunError
from discord_mcp.runs.git import command
from discord_mcp.runs.git.command import GitFailed
from discord_mcp.state.files import off_loop
from discord_mcp.watch.control.base import Controls, Reply, Request
from discord_mcp.watch.control.machines import refuse_elsewhere
from discord_mcp.watch.control.projects import ALL_TOOLS

_NAME = re.compile(r"^[a-z0-9_-]{1,40}$")
GIT_INIT_TIMEOUT_S = 30.0


async def new(c: Controls, r: Request) -> Reply:
    name = (r.get("name") or "").strip()
    if not _NAME.match(name):
        raise RunError(
            "E_INVALID_PROJECT_NAME",
            f"project name {name!r} is not allowed: use 1 to 40 characters from a-z, 0-9, '-' "
            "and '_'",
        )
    refuse_elsewhere(c, name)
    roots = c.projects.allowed_roots
    if not roots:
        raise RunError("E_INVALID_PATH", "no allowed roots are configured (DISCORD_WATCH_ROOTS)")
    folder = roots[0] / name
    await off_loop(_create, folder)
    tools = [t.strip().lower() for t in (r.get("tools") or ALL_TOOLS).split(",") if t.strip()]
    default = (r.get("default") or "").lower() or None
    try:
        project = await off_loop(c.projects.add, name, str(folder), tools, default)
    except RunError:
        with contextlib.suppress(OSError):
            await asyncio.to_thread(folder.rmdir)
        raise
    git = ""
    if (r.get("git") or "no").strip().lower() in ("yes", "true", "1", "on"):
        try:
            await command.git(["init", "-q", str(folder)], folder, within=GIT_INIT_TIMEOUT_S)
            git = " Ran `git init`."
        except GitFailed as exc:
            git = f" `git init` failed: {exc.message[:200]}"
    return Reply(
        f"Created `{project.path}` on `{c.settings.machine}` and added project "
        f"**{project.name}** (tools "
        f"{', '.join(project.tools)}, default `{project.default_tool}`).{git} Start a run with "
        f"`/start project:{project.name}`."
    )


def _create(folder: Path) -> None:
    try:
        folder.mkdir(mode=0o755)
    except FileExistsError:
        raise RunError(
            "E_INVALID_PATH",
            f"{folder} exists already: use `/project add` to register an existing folder",
        ) from None
    except OSError as exc:
        raise RunError("E_INVALID_PATH", f"could not create {folder}: {exc}") from None
