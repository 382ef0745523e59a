"""ACP agents registered by name: any program that speaks the Agent Client Protocol on stdio.

``discord-watch agent add NAME -- COMMAND [ARGS...]`` stores the agent in the runs config
(``<state>/runs/config.json``, the projects' file, under its own top-level key)::

    {"version": 1, "projects": {...},
     "agents": {"claude-acp": {"name": "claude-acp",
                               "command": ["claude-agent-acp"],
                               "mode": "default",
                               "created_at": "...Z"}}}

``mode`` (optional): the ACP session mode to switch to after ``session/new`` or
``session/load`` (e.g. ``default`` so that Claude's agent asks before it acts). A NAME is then
usable wherever a tool name is (a project's tools, ``/tool``, ``/start tool:``, ``submit
--tool``). ``DISCORD_WATCH_AGENT_COMMAND`` (a command line, split like a shell would split it
but never run by one) registers one more agent, called ``acp``, from the environment; a stored
agent of that name wins.

The command is an argv list, never a shell string; the engine starts it through the spawner.
"""

from __future__ import annotations

import builtins
import os
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError, StateCorrupt
from discord_mcp.runs.journal.model import TOOL_NAME, TOOLS, utc_iso
from discord_mcp.state.files import locked, read_json, write_json

ENV_AGENT = "DISCORD_WATCH_AGENT_COMMAND"
ENV_AGENT_NAME = "acp"
_CONFIG_VERSION = 1
_MODE = 80


@dataclass(frozen=True)
class AgentSpec:
    """One ACP agent: its name, how to start it, and the session mode to choose."""

    name: str
    command: tuple[str, ...]
    mode: str | None = None
    created_at: str = ""
    source: str = "config"  # or "environment"

    def to_dict(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "name": self.name,
            "command": list(self.command),
            "created_at": self.created_at,
        }
        if self.mode:
            document["mode"] = self.mode
        return document

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentSpec:
        command = data.get("command")
        if (
            not isinstance(command, list)
            or not command
            or not all(isinstance(part, str) for part in command)
        ):
            raise ValueError(f"agent {data.get('name')!r}: command must be a list of strings")
        mode = data.get("mode")
        return cls(
            name=str(data["name"]),
            command=tuple(command),
            mode=str(mode) if mode else None,
            created_at=str(data.get("created_at", "")),
        )


def environment_agent(environ: Mapping[str, str] | None = None) -> AgentSpec | None:
    """The agent ``DISCORD_WATCH_AGENT_COMMAND`` registers as ``acp``, if set."""
    line = (os.environ if environ is None else environ).get(ENV_AGENT, "").strip()
    if not line:
        return None
    try:
        command = tuple(shlex.split(line))
    except ValueError as exc:
        raise RunError(
            "E_INVALID_AGENT",
            f"{ENV_AGENT} could not be read as a command line ({exc}): quote it as a shell would",
        ) from None
    return AgentSpec(name=ENV_AGENT_NAME, command=command, source="environment")


