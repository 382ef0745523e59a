"""Watching one running job: follow its stdout log, notice its end, stop it when told.

The CLI writes its stdout straight into ``<state>/logs/jobs/<job_id>.stdout``; a
:class:`JobRun` reads what is new on every poll, feeds complete lines to the adapter's decoder,
and tells whether the CLI has ended (the wrapper's status file, our own ``waitpid``, or the
process being gone). The same code serves a job this engine started and one it reattached
after a restart: nothing here depends on being the CLI's parent.

A Claude Code job started for ``busy: steer`` has an input (:mod:`discord_mcp.runs.processes.wrap`):
:meth:`JobRun.steer` offers a message to it while the turn runs, and the input is ended once
the turn's result is seen (the wrapper ends it then too, so it ends while the daemon is down).

Stopping (``stop`` or the wall-clock timeout) signals the whole process group: SIGTERM, then
SIGKILL after ``kill_grace`` seconds. Once the CLI has ended, anything left in its group (an
MCP server that ignored its closed stdin, a background process) is stopped the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from discord_mcp.runs.adapters import adapter_for
from discord_mcp.runs.adapters.base import Decoder, Outcome
from discord_mcp.runs.journal.model import ProcessInfo
from discord_mcp.runs.journal.views import Activity, Tool
from discord_mcp.runs.processes import wrap
from discord_mcp.runs.processes.spawner import (
    exit_code_from_status,
    group_members,
    is_alive,
    reap,
    signal_from_status,
)

_READ_CHUNK = 1 << 20
_STDERR_TAIL = 4096


_NO_RESULT = frozenset({"E_CLI_EXIT_NONZERO", "E_ADAPTER_MISSING_RESULT"})
"""A CLI that ended without its final result: a crash when a signal killed it."""


@dataclass(frozen=True)
class JobPaths:
    """Where a job's files are: logs under ``logs/jobs``, private files under ``runs/jobs``."""

    stdout: Path
    stderr: Path
    job_dir: Path
    status: Path

    @property
    def input(self) -> Path:
        """The CLI's input, where it has one (:mod:`discord_mcp.runs.processes.wrap`)."""
        return self.job_dir / "input"

    @classmethod
    def for_job(cls, state_dir: Path, job_id: str) -> JobPaths:
        logs = state_dir / "logs" / "jobs"
        job_dir = state_dir / "runs" / "jobs" / job_id
        return cls(
            stdout=logs / f"{job_id}.stdout",
            stderr=logs / f"{job_id}.stderr",
            job_dir=job_dir,
            status=job_dir / "status.json",
        )


