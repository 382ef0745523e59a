"""Projects: where a run happens and with which tools (``<state>/runs/config.json``).

A project is a run template (seed 000 §2.3, §10.1): a directory the CLIs run in, the tools
that may run there, the default tool, and per-tool argv fragments inserted into every run.
Any number of threads may use one project.

The file is the public contract of seed 000 §10.1, version 1::

    {"version": 1,
     "projects": {"my-app": {"name": "my-app", "path": "/home/me/code/my-app",
                             "enabled_tools": ["gemini", "codex", "claude"],
                             "default_tool": "gemini",
                             "default_args": {"gemini": ["--model", "gemini-2.5-pro"],
                                              "codex": [], "claude": []},
                             "approvals": "ask-all",
                             "job_timeout_seconds": 1800,
                             "created_at": "...Z", "updated_at": "...Z"}}}

``approvals`` (optional, written only when not the default ``ask``): how a run's tool calls
are approved from Discord. ``ask``: read-only tools run, anything that writes or executes asks
the owner; ``ask-all``: every tool asks; ``off``: the CLI's own configuration decides (see the
README's approvals).

``stream`` (optional, ``on`` unless written): the agent's text streams into the thread while it
writes (an ACP agent's message chunks; the headless CLIs' partial output). ``busy`` (optional,
``queue`` unless written): what a message does while a turn runs: ``queue`` waits its turn,
``interrupt`` cancels the running turn and runs next, ``steer`` is handed to the running turn
where the engine can (Claude Code, whose jobs then read their input from stdin; an ACP agent
that says it takes prompts mid-turn), else queues.

``job_timeout_seconds`` is optional (absent: the engine's default, 15 minutes): how long one job
may run, not counting the time its agent waits for the owner's answer.

``allow_network`` is optional (written only when false, issue 23): false runs every run of the
project as with ``discord-watch submit --no-network`` (:mod:`discord_mcp.runs.constraints`).

``worktrees`` is optional (written only when true, issue 35): every run of the project works in
a git worktree of its own (:mod:`discord_mcp.runs.git.worktrees`), unless the run says otherwise.

Other top-level keys (``owner_id``, ...) are kept as they are. The file may be changed by
another process (the ``discord-watch`` command line) while the daemon runs: every change is a
read-modify-write under the file's lock, and reads always see the current file.

A path must be absolute, an existing directory, and inside one of the allowed roots (the
user's home directory unless configured otherwise), checked after resolving symlinks; the
resolved path is what is stored. It is a project's own folder: never an allowed root itself, the
home directory, ``/``, the state directory, or a folder where credentials live (any component
in :data:`~discord_mcp.outbound.files.CREDENTIAL_DIRS`, such as ``~/.ssh`` or ``~/.aws``).

A file that cannot be read is quarantined (:mod:`discord_mcp.state.quarantine`) and never read
as "no projects": while ``config.json`` is missing and a quarantined copy lies beside it, every
operation answers E_CONFIG_CORRUPT, saying where the copy is and how to restore it.
"""

from __future__ import annotations

import builtins
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from discord_mcp.errors import RunError, StateCorrupt
from discord_mcp.runs.acp.agents import environment_agent
from discord_mcp.runs.constraints import TIMEOUT_RANGE_S
from discord_mcp.runs.journal.model import TOOLS, is_tool, utc_iso
from discord_mcp.runs.journal.views import Tool
from discord_mcp.runs.project_checks import check_args, check_setting, check_tools
from discord_mcp.state.files import locked, read_json, write_json
from discord_mcp.state.quarantine import MARKER

CONFIG_VERSION = 1
_NAME = re.compile(r"^[a-z0-9_-]{1,40}$")
APPROVAL_MODES = ("ask", "ask-all", "off")
STREAM_MODES = ("on", "off")
BUSY_MODES = ("queue", "interrupt", "steer")


