"""ACP jobs: one agent process per active thread, one ``session/prompt`` per job.

Theory. A thread whose tool is an ACP agent keeps that agent running between its jobs
(:class:`AgentHosts`): the first job starts the process (through the spawner), ``initialize``
and ``session/new``; later jobs prompt the same session. A host with no turn for
``limits.agent_idle`` seconds is ended, and so is it at ``/session close``, at daemon shutdown,
and when its thread switches tool. The next job then starts a fresh process and
``session/load``\\s the thread's session when the agent says it can (``loadSession``); when it
cannot, the thread goes on in a new session and the job's status says so.

Each job (:class:`AcpRun`) fits the engine's model like a CLI job: queued per thread, journaled,
its transcript in the job's stdout log (read back by
:class:`~discord_mcp.runs.adapters.acp.AcpDecoder`), its activity and streamed text sent as the
updates arrive, its timeout counted without the owner's waits. Failures:

- the agent process ends during a turn: the job fails (E_AGENT_EXITED) with the tail of the
  agent's stderr; the host is dropped, and the next message starts a new one;
- the agent answers the prompt with an error: E_CLI_ERROR with its message;
- stop (``/stop``) or the timeout: ``session/cancel``; if the turn has not ended within
  ``limits.agent_cancel_grace`` seconds, the process is ended.

Agent processes never outlive the daemon (their protocol is the pipe): a job running when the
daemon stopped is found at the next start without its result, and is reported as lost
(``unknown_after_crash``), as for a CLI whose output ended without a result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from discord_mcp.errors import RunError
from discord_mcp.runs.acp.acp_endings import (
    SILENT_CODE,
    denial_prompt,
    describe_error,
    last_lines,
    stop_message,
)
from discord_mcp.runs.acp.agents import AgentSpec
from discord_mcp.runs.adapters.acp import (
    STREAM_LIMIT,
    AcpDecoder,
    AgentGone,
    McpServerSpec,
    transcript_line,
    wire,
)
from discord_mcp.runs.adapters.acp_models import ModelMenu
from discord_mcp.runs.adapters.base import Outcome, truncate
from discord_mcp.runs.contract import (
    FileDiff,
    PermissionAsk,
    PermissionAsker,
    PermissionOption,
    RunLimits,
)
from discord_mcp.runs.engine.launch import private_dirs
from discord_mcp.runs.journal.views import Activity
from discord_mcp.runs.processes.spawner import PipedSpec, spawn_piped

if TYPE_CHECKING:
    from acp import schema

    from discord_mcp.runs.adapters.acp_wire import AgentProcess

log = logging.getLogger(__name__)
_STDERR_TAIL = 4096
FORCED = "the agent did not stop when asked and was ended"


@dataclass
class AgentHost:
    """A thread's running agent: its process and session, and when it was last used."""

    thread_id: str
    tool: str
    process: AgentProcess
    stderr_path: Path
    last_used: float
    busy: bool = False
    session_key: str | None = None
    notes: list[str] = field(default_factory=list)
    model: str | None = None  # the model we switched its session to (None: the agent's own)

    def stderr_tail(self) -> str:
        try:
            with open(self.stderr_path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                handle.seek(max(0, size - _STDERR_TAIL))
                return handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""


class AgentHosts:
    """The agent processes of one engine, one per thread (see the module doc)."""

    def __init__(self, *, logs: Path, limits: RunLimits, monotonic: Callable[[], float]) -> None:
        self._logs = logs
        self._limits = limits
        self._monotonic = monotonic
        self.hosts: dict[str, AgentHost] = {}
        self.offered: dict[str, ModelMenu] = {}  # by agent name: the models its session offers

    async def acquire(
        self,
        *,
        thread_id: str,
        agent: AgentSpec,
        cwd: Path,
        env: Mapping[str, str],
        mcp: Sequence[McpServerSpec],
        resume: str | None,
        model: str | None = None,
    ) -> AgentHost:
        """The thread's live host for ``agent``, started (its session opened) if needed, on
        ``model`` (None: the agent's choice; a host we switched restarts, its session loaded).

        Raises:
            SpawnError: the agent could not be started.
            RunError: E_AGENT_START (it started but did not set up a session),
                E_INVALID_MODEL (the session does not offer ``model``, or refused it).
        """
        host = self.hosts.get(thread_id)
        stale = host is not None and (
            host.tool != agent.name
            or not host.process.alive
            or (model is None and host.model is not None)
        )
        if host is not None and stale:
            resume = host.session_key or resume
            await self.release(thread_id)
            host = None
        if host is None:
            host = await self._start(thread_id, agent, cwd, env, mcp, resume)
        host.last_used = self._monotonic()
        if model is not None and model != host.model:
            await host.process.switch_model(model)
            host.model = model
            if host.process.models is not None:
                self.offered[agent.name] = host.process.models
        return host

    async def _start(
        self,
        thread_id: str,
        agent: AgentSpec,
        cwd: Path,
        env: Mapping[str, str],
        mcp: Sequence[McpServerSpec],
        resume: str | None,
    ) -> AgentHost:
        sdk = await wire()  # the ACP SDK, loaded where the first agent starts
        private_dirs(self._logs)
        stderr_path = self._logs / f"{agent.name}-{thread_id}.stderr"
        process = await spawn_piped(
            PipedSpec(
                name=agent.name, argv=agent.command, cwd=cwd, env=env, stderr_path=stderr_path
            ),
            limit=STREAM_LIMIT,
        )
        limit = self._limits.agent_request_timeout
        connection: AgentProcess = sdk.AgentProcess(process, request_timeout=limit)
        host = AgentHost(
            thread_id=thread_id,
            tool=agent.name,
            process=connection,
            stderr_path=stderr_path,
            last_used=self._monotonic(),
        )
        try:
            await connection.initialize()
            session_id, loaded = await connection.open(str(cwd), mcp, resume, agent.mode)
        except asyncio.CancelledError:
            # Shutdown while the agent starts: it is no host yet, so nobody else would end it.
            await asyncio.shield(connection.close(self._limits.kill_grace))
            raise
        except (AgentGone, TimeoutError, Exception) as exc:
            await connection.close(self._limits.kill_grace)
            tail = last_lines(host.stderr_tail())
            raise RunError(
                "E_AGENT_START",
                f"the ACP agent {agent.name} did not start a session ({describe_error(exc)})"
                + (f": {tail}" if tail else ""),
            ) from None
        host.session_key = session_id
        if connection.models is not None:
            self.offered[agent.name] = connection.models
        if resume and not loaded:
            host.notes.append(
                "this agent could not load the thread's earlier session; it starts a new one"
                if connection.can_load
                else "this agent cannot load sessions; the thread goes on in a new session"
            )
        self.hosts[thread_id] = host
        return host

    async def release(self, thread_id: str) -> None:
        """End the thread's agent process, if there is one."""
        host = self.hosts.pop(thread_id, None)
        if host is not None:
            await host.process.close(self._limits.kill_grace)

    async def reap_idle(self) -> None:
        now = self._monotonic()
        for thread_id, host in list(self.hosts.items()):
            if not host.busy and (
                not host.process.alive or now - host.last_used >= self._limits.agent_idle
            ):
                log.info("ending the idle agent of thread %s", thread_id)
                await self.release(thread_id)

    async def close(self) -> None:
        """End every agent at once: each takes at most its grace twice (SIGTERM, SIGKILL)."""
        await asyncio.gather(*(self.release(thread_id) for thread_id in list(self.hosts)))


class AcpRun:
    """One ACP job: a prompt in the thread's session, followed until its turn ends.

    Has what the scheduler's shared bookkeeping reads of a :class:`~.runner.JobRun` (stop
    reason, wake-up, done, deadline, the decoder and the activity flags).
    """

    def __init__(
        self,
        *,
        job_id: str,
        thread_id: str,
        project_name: str,
        tool: str,
        prompt: str,
        stdout: Path,
        started: float,
        timeout: float,
        started_wall: float,
        monotonic: Callable[[], float],
        resumed: bool,
    ) -> None:
        self.job_id = job_id
        self.thread_id = thread_id
        self.project_name = project_name
        self.tool = tool
        self.prompt = prompt
        self.stdout = stdout
        self.started = started
        self.timeout = timeout
        self.deadline = started + timeout
        self.started_wall = started_wall
        self.waited = 0.0
        self.waited_checked_at: float | None = None
        self.resumed = resumed
        self._monotonic = monotonic
        self.decoder = AcpDecoder()
        self.decoder.tool = tool  # type: ignore[misc]
        self.stop_reason: str | None = None
        self.wakeup = asyncio.Event()
        self.done = asyncio.Event()
        self.changed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.key_journaled = False
        self.activity_dirty = False
        self.activity_sent_at: float | None = None
        self.stream_sent = 0
        self.stream_sent_at: float | None = None
        self.stream_on = True
        self.mcp_extra: dict[str, str] = {}  # the turn's own server variables (chat channels)
        self.host: AgentHost | None = None
        self.follow_ups: list[str] = []  # prompts for when the turn ends (a denial's note)
        self.last_heard = started  # the last session/update (monotonic): the watchdog's
        self.asking = False  # a permission request waits for the owner
        self.silence = 1800.0  # limits.agent_silence
        self.shutdown_reason = "discord-watch stopped"
        self._prompts: list[asyncio.Future[Any]] = []
        self._log = open(stdout, "a", encoding="utf-8")  # noqa: SIM115 (closed in close())

    # -- the transcript

    def write(self, kind: str, **fields: Any) -> None:
        if kind == "acp_update":
            self.last_heard = self._monotonic()
        line = transcript_line(kind, **fields)
        with contextlib.suppress(OSError, ValueError):
            self._log.write(line)
            self._log.flush()
        if self.decoder.feed(line):
            self.activity_dirty = True
        self.changed.set()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._log.close()

    def activity(self) -> Activity:
        decoder = self.decoder
        return Activity(
            job_id=self.job_id,
            elapsed=max(0.0, self._monotonic() - self.started),
            tool_calls=tuple(decoder.tool_calls),
            tool_call_count=decoder.tool_call_count,
            last_text=decoder.last_text,
            note=decoder.note,
            session_key=decoder.session_key,
            events_seen=decoder.events_seen,
        )

    # -- the turn

    async def turn(self, host: AgentHost, ask: PermissionAsker | None, cwd: str) -> Outcome:
        """Prompt and follow the turn until it ends or is stopped (``stop_reason``)."""
        self.host = host
        process = host.process
        self.write("acp_session", session_id=host.session_key, agent=process.agent_name)
        for note in host.notes:
            self.decoder.note = note
        host.notes.clear()
        process.client.on_update = lambda update: self.write("acp_update", update=update)
        process.client.on_permission = self._permission_sink(ask, host, cwd)
        self._prompts = [self._send(self.prompt)]
        try:
            while True:
                while not all(p.done() for p in self._prompts):
                    # After the clear: a stop that came while the agent started is not lost.
                    self.wakeup.clear()
                    if self.stop_reason is not None:
                        return await self._cancel(host, self._prompts[-1])
                    waiter = asyncio.ensure_future(self.wakeup.wait())
                    pending = {p for p in self._prompts if not p.done()}
                    await asyncio.wait({*pending, waiter}, return_when=asyncio.FIRST_COMPLETED)
                    waiter.cancel()
                failed = next((p for p in self._prompts if p.exception() is not None), None)
                if failed is None and self.follow_ups and self.stop_reason is None:
                    # The owner's note on a denial: the agent's next prompt, in this job.
                    self.decoder.next_prompt()
                    self._prompts.append(self._send(self.follow_ups.pop(0)))
                    continue
                return self._ended(host, failed or self._prompts[-1])
        finally:
            process.client.on_update = None
            process.client.on_permission = None
            for prompt in self._prompts:
                if not prompt.done():
                    prompt.cancel()

    def _send(self, text: str) -> asyncio.Future[Any]:
        assert self.host is not None
        process = self.host.process
        return asyncio.ensure_future(process.call(process.prompt(text), within=1e9))

    def steer(self, text: str) -> bool:
        """Send ``text`` into the live turn (the agent says it takes prompts mid-turn: it reads
        it at its next step); False when it cannot (no turn, or an agent without steering)."""
        host = self.host
        if host is None or not host.process.steering or self.stop_reason is not None:
            return False
        if not self._prompts or all(p.done() for p in self._prompts):
            return False
        self._prompts.append(self._send(text))
        self.wakeup.set()
        return True

    async def _cancel(self, host: AgentHost, prompt: asyncio.Future[Any]) -> Outcome:
        reason = self.stop_reason or "E_STOPPED"
        forced = False
        if reason == SILENT_CODE:  # hung: nothing to ask it, its process is ended
            await host.process.close(self.kill_grace)
        else:
            await host.process.cancel()
            try:
                async with asyncio.timeout(self._grace):
                    await asyncio.wait({prompt})
            except TimeoutError:
                log.warning("the agent of job %s did not stop in time; ending it", self.job_id)
                host.notes.append(FORCED)
                forced = True
                await host.process.close(self.kill_grace)
        if prompt.done() and not prompt.cancelled() and prompt.exception() is None:
            self.write("acp_result", stop_reason=prompt.result().stop_reason, usage=_usage(prompt))
        message = stop_message(
            reason,
            self.tool,
            timeout=self.timeout,
            silence=self.silence,
            shutdown_reason=self.shutdown_reason,
        )
        if forced:
            message += f"; {FORCED}"
        return self._failure(reason, message)

    def silent_for(self, now: float) -> float:
        """How long the agent has said nothing in this turn (0 while the owner is asked)."""
        return 0.0 if self.asking else max(0.0, now - self.last_heard)

    _grace = 10.0
    kill_grace = 5.0

    def _ended(self, host: AgentHost, prompt: asyncio.Future[Any]) -> Outcome:
        exc = prompt.exception()
        if isinstance(exc, AgentGone):
            tail = last_lines(host.stderr_tail())
            message = f"the ACP agent {self.tool} ended during the turn ({exc})"
            self.write("acp_error", message=message)
            return self._failure("E_AGENT_EXITED", message + (f": {tail}" if tail else ""))
        if exc is not None:
            message = f"{self.tool} reported an error: {describe_error(exc)}"
            self.write("acp_error", message=message)
            return self._failure("E_CLI_ERROR", message)
        response = prompt.result()
        self.write("acp_result", stop_reason=response.stop_reason, usage=_usage(prompt))
        return self.decoder.outcome(0, resumed=False)

    def _failure(self, code: str, message: str) -> Outcome:
        decoder = self.decoder
        return Outcome(
            ok=False,
            error_code=code,
            error_message=truncate(message, 1000),
            session_key=decoder.session_key,
            final_text=None,
            usage=decoder.usage,
            cost_usd=None,
            exit_code=None,
        )

    def _permission_sink(
        self, ask: PermissionAsker | None, host: AgentHost, cwd: str
    ) -> Callable[[schema.RequestPermissionRequest], Any]:
        async def sink(request: schema.RequestPermissionRequest) -> dict[str, Any]:
            if ask is None:
                return {"outcome": "cancelled"}
            call = request.tool_call
            raw = call.raw_input if isinstance(call.raw_input, dict) else {}
            options = tuple(
                PermissionOption(option_id=o.option_id, name=o.name, kind=str(o.kind))
                for o in request.options
            )
            question = PermissionAsk(
                thread_id=self.thread_id,
                job_id=self.job_id,
                project_name=self.project_name,
                agent=self.tool,
                session_id=request.session_id,
                cwd=cwd,
                title=str(call.title or ""),
                kind=str(call.kind or "other"),
                raw_input=raw,
                options=options,
                tool_call_id=str(call.tool_call_id or ""),
                diffs=_diffs(call.content),
            )
            self.decoder.note = f"waiting for the owner: {question.title or question.kind}"
            self.activity_dirty = True
            self.changed.set()
            self.asking = True
            try:
                choice = await ask(question)
            finally:
                self.asking = False
                self.last_heard = self._monotonic()
            known = {o.option_id: o for o in options}
            picked = known.get(choice.option_id or "")
            if choice.note and (picked is None or not picked.kind.startswith("allow")):
                # ACP has no field for a denial's reason: the owner's note is the agent's next
                # prompt, sent when this turn ends (seed 003's "deny with instructions").
                self.follow_ups.append(denial_prompt(question, choice.note))
                self.decoder.note = "the owner's note goes to the agent when its turn ends"
                self.activity_dirty = True
                self.changed.set()
            if picked is None:
                return {"outcome": "cancelled"}  # never an allow by default
            return {"outcome": "selected", "optionId": picked.option_id}

        return sink


def _diffs(content: Any) -> tuple[FileDiff, ...]:
    """The ``diff`` items of a tool call's content (the edits it would make)."""
    found = []
    for item in content or ():
        if getattr(item, "type", None) == "diff" and isinstance(getattr(item, "path", None), str):
            old = getattr(item, "old_text", None)
            new = getattr(item, "new_text", None)
            found.append(FileDiff(item.path, old if isinstance(old, str) else None, str(new or "")))
    return tuple(found)


def _usage(prompt: asyncio.Future[Any]) -> dict[str, Any] | None:
    if prompt.cancelled() or prompt.exception() is not None:
        return None
    usage = getattr(prompt.result(), "usage", None)
    if usage is None:
        return None
    return dict(usage.model_dump(mode="json", by_alias=True, exclude_none=True))
