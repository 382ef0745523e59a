"""The one place where the run engine starts child processes, and how it watches them.

Every agent CLI runs under the job wrapper (:mod:`discord_mcp.runs.processes.wrap`)::

    <python> -I -S .../wrap.py --status <job dir>/status.json --cwd <project> -- <argv...>

(plus ``--input <job dir>/input --until-result <stdout log>`` for a CLI that reads its prompt,
and the messages steered into its turn, from stdin: see :mod:`discord_mcp.runs.processes.wrap`),
started with ``posix_spawn``: an argv list (never a shell), a new session (the wrapper leads a
new process group that holds the CLI and its MCP servers), stdin from /dev/null, stdout and
stderr opened straight onto the job's log files, and exactly the environment given. Nothing
ties the child to the daemon: no pipe, no controlling terminal, no inherited lock, so a CLI
keeps running when the daemon dies, and its output is still on disk for the next one.

A process is identified by pid AND start time (``/proc/<pid>/stat`` field 22, clock ticks
since boot) AND boot id, so a pid the kernel reused for something else is never mistaken for
our CLI, never reattached and never signalled. Zombies count as dead.

``posix_spawn`` instead of ``subprocess.Popen``: a Popen object for a child that outlives the
engine (daemon stop with jobs running, by design) warns at garbage collection and keeps the
child unreaped; here the engine reaps its own children with ``waitpid(WNOHANG)`` while it
watches them, and a later engine watches them through /proc and the status file.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from discord_mcp.errors import SpawnError
from discord_mcp.processes import pid_alive
from discord_mcp.runs.journal.model import ProcessInfo
from discord_mcp.runs.journal.views import Tool
from discord_mcp.runs.offline import Jail, Probe
from discord_mcp.runs.processes import wrap

WRAPPER = Path(wrap.__file__).resolve()
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SpawnSpec:
    """Everything needed to start one job's CLI.

    ``argv[0]`` is a command name (looked up on ``env["PATH"]``) or a path.
    """

    job_id: str
    tool: Tool
    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str]
    stdout_path: Path
    stderr_path: Path
    status_path: Path
    input_dir: Path | None = None
    """The CLI's stdin is fed from this directory (see :mod:`discord_mcp.runs.processes.wrap`);
    None: the CLI's stdin is /dev/null."""


class Spawner(Protocol):
    """Starts a job's CLI; the engine never starts a process any other way.

    Tests inject one that rewrites the argv to a scripted fake CLI and delegates to
    :class:`ProcessSpawner`.
    """

    def spawn(self, spec: SpawnSpec) -> ProcessInfo:
        """Start the CLI (under the wrapper); return the wrapper's identity.

        Raises:
            SpawnError: E_CLI_NOT_FOUND or E_SPAWN_FAILED.
        """
        ...

    def network_jail(self) -> Jail:
        """How this machine keeps a command off the network (:mod:`discord_mcp.runs.offline`),
        probed the first time it is asked.

        Raises:
            RunError: E_NETWORK_NOT_ENFORCEABLE when no network namespace can be made.
        """
        ...


class ProcessSpawner:
    """The real spawner: ``posix_spawn`` of the wrapper, as described in the module doc."""

    def __init__(self, python: str | None = None) -> None:
        self.python = python or sys.executable
        self._probe = Probe(self.python, run_blocking)

    def network_jail(self) -> Jail:
        # A probe of about 30 ms, once per daemon: not worth a thread.
        return self._probe()

    def spawn(self, spec: SpawnSpec) -> ProcessInfo:
        executable = resolve_executable(spec.argv[0], spec.env)
        argv = [
            self.python,
            "-I",
            "-S",
            str(WRAPPER),
            "--status",
            str(spec.status_path),
            "--cwd",
            str(spec.cwd),
            *(
                ("--input", str(spec.input_dir), "--until-result", str(spec.stdout_path))
                if spec.input_dir is not None
                else ()
            ),
            "--",
            executable,
            *spec.argv[1:],
        ]
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, str(spec.stdout_path), flags, 0o600),
            (os.POSIX_SPAWN_OPEN, 2, str(spec.stderr_path), flags, 0o600),
        ]
        env = {k: v for k, v in spec.env.items() if "\0" not in k + v and "=" not in k}
        try:
            pid = os.posix_spawn(self.python, argv, env, file_actions=actions, setsid=True)
        except OSError as exc:
            raise SpawnError(
                "E_SPAWN_FAILED", f"could not start the job wrapper for {spec.argv[0]}: {exc}"
            ) from exc
        return ProcessInfo(pid, process_start_time(pid), boot_id())


@dataclass(frozen=True)
class PipedSpec:
    """An ACP agent to start: it talks on stdin/stdout (pipes to us), its stderr goes to a log.

    Unlike a CLI job it does not outlive the daemon: its protocol is the pipe.
    """

    name: str
    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str]
    stderr_path: Path