@dataclass(frozen=True)
class Project:
    """A run template: the directory, the tools, and their default argv fragments."""

    name: str
    path: Path
    tools: tuple[Tool, ...]
    default_tool: Tool
    args: Mapping[Tool, tuple[str, ...]]
    created_at: str
    updated_at: str
    approvals: str = "ask"
    job_timeout: float | None = None
    """Seconds one job may run (waits for the owner not counted); None: the engine's default."""
    allow_network: bool = True
    """False: every run of the project runs without network (issue 23)."""
    stream: str = "on"
    busy: str = "queue"
    worktrees: bool = False
    """True: each run works in a git worktree of its own (issue 35)."""

    def args_for(self, tool: Tool) -> tuple[str, ...]:
        return self.args.get(tool, ())

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "name": self.name,
            "path": str(self.path),
            "enabled_tools": list(self.tools),
            "default_tool": self.default_tool,
            "default_args": {
                tool: list(self.args_for(tool)) for tool in dict.fromkeys((*TOOLS, *self.tools))
            },
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
        if self.approvals != "ask":  # the default stays implicit: the seed's format as it was
            document["approvals"] = self.approvals
        if self.job_timeout is not None:
            document["job_timeout_seconds"] = self.job_timeout
        if not self.allow_network:
            document["allow_network"] = False
        if self.stream != "on":
            document["stream"] = self.stream
        if self.busy != "queue":
            document["busy"] = self.busy
        if self.worktrees:
            document["worktrees"] = True
        return document

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Project:
        tools = tuple(t for t in data["enabled_tools"] if is_tool(t))
        default = data["default_tool"]
        if not tools or default not in tools:
            raise ValueError(f"project {data.get('name')!r}: bad enabled_tools/default_tool")
        given = data.get("default_args") or {}
        args = {
            tool: tuple(str(a) for a in given.get(tool) or ())
            for tool in dict.fromkeys((*TOOLS, *tools))
        }
        stream = str(data.get("stream") or "on")
        busy = str(data.get("busy") or "queue")
        if stream not in STREAM_MODES or busy not in BUSY_MODES:
            raise ValueError(f"project {data.get('name')!r}: unknown stream/busy setting")
        approvals = str(data.get("approvals") or "ask")
        if approvals not in APPROVAL_MODES:
            raise ValueError(f"project {data.get('name')!r}: unknown approvals {approvals!r}")
        timeout = data.get("job_timeout_seconds")
        if timeout is not None:
            timeout = float(timeout)
            low, high = TIMEOUT_RANGE_S
            if not low <= timeout <= high:
                raise ValueError(f"job_timeout_seconds {timeout:g} is outside {low:g}-{high:g}")
        return cls(
            name=str(data["name"]),
            path=Path(data["path"]),
            tools=tools,
            default_tool=default,
            args=args,
            created_at=str(data.get("created_at", "")),
            updated_at=str(data.get("updated_at", "")),
            approvals=approvals,
            job_timeout=timeout,
            allow_network=data.get("allow_network", True) is True,  # in doubt: no network
            stream=stream,
            busy=busy,
            worktrees=data.get("worktrees", False) is True,
        )


class ImplicitProjects(Protocol):
    """Projects the daemon derives rather than reads from the file."""

    def get(self, name: str) -> Project | None:
        """The derived project called ``name``, or None."""
        ...

    def owns(self, path: Path) -> bool:
        """Whether ``path`` (resolved) is the folder of a derived project."""
        ...


