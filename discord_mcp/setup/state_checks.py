"""``doctor``'s checks of this machine's own state: quarantined files and the projects' CLIs.

- Every state file that was found corrupt and set aside (``*.corrupt-*`` under the state
  directory, :mod:`discord_mcp.state.quarantine`) is a line until the owner deals with it: what
  it was, where it is, and what to do. A set-aside project list that was not replaced is a FAIL
  (no run can start); the others are WARN (the programs carried on without what they held).
- Every tool a registered project enables must be startable: a built-in CLI (``claude``,
  ``codex``, ``gemini``) on PATH (the PATH ``doctor`` runs with: ``discord-watch`` started from
  the same shell finds the same programs), an ACP agent by its registered command
  (:mod:`discord_mcp.runs.acp.agents`: its program found as the spawner finds it, a path as it is,
  a bare name on PATH), never by a PATH lookup of the agent's own name; a name that is neither
  is a FAIL (its jobs would fail with E_AGENT_NOT_FOUND).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from discord_mcp.errors import RunError, StateError
from discord_mcp.runs.acp.agents import AgentRegistry, AgentSpec
from discord_mcp.runs.journal.model import TOOLS
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.setup.checks import Check
from discord_mcp.state.quarantine import MARKER, find_quarantined

_WHAT = {
    "items.json": "the inbox (discord-watch re-reads recent notes into a new one)",
    "cursors.json": "discord-watch's read positions (it re-read from a safe point)",
    "alive.json": "discord-watch's alive record",
    "config.json": "the project list of discord-watch",
    "snapshot.json": "the run engine's snapshot",
}


def quarantine_checks(home: Path) -> list[Check]:
    """A line per quarantined state file."""
    checks = []
    for moved in find_quarantined(home):
        original = moved.with_name(moved.name.split(MARKER, 1)[0])
        when = datetime.fromtimestamp(_mtime(moved), UTC).strftime("%Y-%m-%d %H:%M UTC")
        what = _WHAT.get(original.name, "a state file")
        blocking = original.name == "config.json" and original.parent.name == "runs"
        if blocking and not original.exists():
            checks.append(
                Check(
                    "FAIL",
                    "state file",
                    f"{original} ({what}) was corrupt and was set aside as {moved} "
                    f"(last changed {when}); no run can start until it is restored",
                    f"repair {moved} and move it back to {original}, or delete it to start "
                    "with no projects and add them again (`discord-watch project add`)",
                )
            )
            continue
        checks.append(
            Check(
                "WARN",
                "state file",
                f"{original} ({what}) was corrupt and was set aside as {moved} "
                f"(last changed {when}); what it held is not used",
                f"look at {moved}: if it holds something you need, recover it by hand; "
                "then delete it",
            )
        )
    return checks


def project_checks(home: Path, environ: Mapping[str, str], roots: list[Path]) -> list[Check]:
    """A line per registered project: its CLIs on PATH (none when there is no project)."""
    registry = ProjectRegistry(home, allowed_roots=roots)
    try:
        projects = registry.list()
    except (RunError, StateError) as exc:
        message = f"{exc.code}: {exc.message}" if isinstance(exc, RunError) else str(exc)
        return [Check("FAIL", "projects", message)]
    path = environ.get("PATH", os.defpath)
    try:
        agents = {agent.name: agent for agent in AgentRegistry(home, environ).list()}
    except (RunError, StateError) as exc:
        message = f"{exc.code}: {exc.message}" if isinstance(exc, RunError) else str(exc)
        return [Check("FAIL", "ACP agents", message)]
    checks = []
    for project in projects:
        builtin = [tool for tool in project.tools if tool in TOOLS]
        missing = [tool for tool in builtin if shutil.which(tool, path=path) is None]
        problems = [f"{', '.join(missing)} not on PATH"] if missing else []
        found = [f"{', '.join(builtin)} on PATH"] if builtin and not missing else []
        for tool in project.tools:
            if tool in TOOLS:
                continue
            agent = agents.get(tool)
            if agent is None:
                problems.append(f"no ACP agent called {tool} is registered")
            elif (where := _program(agent, path)) is None:
                problems.append(_unstartable(agent))
            else:
                found.append(f"ACP agent {tool} ({where})")
        name = f"project {project.name}"
        if problems:
            checks.append(
                Check(
                    "FAIL",
                    name,
                    f"{'; '.join(problems)} (enabled for {project.path})",
                    _fix(missing, agents_wrong=len(problems) > (1 if missing else 0)),
                )
            )
        else:
            checks.append(Check("OK", name, "; ".join(found)))
    return checks


def _program(agent: AgentSpec, path: str) -> str | None:
    """Where the agent's program is, found as the spawner finds it (None: nowhere)."""
    program = agent.command[0]
    if os.sep in program:
        return program if os.path.isfile(program) and os.access(program, os.X_OK) else None
    return shutil.which(program, path=path)


def _unstartable(agent: AgentSpec) -> str:
    program = agent.command[0]
    if os.sep in program:
        return f"the ACP agent {agent.name}'s command {program} is not an executable file"
    return f"the ACP agent {agent.name}'s command {program} is not on PATH"


def _fix(missing: list[str], *, agents_wrong: bool) -> str:
    fixes = []
    if missing:
        fixes.append(
            f"install {', '.join(missing)}, or add its directory to PATH in the shell or "
            "service that starts discord-watch"
        )
    if agents_wrong:
        fixes.append(
            "register the agent with a command that starts it (`discord-watch agent remove "
            "NAME`, then `discord-watch agent add NAME -- COMMAND [ARGS...]`)"
        )
    fixes.append("or remove the project and add it again without it")
    return "; ".join(fixes)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