class AgentRegistry:
    """The ACP agents in ``<state_dir>/runs/config.json`` (plus the environment's ``acp``).

    ``environ``: where ``DISCORD_WATCH_AGENT_COMMAND`` is read (default: this process's).
    """

    def __init__(self, state_dir: Path, environ: Mapping[str, str] | None = None) -> None:
        self.path = state_dir / "runs" / "config.json"
        self._environ = environ

    def list(self) -> builtins.list[AgentSpec]:
        """Every agent, by name (the environment's ``acp`` unless one is stored by that name)."""
        stored = self._stored()
        found = {name: _load(data) for name, data in stored.items()}
        extra = environment_agent(self._environ)
        if extra is not None and extra.name not in found:
            found[extra.name] = extra
        return [found[name] for name in sorted(found)]

    def names(self) -> tuple[str, ...]:
        return tuple(agent.name for agent in self.list())

    def find(self, name: str) -> AgentSpec | None:
        return next((agent for agent in self.list() if agent.name == name), None)

    def get(self, name: str) -> AgentSpec:
        """The agent called ``name``.

        Raises:
            RunError: E_AGENT_NOT_FOUND.
        """
        agent = self.find(name)
        if agent is None:
            known = ", ".join(self.names()) or "none yet"
            raise RunError(
                "E_AGENT_NOT_FOUND",
                f"there is no ACP agent called {name!r} (agents: {known}): add it with "
                "`discord-watch agent add NAME -- COMMAND [ARGS...]`",
            )
        return agent

    def add(self, name: str, command: Sequence[str], mode: str | None = None) -> AgentSpec:
        """Register an agent.

        Raises:
            RunError: E_INVALID_AGENT (name or command), E_AGENT_EXISTS.
        """
        if not isinstance(name, str) or not TOOL_NAME.match(name) or name in TOOLS:
            raise RunError(
                "E_INVALID_AGENT",
                f"agent name {name!r} is not allowed: use 1 to 40 characters from a-z, 0-9, '-' "
                f"and '_', and not one of the built-in tools ({', '.join(TOOLS)})",
            )
        argv = [str(part) for part in command]
        if not argv or not argv[0].strip():
            raise RunError(
                "E_INVALID_AGENT", "give the agent's command after `--`, e.g. -- gemini --acp"
            )
        if any("\0" in part for part in argv):
            raise RunError("E_INVALID_AGENT", "the agent's command contains a NUL character")
        if mode is not None and (not mode.strip() or len(mode) > _MODE):
            raise RunError("E_INVALID_AGENT", f"mode {mode!r}: give an ACP session mode id")
        agent = AgentSpec(
            name=name, command=tuple(argv), mode=mode, created_at=utc_iso(time.time())
        )
        with locked(self.path):
            document = self._read()
            agents = document.setdefault("agents", {})
            if name in agents:
                raise RunError(
                    "E_AGENT_EXISTS",
                    f"an agent called {name!r} exists already: remove it first, or pick "
                    "another name",
                )
            agents[name] = agent.to_dict()
            write_json(self.path, document)
        return agent

    def remove(self, name: str) -> AgentSpec:
        """Forget a stored agent (projects that list it fail their next job with
        E_AGENT_NOT_FOUND until it is added again).

        Raises:
            RunError: E_AGENT_NOT_FOUND.
        """
        with locked(self.path):
            document = self._read()
            agents = document.get("agents") or {}
            if name not in agents:
                raise RunError(
                    "E_AGENT_NOT_FOUND",
                    f"there is no stored ACP agent called {name!r}"
                    + (f" ({ENV_AGENT} defines {ENV_AGENT_NAME!r})" if name == "acp" else ""),
                )
            removed = _load(agents.pop(name))
            write_json(self.path, document)
        return removed

    def _stored(self) -> dict[str, Any]:
        agents = self._read().get("agents")
        return dict(agents) if isinstance(agents, dict) else {}

    def _read(self) -> dict[str, Any]:
        # The projects' registry owns the file's corruption handling; a corrupt file raises
        # there too (StateCorrupt), never reads as "no agents" here.
        try:
            document = read_json(self.path, max_version=_CONFIG_VERSION)
        except StateCorrupt as exc:
            raise RunError(
                "E_CONFIG_CORRUPT",
                f"the runs config {self.path} could not be read ({exc.reason}); see "
                "`discord-watch project list` for how to restore it",
            ) from None
        return document if document is not None else {"version": _CONFIG_VERSION}


def _load(data: Mapping[str, Any]) -> AgentSpec:
    try:
        return AgentSpec.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise RunError(
            "E_INVALID_AGENT",
            f"agent entry {data.get('name')!r} in runs/config.json is invalid ({exc}): remove it "
            "and add it again",
        ) from None