class ProjectRegistry:
    """The projects in ``<state_dir>/runs/config.json``.

    ``allowed_roots``: directories a project path must be inside (after resolving symlinks);
    default: the user's home directory.
    """

    def __init__(
        self,
        state_dir: Path,
        allowed_roots: Sequence[Path] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._environ = environ  # where DISCORD_WATCH_AGENT_COMMAND is read (default: ours)
        self.path = state_dir / "runs" / "config.json"
        self.state_dir = state_dir
        roots = list(allowed_roots) if allowed_roots is not None else [Path.home()]
        self.allowed_roots = tuple(root.resolve() for root in roots)
        self.implicit: ImplicitProjects | None = None
        """Projects not in the file that the daemon derives (a chat channel without a project
        works in its own folder: :mod:`discord_mcp.watch.chat`)."""

    # -- reading

    def list(self) -> builtins.list[Project]:
        """Every project, by name."""
        projects = self._read().get("projects") or {}
        return [_load(projects[name]) for name in sorted(projects)]

    def get(self, name: str) -> Project:
        """The project called ``name``.

        Raises:
            RunError: E_PROJECT_NOT_FOUND.
        """
        projects = self._read().get("projects") or {}
        if name not in projects:
            derived = self.implicit.get(name) if self.implicit is not None else None
            if derived is not None:
                return derived
            raise _not_found(name, projects)
        return _load(projects[name])

    # -- changing

    def add(
        self,
        name: str,
        path: Path | str,
        tools: Iterable[str],
        default: str | None = None,
        args: Mapping[str, Sequence[str]] | None = None,
        job_timeout: float | None = None,
        approvals: str = "ask",
        *,
        allow_network: bool = True,
        stream: str = "on",
        busy: str = "queue",
        worktrees: bool = False,
    ) -> Project:
        """Create a project; ``default`` is the first tool when not given; ``job_timeout`` in
        seconds (None: the engine's default).

        Raises:
            RunError: E_INVALID_PROJECT_NAME, E_INVALID_PATH, E_INVALID_TOOLSET, E_INVALID_ARGS,
                E_INVALID_APPROVALS, E_INVALID_TIMEOUT, E_PROJECT_EXISTS or E_CONFIG_CORRUPT,
                each with a sentence saying how to fix it.
        """
        if approvals not in APPROVAL_MODES:
            raise RunError(
                "E_INVALID_APPROVALS",
                f"approvals {approvals!r} is not one of {', '.join(APPROVAL_MODES)}: ask (writes "
                "and commands ask the owner), ask-all (every tool asks) or off (the CLI decides)",
            )
        if not isinstance(name, str) or not _NAME.match(name):
            raise RunError(
                "E_INVALID_PROJECT_NAME",
                f"project name {name!r} is not allowed: use 1 to 40 characters from a-z, 0-9, "
                "'-' and '_'",
            )
        check_setting("stream", stream, STREAM_MODES)
        check_setting("busy", busy, BUSY_MODES)
        resolved = self.check_path(path)
        agents = self.agent_names()
        tool_list = check_tools(tools, default, agents)
        chosen = default if default is not None else tool_list[0]
        checked_args = check_args(args or {}, agents)
        if job_timeout is not None:
            low, high = TIMEOUT_RANGE_S
            if not low <= job_timeout <= high:
                raise RunError(
                    "E_INVALID_TIMEOUT",
                    f"a job timeout of {job_timeout:g} s is not allowed: use {low:g} s to "
                    f"{high / 3600:g} h",
                )
        now = utc_iso(time.time())
        project = Project(
            name=name,
            path=resolved,
            tools=tool_list,
            default_tool=chosen,
            args=checked_args,
            created_at=now,
            updated_at=now,
            approvals=approvals,
            job_timeout=job_timeout,
            allow_network=allow_network,
            stream=stream,
            busy=busy,
            worktrees=worktrees,
        )
        with locked(self.path):
            document = self._read()
            projects = document.setdefault("projects", {})
            if name in projects:
                raise RunError(
                    "E_PROJECT_EXISTS",
                    f"a project called {name!r} exists already (at {projects[name].get('path')})"
                    ": pick another name, or remove the old project first",
                )
            projects[name] = project.to_dict()
            write_json(self.path, document)
        return project

    def update(self, name: str, **settings: str) -> Project:
        """Change a project's ``stream``, ``busy`` or ``worktrees`` (``on``/``off``) setting.

        Raises:
            RunError: E_PROJECT_NOT_FOUND, E_INVALID_SETTING.
        """
        allowed = {"stream": STREAM_MODES, "busy": BUSY_MODES, "worktrees": ("on", "off")}
        changes: dict[str, Any] = {}
        for key, value in settings.items():
            if key not in allowed:
                raise RunError("E_INVALID_SETTING", f"{key!r} is not a project setting to change")
            check_setting(key, value, allowed[key])
            changes[key] = value == "on" if key == "worktrees" else value
        with locked(self.path):
            document = self._read()
            projects = document.get("projects") or {}
            if name not in projects:
                raise _not_found(name, projects)
            current = _load(projects[name])
            changed = Project(**{**current.__dict__, **changes, "updated_at": utc_iso(time.time())})
            projects[name] = changed.to_dict()
            write_json(self.path, document)
        return changed

    def agent_names(self) -> tuple[str, ...]:
        """The ACP agents a project may name as tools (stored, and the environment's)."""
        stored = self._read().get("agents")
        names = set(stored) if isinstance(stored, dict) else set()
        extra = environment_agent(self._environ)
        if extra is not None:
            names.add(extra.name)
        return tuple(sorted(names))

    def remove(self, name: str) -> Project:
        """Delete a project (threads bound to it fail their next job with E_PROJECT_NOT_FOUND).

        Raises:
            RunError: E_PROJECT_NOT_FOUND.
        """
        with locked(self.path):
            document = self._read()
            projects = document.get("projects") or {}
            if name not in projects:
                raise _not_found(name, projects)
            removed = _load(projects.pop(name))
            write_json(self.path, document)
        return removed

    # -- validation

    def check_path(self, path: Path | str) -> Path:
        """The resolved project directory, if it is acceptable.

        Raises:
            RunError: E_INVALID_PATH, saying what is wrong.
        """
        if "\0" in str(path):
            raise RunError("E_INVALID_PATH", f"{str(path)!r}: a path cannot contain a NUL byte")
        given = Path(path)
        if not given.is_absolute():
            raise RunError(
                "E_INVALID_PATH", f"{str(path)!r} is not an absolute path: give the full path"
            )
        resolved = given.resolve()
        if self.implicit is not None and self.implicit.owns(resolved) and resolved.is_dir():
            return resolved  # the daemon's own folder for it (a chat channel's)
        if not resolved.exists():
            raise RunError("E_INVALID_PATH", f"{given} does not exist: create it first")
        if not resolved.is_dir():
            raise RunError("E_INVALID_PATH", f"{given} is not a directory: give its folder")
        if not any(resolved.is_relative_to(root) for root in self.allowed_roots):
            roots = ", ".join(str(r) for r in self.allowed_roots)
            raise RunError(
                "E_INVALID_PATH",
                f"{given} (resolved: {resolved}) is outside the allowed roots ({roots}): use a "
                "directory inside them, or add its root to DISCORD_WATCH_ROOTS (':'-separated "
                "directories; for discord-watch too, where it runs)",
            )
        self._not_a_root(given, resolved)
        return resolved

    def _not_a_root(self, given: Path, resolved: Path) -> None:
        from discord_mcp.outbound.files import CREDENTIAL_DIRS

        what = None
        if resolved == Path("/"):
            what = "/ itself"
        elif resolved == Path.home().resolve():
            what = "your home directory itself"
        elif resolved in self.allowed_roots:
            what = "an allowed root itself (projects are the folders inside it)"
        elif resolved.is_relative_to(self.state_dir.resolve()):
            what = "inside the discord-mcp state directory"
        else:
            secret = next((p for p in resolved.parts if p.lower() in CREDENTIAL_DIRS), None)
            if secret is not None:
                what = f"inside {secret}/, where credentials live"
        if what is not None:
            raise RunError("E_INVALID_PATH", f"{given} is {what}: give the project's own folder")

    def quarantined(self) -> builtins.list[Path]:
        """Copies of the file that were set aside as corrupt, oldest first."""
        try:
            return sorted(self.path.parent.glob(f"{self.path.name}{MARKER}*"))
        except OSError:
            return []

    def _read(self) -> dict[str, Any]:
        try:
            document = read_json(self.path, max_version=CONFIG_VERSION)
        except StateCorrupt as exc:
            moved = [Path(exc.moved_to)] if exc.moved_to else self.quarantined()
            raise _corrupt(self.path, moved, exc.reason) from None
        if document is None:
            set_aside = self.quarantined()
            if set_aside:
                # Never "no projects" in silence: the projects are in the copy.
                raise _corrupt(self.path, set_aside, None)
            return {"version": CONFIG_VERSION, "projects": {}}
        return document


def _corrupt(path: Path, moved: builtins.list[Path], reason: str | None) -> RunError:
    newest = str(moved[-1]) if moved else "a file beside it"
    found = f"could not be read ({reason})" if reason else "was found corrupt"
    older = f" (and {len(moved) - 1} older copies)" if len(moved) > 1 else ""
    return RunError(
        "E_CONFIG_CORRUPT",
        f"the project list {path} {found} and was moved to {newest}{older}; no project can be "
        f"used until it is restored. Repair that copy and move it back to {path}, or delete "
        f"every {path.name}{MARKER}* file to start with no projects and add them again with "
        "`discord-watch project add`",
    )


def _load(data: Mapping[str, Any]) -> Project:
    try:
        return Project.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise RunError(
            "E_INVALID_PROJECT",
            f"project entry {data.get('name')!r} in runs/config.json is invalid ({exc}): remove "
            "it and add it again",
        ) from None


def _not_found(name: str, projects: Mapping[str, Any]) -> RunError:
    known = ", ".join(sorted(projects)) or "none yet"
    return RunError(
        "E_PROJECT_NOT_FOUND",
        f"there is no project called {name!r} (projects: {known}): check the name, or create "
        "the project first",
    )