async def spawn_piped(spec: PipedSpec, *, limit: int) -> asyncio.subprocess.Process:
    """Start ``spec`` from its argv (never a shell), in a new session (its own process group),
    stdin and stdout as pipes, stderr appended to its log, exactly the environment given.

    Raises:
        SpawnError: E_CLI_NOT_FOUND or E_SPAWN_FAILED.
    """
    executable = resolve_executable(spec.argv[0], spec.env)
    env = {k: v for k, v in spec.env.items() if "\0" not in k + v and "=" not in k}
    fd = os.open(spec.stderr_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        return await asyncio.create_subprocess_exec(
            executable,
            *spec.argv[1:],
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=fd,
            cwd=spec.cwd,
            env=env,
            start_new_session=True,
            limit=limit,
        )
    except OSError as exc:
        raise SpawnError(
            "E_SPAWN_FAILED", f"could not start the ACP agent {spec.name}: {exc}"
        ) from exc
    finally:
        os.close(fd)


async def run_once(argv: list[str], *, within: float) -> tuple[int | None, str]:
    """Run a short helper command to its end (``git init``): argv only, no shell, stdin from
    /dev/null, bounded by ``within`` seconds (then killed); (exit code, its output)."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
    except OSError as exc:
        return None, str(exc)
    try:
        async with asyncio.timeout(within):
            output, _ = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        return None, f"{argv[0]} did not finish within {within:g} s"
    return process.returncode, output.decode("utf-8", errors="replace")


def run_blocking(argv: list[str], within: float) -> tuple[int | None, str]:
    """Run a short probe to its end (argv, no shell, stdin from /dev/null, bounded by
    ``within`` seconds); (exit code or None, its stderr)."""
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=within,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, str(exc)
    return done.returncode, done.stderr.decode("utf-8", errors="replace")


def resolve_executable(command: str, env: Mapping[str, str]) -> str:
    """The full path of ``command`` on ``env["PATH"]`` (a path is checked as it is).

    Raises:
        SpawnError: E_CLI_NOT_FOUND, naming the executable and how to fix it (the PATH that was
            searched goes to the log only: the message is posted in Discord).
    """
    if os.sep in command:
        if os.access(command, os.X_OK) and os.path.isfile(command):
            return command
        found = None
    else:
        found = shutil.which(command, path=env.get("PATH", os.defpath))
    if found is None:
        log.warning(
            "cannot find %r; the PATH searched was %s", command, env.get("PATH", os.defpath)
        )
        if os.sep in command:
            where = f"{command} is not an executable file"
        else:
            where = f"the `{command}` command is not on discord-watch's PATH"
        raise SpawnError(
            "E_CLI_NOT_FOUND",
            f"{where}: install it, or restart discord-watch from a shell where `which "
            f"{os.path.basename(command)}` finds it (a systemd unit or tmux session may have a "
            "shorter PATH than your shell; its log lists the PATH it searched). "
            "`discord-mcp doctor` checks every project's CLIs",
        )
    return found


# --------------------------------------------------------------------------------------------
# Watching processes through /proc


@functools.cache
def boot_id() -> str | None:
    """This boot's id (a pid and start time only identify a process within one boot)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            stat = handle.read()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    return stat.rsplit(")", 1)[1].split()


def process_start_time(pid: int) -> int | None:
    """Field 22 of ``/proc/<pid>/stat`` (start time in clock ticks since boot), if readable."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields and len(fields) > 19 else None


def reap(pid: int) -> int | None:
    """If ``pid`` is our exited child, collect it and return its exit code; else None."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return None
    return os.waitstatus_to_exitcode(status) if done else None


def is_alive(process: ProcessInfo) -> bool:
    """Whether the process is still running and really is the one we started."""
    reap(process.pid)  # our own zombie must not look alive
    fields = _stat_fields(process.pid)
    if fields is None:
        if Path("/proc/self/stat").exists():
            return False
        return pid_alive(process.pid)  # no /proc (not Linux): a pid check is all there is
    if fields[0] in ("Z", "X"):
        return False
    if process.boot_id is not None and boot_id() not in (None, process.boot_id):
        return False
    return process.start_time is None or int(fields[19]) == process.start_time


def group_members(pgid: int) -> list[int]:
    """Live pids in process group ``pgid`` (zombies excluded)."""
    members: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        fields = _stat_fields(int(entry))
        if fields and len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry))
    return members


def read_status(path: Path) -> dict[str, Any] | None:
    """The wrapper's status file, or None if it is missing or half-written."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def signal_from_status(path: Path) -> int | None:
    """The signal that killed the CLI, as the wrapper recorded it (None: it exited, or runs)."""
    status = read_status(path)
    if status is None or status.get("state") != "exited":
        return None
    signum = status.get("signal")
    return signum if isinstance(signum, int) and not isinstance(signum, bool) else None


def exit_code_from_status(path: Path) -> int | None:
    """The CLI's exit code as the wrapper recorded it, or None while it runs (or unknown)."""
    status = read_status(path)
    if status is None or status.get("state") != "exited":
        return None
    code = status.get("exit_code")
    return int(code) if isinstance(code, int) else None