class JobRun:
    """One running job as the engine watches it."""

    def __init__(
        self,
        *,
        job_id: str,
        thread_id: str,
        tool: Tool,
        process: ProcessInfo,
        paths: JobPaths,
        decoder: Decoder,
        resumed: bool,
        started: float,
        deadline: float,
        monotonic: Callable[[], float],
        reattached: bool = False,
        timeout: float = 0.0,
        started_wall: float = 0.0,
    ) -> None:
        self.job_id = job_id
        self.reattached = reattached  # picked up after a restart: we did not see it all
        self.thread_id = thread_id
        self.tool = tool
        self.process = process
        self.paths = paths
        self.decoder = decoder
        self.resumed = resumed
        self.started = started
        self.deadline = deadline
        """When the job times out (monotonic): its timeout after the start, plus the time its
        agent has waited for the owner (:attr:`waited`)."""
        self.timeout = timeout
        self.started_wall = started_wall
        self.waited = 0.0
        self.waited_checked_at: float | None = None
        self._monotonic = monotonic
        self.stop_reason: str | None = None
        self.wakeup = asyncio.Event()
        self.done = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.key_journaled = False
        self.activity_dirty = False
        self.activity_sent_at: float | None = None
        self.stream_on = False  # the project streams text (set by the scheduler)
        self.stream_sent = 0  # the stream version last queued
        self.stream_sent_at: float | None = None  # when (monotonic)
        self._handle: BinaryIO | None = None
        self._partial = b""
        self._input_ended = False

    # -- output

    def read_new(self, *, final: bool = False) -> bool:
        """Decode the complete lines written since the last call; True if activity changed.

        With ``final`` (the CLI has ended) a last line without a newline counts too.
        """
        if self._handle is None:
            try:
                self._handle = open(self.paths.stdout, "rb")  # noqa: SIM115 (kept open)
            except FileNotFoundError:
                return False
        changed = False
        while True:
            data = self._handle.read(_READ_CHUNK)
            if not data:
                break
            lines = (self._partial + data).split(b"\n")
            self._partial = lines.pop()
            for raw in lines:
                changed = self.decoder.feed(raw.decode("utf-8", errors="replace")) or changed
            if not final:
                break  # keep the loop responsive; the rest comes on the next poll
        if final and self._partial:
            changed = self.decoder.feed(self._partial.decode("utf-8", errors="replace")) or changed
            self._partial = b""
        return changed

    # -- input (busy: steer)

    def steer(self, prompt: str) -> bool:
        """Hand ``prompt`` to the running turn: True when the job's CLI will read it (its input
        is still open, see :mod:`discord_mcp.runs.processes.wrap`); False when this job cannot take
        it (a CLI without input, a turn already over, a job being stopped)."""
        if self.stop_reason is not None or self._input_ended:
            return False
        line = adapter_for(self.tool).steer_line(prompt)
        if line is None or not self.paths.input.is_dir():
            return False
        if self.read_new():  # the freshest view of the turn before deciding
            self.activity_dirty = True
        if self.decoder.final_seen or not is_alive(self.process):
            return False
        return wrap.offer(str(self.paths.input), line.encode("utf-8"))

    def end_input(self) -> None:
        """No more input: the CLI answers what it read, then ends (the wrapper closes stdin)."""
        if not self._input_ended:
            self._input_ended = True
            wrap.end_input(str(self.paths.input))

    def stderr_tail(self) -> str:
        try:
            with open(self.paths.stderr, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                handle.seek(max(0, size - _STDERR_TAIL))
                return handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    # -- the process

    def exit_status(self) -> tuple[bool, int | None]:
        """(ended, exit code): the CLI's exit code as the wrapper recorded it. Without that
        record the job ends once the wrapper and everything in its group are gone, with the
        code unknown (None): the wrapper was killed hard, or we never saw it."""
        reap(self.process.pid)  # our own wrapper must not linger as a zombie
        recorded = exit_code_from_status(self.paths.status)
        if recorded is not None:
            return True, recorded
        if is_alive(self.process) or group_members(self.process.pid):
            return False, None  # (a wrapper killed alone leaves its CLI at work in the group)
        return True, None

    async def terminate(self, grace: float, poll: float) -> None:
        """SIGTERM the group, SIGKILL it after ``grace`` seconds; bounded."""
        ended = lambda: self.exit_status()[0]  # noqa: E731
        stop_group(self.process, signal.SIGTERM)
        if not await poll_until(ended, grace, poll, self._monotonic):
            stop_group(self.process, signal.SIGKILL)
            await poll_until(ended, grace, poll, self._monotonic)
        await sweep_group(self.process, grace, poll, self._monotonic)

    # -- reporting

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

    def outcome(self, exit_code: int | None) -> Outcome:
        judged = self.decoder.outcome(
            exit_code, resumed=self.resumed, stderr_tail=self.stderr_tail()
        )
        if (
            judged.error_code not in _NO_RESULT
            or self.decoder.final_seen
            or self.stop_reason is not None
        ):
            return judged
        signum = signal_from_status(self.paths.status)
        if signum is None:
            return judged
        # Killed by a signal nobody here sent (a stop or a timeout goes through
        # forced_outcome): a crash, which may not happen again (issue 34, CodeBridge's
        # ENGINE_CRASH).
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        return replace(
            judged,
            error_code="E_CLI_CRASHED",
            error_message=f"{self.tool} crashed: killed by {name} before its final result"
            + (f" ({judged.error_message})" if judged.error_message else ""),
        )

    def forced_outcome(self) -> Outcome:
        """How the job ended once it was stopped (``stop_reason``: on request, by a newer
        message, or for time), unless it finished just as it was stopped."""
        code = self.exit_status()[1]
        if self.decoder.final_seen:
            return self.outcome(code)
        if self.stop_reason == "E_CLI_TIMEOUT":
            waited = (
                f" ({self.waited:.0f} s waiting for the owner not counted)" if self.waited else ""
            )
            return self.failure(
                "E_CLI_TIMEOUT",
                f"{self.tool} ran longer than its {self.timeout:g} s timeout{waited} and was "
                "stopped; a project's timeout is set with `discord-watch project add ... "
                "--timeout`",
            )
        if self.stop_reason == "E_INTERRUPTED":
            return self.failure("E_INTERRUPTED", f"{self.tool} was interrupted by a newer message")
        return self.failure("E_STOPPED", f"{self.tool} was stopped on request")

    def failure(self, code: str, message: str) -> Outcome:
        """A failed outcome, with what the CLI reported so far (its session key, usage)."""
        return Outcome(
            ok=False,
            error_code=code,
            error_message=message,
            session_key=self.decoder.session_key,
            final_text=None,
            usage=self.decoder.usage,
            cost_usd=self.decoder.cost_usd,
            exit_code=None,
        )


def stop_group(process: ProcessInfo, signum: signal.Signals) -> None:
    """Signal the job's process group, only while its leader is still ours or members remain
    (then the group id cannot have been reused)."""
    if not is_alive(process) and not group_members(process.pid):
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


async def sweep_group(
    process: ProcessInfo, grace: float, poll: float, monotonic: Callable[[], float]
) -> None:
    """Stop whatever is left in the group after the CLI ended; bounded by ``2 * grace``."""
    if not group_members(process.pid):
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGTERM)
    empty = lambda: not group_members(process.pid)  # noqa: E731
    if not await poll_until(empty, grace, poll, monotonic):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        await poll_until(empty, grace, poll, monotonic)


async def poll_until(
    condition: Callable[[], bool], within: float, poll: float, monotonic: Callable[[], float]
) -> bool:
    """Check ``condition`` every ``poll`` seconds for at most ``within`` seconds; its last value.

    For processes that are not our children (nothing to await), and for process groups.
    """
    limit = monotonic() + within
    while True:
        if condition():
            return True
        if monotonic() >= limit:
            return False
        await asyncio.sleep(poll)
