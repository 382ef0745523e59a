"""A thread's session: binding it to a project as a run (its folder, and a worktree if asked)
and switching its tool.

A base class of :class:`~discord_mcp.runs.engine.engine.RunEngine`, which provides the attributes
declared here.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from discord_mcp.errors import RunError
from discord_mcp.runs.adapters.acp_models import AgentModel
from discord_mcp.runs.constraints import Constraints
from discord_mcp.runs.contract import Clock, RunLimits
from discord_mcp.runs.engine.controls import check_model
from discord_mcp.runs.engine.launch import check_tool_enabled
from discord_mcp.runs.folders.folders import check_run_id, new_run_id
from discord_mcp.runs.folders.recorder import RunRecorder
from discord_mcp.runs.git import worktrees
from discord_mcp.runs.journal.journal import Journal
from discord_mcp.runs.journal.model import RunState, Session, utc_iso
from discord_mcp.runs.journal.views import SessionView
from discord_mcp.runs.projects import ProjectRegistry

if TYPE_CHECKING:
    from discord_mcp.runs.engine.notices import Notices
    from discord_mcp.runs.engine.scheduler import Scheduler


class EngineSessions:
    """Starting a thread's session and switching its tool."""

    journal: Journal
    limits: RunLimits
    _scheduler: Scheduler
    _notices: Notices
    _open: bool
    clock: Clock
    state_dir: Path
    projects: ProjectRegistry
    recorder: RunRecorder

    @property
    def state(self) -> RunState:
        raise NotImplementedError

    def _require_open(self) -> None:
        raise NotImplementedError

    def _session(self, thread_id: str) -> Session:
        raise NotImplementedError

    def _session_view(self, thread_id: str) -> SessionView:
        raise NotImplementedError

    async def start_session(
        self,
        thread_id: str,
        project: str,
        tool: str | None = None,
        model: str | None = None,
        *,
        run_id: str | None = None,
        constraints: Constraints | None = None,
        worktree: bool | None = None,
    ) -> SessionView:
        """Bind a thread to a project (and a tool, default: the project's default tool; and a
        model, default: the CLI's). The session is a run with a folder of its own
        (:mod:`discord_mcp.runs.folders.folders`): ``run_id`` (default: a new one) and its
        ``constraints`` (default: the project's). ``worktree``: the run works in a git
        worktree of its own (:mod:`discord_mcp.runs.git.worktrees`; default: the project's
        setting).

        Raises:
            RunError: E_SESSION_EXISTS, E_PROJECT_NOT_FOUND, E_TOOL_NOT_ENABLED,
                E_INVALID_MODEL, E_RUN_NOT_FOUND (a malformed run id), and for a worktree
                E_NOT_A_GIT_REPO, E_NO_COMMITS, E_WORKTREE_FAILED.
        """
        self._require_open()
        thread_id = str(thread_id)
        if thread_id in self.state.sessions:
            raise RunError(
                "E_SESSION_EXISTS",
                f"thread {thread_id} is already a session of project "
                f"{self.state.sessions[thread_id].project_name!r}: keep writing there, or start "
                "a new thread",
            )
        found = self.projects.get(project)
        chosen = tool if tool is not None else found.default_tool
        check_tool_enabled(chosen, found.name, found.tools)
        chosen_model = check_model(model)
        self._check_offered(chosen, chosen_model)
        run = check_run_id(run_id) if run_id is not None else new_run_id(self.clock.time())
        if self.state.session_of_run(run) is not None:
            raise RunError("E_SESSION_EXISTS", f"run {run} has a session already")
        asked = constraints or Constraints()
        held = Constraints(
            allow_network=asked.allow_network and found.allow_network,
            timeout_s=asked.timeout_s,
        )
        project_path = self.projects.check_path(found.path)
        tree = None
        if found.worktrees if worktree is None else worktree:
            tree = await worktrees.create(
                self.state_dir,
                run,
                project=found.name,
                project_path=project_path,
                now=utc_iso(self.clock.time()),
            )
        created: dict[str, Any] = {
            "thread_id": thread_id,
            "project_name": found.name,
            "tool": chosen,
            "run_id": run,
            "constraints": held.to_dict(),
        }
        if chosen_model is not None:
            created["model"] = chosen_model
        if tree is not None:
            created["workdir"] = str(tree["workdir"])
        try:
            await self.recorder.prepare(
                run,
                project=found.name,
                project_path=Path(tree["workdir"]) if tree is not None else project_path,
                engine=chosen,
                thread_id=thread_id,
                constraints=held,
                snapshot=tree is None,  # a worktree's base is its commit
            )
            self.journal.append("SessionCreated", created)
        except BaseException:
            if tree is not None:  # no session holds it: it would be nobody's
                await worktrees.forget(self.state_dir, tree)
            raise
        return self._session_view(thread_id)

    async def set_tool(self, thread_id: str, tool: str) -> SessionView:
        """Switch the thread's tool; the running job is unaffected, the next job uses it.

        Raises:
            RunError: E_NOT_IN_MANAGED_THREAD, E_INVALID_TOOLSET, E_TOOL_NOT_ENABLED,
                E_PROJECT_NOT_FOUND.
        """
        self._require_open()
        session = self._session(str(thread_id))
        project = self.projects.get(session.project_name)
        check_tool_enabled(tool, project.name, project.tools)
        if tool != session.tool:
            self.journal.append("ToolChanged", {"thread_id": session.thread_id, "tool": tool})
        return self._session_view(session.thread_id)

    async def _session_ended(self, thread_id: str) -> None:
        await self._scheduler.acp.release(thread_id)

    async def end_piped_turns(self) -> None:
        """End the turns that cannot outlive this process (an ACP agent's: its protocol is our
        pipe), each finished with why, and deliver what that tells the notifier; the daemon
        calls it before it closes its notifier. Nothing new starts after it."""
        self._open = False
        await self._scheduler.end_piped_turns()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.limits.shutdown_timeout):
                await self._notices.settled()

    def agent_models(self, tool: str) -> tuple[AgentModel, ...]:
        """The models an ACP agent's sessions offer, as this engine last saw them (empty: not
        seen yet, or it offers no choice)."""
        return self._scheduler.acp.models(tool)

    def _check_offered(self, tool: str, model: str | None) -> None:
        offered = self.agent_models(tool)
        if model is not None and offered and model not in {m.model_id for m in offered}:
            raise RunError(
                "E_INVALID_MODEL",
                f"{tool} does not offer model {model!r}; it offers "
                + ", ".join(m.model_id for m in offered),
            )
