"""Run the real agent CLIs (Claude Code, Codex, Gemini CLI) headless against a local model server.

Each CLI class owns an isolated HOME/config directory, a working directory, and the MCP
servers registered with it; each :meth:`AgentCli.start` / :meth:`AgentCli.run` is one turn::

    cli = ClaudeCli(root=tmp_path / "claude", model_url=model.base_url,
                    mcp_servers=[McpServer("echo", argv, env)])
    first = cli.run("ask the human")                             # a new session
    second = cli.run("and now?", resume=first.session_id())      # the same session

    running = cli.start("ask the human")   # in the background, e.g. while a tool call blocks
    ...                                    # act as the human
    result = running.wait()

Every run gets stdin from /dev/null and an argv list (never a shell), and runs in its own
process group, which is killed when the wall-clock timeout expires (Codex retries forever when
the model server is unreachable) and again once the CLI has exited (stray MCP servers). The
environment is built from scratch: only PATH, locale and what each CLI needs, so a developer's
real API keys or config never leak in. Telemetry, update checks and retries are switched off.

Binaries come from ``$AGENT_CLIS_BIN`` or ``<repo>/.agent-clis/node_modules/.bin`` (installed by
``scripts/install-agent-clis``); :func:`require_cli` fails the test when one is missing in CI
and under ``scripts/test``, and skips it when pytest runs by hand (tests/support/requirements.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from tests.support.requirements import missing
from tests.support.waiting import pauses

T = TypeVar("T")
CliName = Literal["claude", "codex", "gemini"]
CLI_NAMES: tuple[CliName, ...] = ("claude", "codex", "gemini")

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_BIN_DIR = REPO_ROOT / ".agent-clis" / "node_modules" / ".bin"

# Models the CLIs know by name (an unknown Codex slug is an error; pinning Gemini's model
# skips its router side call).
CLAUDE_MODEL = "claude-opus-5-5"
CODEX_MODEL = "gpt-5.5"
GEMINI_MODEL = "gemini-2.5-flash"

DEFAULT_TIMEOUT = 60.0
# How long an MCP tool call may take before the CLI gives up, for the CLIs that let us set it.
DEFAULT_TOOL_TIMEOUT = 120.0
_KILL_GRACE = 2.0
# How long Claude Code may hold the first turn for its MCP servers to connect.
_MCP_STARTUP_WAIT = 30.0
# argv: <dir> <command> [args...]; replaces itself with the command, running in <dir>.
_CHDIR_EXEC = "import os, sys; os.chdir(sys.argv[1]); os.execvp(sys.argv[2], sys.argv[2:])"
_POLL_SECONDS = 0.02


def bin_dir() -> Path:
    """Where the CLI binaries are: ``$AGENT_CLIS_BIN`` if set, else the repo's install."""
    override = os.environ.get("AGENT_CLIS_BIN")
    return Path(override) if override else DEFAULT_BIN_DIR


def find_cli(name: CliName, directory: Path | None = None) -> Path | None:
    """The executable for ``name`` in ``directory`` (default :func:`bin_dir`), or None."""
    path = (directory or bin_dir()) / name
    return path if path.is_file() and os.access(path, os.X_OK) else None


def require_cli(name: CliName, directory: Path | None = None) -> Path:
    """The executable for ``name``; fails (CI, scripts/test) or skips the test without it.

    See tests/support/requirements.py for when a missing CLI fails rather than skips.
    """
    where = directory or bin_dir()
    path = find_cli(name, directory)
    if path is None:
        from_variable = directory is None and "AGENT_CLIS_BIN" in os.environ
        missing(
            f"agent CLI {name!r} is not installed in {where}"
            + (" (the AGENT_CLIS_BIN directory)" if from_variable else "")
            + "; run scripts/install-agent-clis or point AGENT_CLIS_BIN at its .bin directory"
        )
    if name != "claude" and shutil.which("node") is None:
        missing(f"agent CLI {name!r} needs Node.js (node) on PATH")
    return path


@dataclass(frozen=True)
class McpServer:
    """A stdio MCP server to register with a CLI.

    ``name`` must not contain ``_`` (Gemini CLI splits ``mcp_<server>_<tool>`` on it).
    ``env`` is passed explicitly in the CLI's config: Codex gives servers only a small set of
    inherited variables and Gemini strips inherited ones named like ``*TOKEN*``.
    """

    name: str
    argv: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9-]+", self.name):
            raise ValueError(f"MCP server name {self.name!r}: use letters, digits and '-' only")
        if not self.argv:
            raise ValueError("MCP server argv is empty")


@dataclass(frozen=True)
class ToolCallEvent:
    """A tool call as the CLI reported it on stdout."""

    server: str | None
    tool: str
    arguments: Any
    output: str | None
    ok: bool | None  # None while no result has been reported


@dataclass
class AgentRun:
    """The outcome of one CLI run (one turn)."""

    cli: CliName
    argv: list[str]
    rc: int | None  # None only if the process could not be reaped
    timed_out: bool
    duration: float
    stdout: str
    stderr: str
    events: list[dict[str, Any]]  # stdout lines that are JSON objects
    non_json_lines: list[str]
    mcp_server_names: Sequence[str] = ()

    @property
    def succeeded(self) -> bool:
        """rc 0, not timed out, and the CLI's own terminal event reports success."""
        return self.rc == 0 and not self.timed_out and self.error() is None

    def session_id(self) -> str | None:
        """The id to resume this session with (Claude/Gemini session id, Codex thread id)."""
        for event in self.events:
            if self.cli == "codex" and event.get("type") == "thread.started":
                return str(event["thread_id"])
            if (
                self.cli != "codex"
                and event.get("type") in ("system", "init")
                and event.get("session_id")
            ):
                return str(event["session_id"])
        return None

    def final_text(self) -> str | None:
        """The model's last answer text in this turn, as the CLI reported it."""
        if self.cli == "claude":
            results = [e for e in self.events if e.get("type") == "result"]
            return results[-1].get("result") if results else None
        if self.cli == "codex":
            messages = [
                e["item"].get("text")
                for e in self.events
                if e.get("type") == "item.completed" and e["item"].get("type") == "agent_message"
            ]
            return messages[-1] if messages else None
        # Gemini streams assistant text as deltas; the answer is what follows the last tool use.
        text: list[str] = []
        for event in self.events:
            if event.get("type") in ("tool_use", "tool_result"):
                text = []
            elif event.get("type") == "message" and event.get("role") == "assistant":
                text.append(str(event.get("content", "")))
        return "".join(text) if text else None

    def error(self) -> str | None:
        """The CLI's own error report (from its terminal event), or None if it reported success."""
        if self.cli == "claude":
            results = [e for e in self.events if e.get("type") == "result"]
            if not results:
                return "no result event"
            return str(results[-1].get("result")) if results[-1].get("is_error") else None
        if self.cli == "codex":
            for event in self.events:
                if event.get("type") in ("turn.failed", "error"):
                    return json.dumps(event)
            if not any(e.get("type") == "turn.completed" for e in self.events):
                return "no turn.completed event"
            return None
        results = [e for e in self.events if e.get("type") == "result"]
        if not results:
            return "no result event"
        return None if results[-1].get("status") == "success" else json.dumps(results[-1])

    def tool_calls(self) -> list[ToolCallEvent]:
        """The tool calls the CLI made in this turn, with their results when reported."""
        if self.cli == "claude":
            return self._claude_tool_calls()
        if self.cli == "codex":
            return self._codex_tool_calls()
        return self._gemini_tool_calls()

    def _claude_tool_calls(self) -> list[ToolCallEvent]:
        calls: dict[str, dict[str, Any]] = {}
        outputs: dict[str, tuple[str, bool]] = {}
        for event in self.events:
            content = (event.get("message") or {}).get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if event.get("type") == "assistant" and block.get("type") == "tool_use":
                    calls[block["id"]] = block
                elif event.get("type") == "user" and block.get("type") == "tool_result":
                    text = _join_text(block.get("content"))
                    outputs[block["tool_use_id"]] = (text, not block.get("is_error"))
        result = []
        for call_id, block in calls.items():
            server, tool = _split_name(str(block["name"]), "mcp__", "__", self.mcp_server_names)
            output, ok = outputs.get(call_id, (None, None))
            result.append(ToolCallEvent(server, tool, block.get("input"), output, ok))
        return result

    def _codex_tool_calls(self) -> list[ToolCallEvent]:
        items: dict[str, dict[str, Any]] = {}
        for event in self.events:
            item = event.get("item") or {}
            if item.get("type") == "mcp_tool_call":
                items[str(item.get("id"))] = item  # item.completed replaces item.started
        result = []
        for item in items.values():
            done = item.get("status") in ("completed", "failed")
            output = _join_text((item.get("result") or {}).get("content")) if done else None
            if item.get("error"):
                output = json.dumps(item["error"])
            ok = item.get("status") == "completed" if done else None
            result.append(
                ToolCallEvent(item.get("server"), item["tool"], item.get("arguments"), output, ok)
            )
        return result

    def _gemini_tool_calls(self) -> list[ToolCallEvent]:
        calls: dict[str, dict[str, Any]] = {}
        outputs: dict[str, tuple[str, bool]] = {}
        for event in self.events:
            if event.get("type") == "tool_use":
                calls[str(event.get("tool_id"))] = event
            elif event.get("type") == "tool_result":
                output = event.get("output")
                if output is None and event.get("error"):
                    output = json.dumps(event["error"])
                outputs[str(event.get("tool_id"))] = (
                    str(output),
                    event.get("status") == "success",
                )
        result = []
        for call_id, event in calls.items():
            server, tool = _split_name(str(event["tool_name"]), "mcp_", "_", self.mcp_server_names)
            output, ok = outputs.get(call_id, (None, None))
            result.append(ToolCallEvent(server, tool, event.get("parameters"), output, ok))
        return result

    def describe(self) -> str:
        """A readable summary for assertion messages: argv, rc, events, stderr tail."""
        lines = [
            f"{self.cli}: rc={self.rc} timed_out={self.timed_out} {self.duration:.1f}s",
            f"argv: {self.argv}",
            "stdout events:",
            *(f"  {json.dumps(e)[:400]}" for e in self.events),
        ]
        if self.non_json_lines:
            lines += ["non-JSON stdout:", *(f"  {line[:400]}" for line in self.non_json_lines)]
        lines += ["stderr (tail):", *(f"  {line}" for line in self.stderr.splitlines()[-30:])]
        return "\n".join(lines)


def _join_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else json.dumps(content)


def _split_name(
    name: str, prefix: str, separator: str, servers: Sequence[str]
) -> tuple[str | None, str]:
    """Split a CLI's qualified tool name (``mcp__echo__ask`` / ``mcp_echo_ask``) into parts."""
    for server in servers:
        qualified = f"{prefix}{server}{separator}"
        if name.startswith(qualified):
            return server, name[len(qualified) :]
    return None, name


def _parse_stdout(stdout: str) -> tuple[list[dict[str, Any]], list[str]]:
    events: list[dict[str, Any]] = []
    other: list[str] = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            other.append(line)
            continue
        if isinstance(value, dict):
            events.append(value)
        else:
            other.append(line)
    return events, other


class AgentRunFailed(AssertionError):
    """A run did not get where the test expected; the message includes the CLI's output."""

    def __init__(self, message: str, run: AgentRun) -> None:
        super().__init__(f"{message}\n{run.describe()}")
        self.run = run


class RunningAgent:
    """A CLI run in progress; :meth:`wait` for its :class:`AgentRun`.

    The wall-clock timeout counts from the start; :meth:`wait` kills the process group when it
    expires. Call :meth:`kill` (or :meth:`wait`) before the test ends; :class:`AgentCli` does so
    for every run it started in :meth:`AgentCli.close`.
    """

    def __init__(
        self,
        cli: AgentCli,
        argv: list[str],
        env: Mapping[str, str],
        run_dir: Path,
        timeout: float,
    ) -> None:
        self.cli = cli
        self.argv = argv
        self.stdout_path = run_dir / "stdout.jsonl"
        self.stderr_path = run_dir / "stderr.txt"
        self.started = time.monotonic()
        self.deadline = self.started + timeout
        self._result: AgentRun | None = None
        self._timed_out = False
        # Output goes to files, not pipes: nothing can block on a full pipe, and a test can
        # read what the CLI printed so far while it runs.
        with self.stdout_path.open("wb") as out, self.stderr_path.open("wb") as err:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                cwd=cli.workdir,
                env=dict(env),
                start_new_session=True,  # its own process group, so a kill takes the MCP servers
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def running(self) -> bool:
        return self._result is None and self.process.poll() is None

    def events_so_far(self) -> list[dict[str, Any]]:
        """The complete JSON lines the CLI has printed so far."""
        text = self.stdout_path.read_text(encoding="utf-8", errors="replace")
        complete = text[: text.rfind("\n") + 1]
        return _parse_stdout(complete)[0]

    def wait_for(self, condition: Callable[[], T | None], *, timeout: float, what: str) -> T:
        """Poll ``condition`` while the CLI runs; return its first truthy value.

        For "the CLI is now blocked in the tool call" and similar. Fails at once with the CLI's
        output if it exits first, and after ``timeout`` seconds kills it and fails the same
        way, so a broken run reports why instead of just timing out.
        """
        deadline = time.monotonic() + timeout
        waits = pauses()
        while True:
            value = condition()
            if value:
                return value
            if self.process.poll() is not None:
                raise AgentRunFailed(f"{self.cli.name} exited before {what}", self._finish())
            if time.monotonic() >= deadline:
                raise AgentRunFailed(
                    f"no {what} within {timeout:g}s; killed {self.cli.name}", self.kill()
                )
            time.sleep(next(waits))

    def wait(self, timeout: float | None = None) -> AgentRun:
        """Wait for the CLI to exit, at most until the run's deadline, and return the result.

        ``timeout`` (seconds from now) may shorten the wait; if it expires before the deadline
        the CLI is killed all the same, so a test never leaves one behind.
        """
        if self._result is not None:
            return self._result
        deadline = self.deadline
        if timeout is not None:
            deadline = min(deadline, time.monotonic() + timeout)
        try:
            self.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self._timed_out = True
        return self._finish()

    def kill(self) -> AgentRun:
        """Stop the CLI now (if still running) and return what it produced."""
        if self._result is None and self.process.poll() is None:
            self._timed_out = True
        return self._finish()

    def _finish(self) -> AgentRun:
        if self._result is not None:
            return self._result
        _kill_group(self.process)
        duration = time.monotonic() - self.started
        stdout = self.stdout_path.read_text(encoding="utf-8", errors="replace")
        stderr = self.stderr_path.read_text(encoding="utf-8", errors="replace")
        events, other = _parse_stdout(stdout)
        self._result = AgentRun(
            cli=self.cli.name,
            argv=self.argv,
            rc=self.process.returncode,
            timed_out=self._timed_out,
            duration=duration,
            stdout=stdout,
            stderr=stderr,
            events=events,
            non_json_lines=other,
            mcp_server_names=[s.name for s in self.cli.mcp_servers],
        )
        return self._result


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Stop the CLI and everything in its process group, politely first.

    The group id is the CLI's pid (``start_new_session``). A CLI still running gets SIGTERM.
    Its MCP servers see stdin close when it exits and get a grace period to shut down cleanly
    (state they persist on the way out is what some tests check); whatever is left in the
    group after that is SIGKILLed.
    """
    group = process.pid
    deadline = time.monotonic() + _KILL_GRACE
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=max(0.0, deadline - time.monotonic()))
    while _live_group_members(group) and time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)
    if _live_group_members(group):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    # Unkillable (D state) even then: rc stays None.
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=_KILL_GRACE)


def _live_group_members(group: int) -> list[int]:
    """Pids in process group ``group`` that are alive (zombies do not count)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue  # exited while we looked
        # "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses.
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == group and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


class AgentCli(ABC):
    """One agent CLI with its own isolated state; each :meth:`run` is one headless turn.

    ``root`` gets ``home/`` (HOME and the CLI's config), ``work/`` (the cwd, unless ``workdir``
    is given) and ``runs/<n>/`` (stdout and stderr of each run). Keep the same instance for a
    resumed turn: the session lives in its home (and, for Gemini, belongs to its cwd).
    """

    name: ClassVar[CliName]

    def __init__(
        self,
        *,
        root: Path,
        model_url: str,
        mcp_servers: Sequence[McpServer] = (),
        allowed_tools: Sequence[str] | None = None,
        bin_directory: Path | None = None,
        workdir: Path | None = None,
        proxy_url: str | None = None,
        extra_env: Mapping[str, str] | None = None,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
        extra_args: Sequence[str] = (),
    ) -> None:
        """Write the CLI's config; nothing runs yet.

        ``model_url`` is the model server's base URL (``http://127.0.0.1:<port>``).
        ``allowed_tools`` are bare MCP tool names to pre-approve (default: every tool is
        allowed where the CLI can say so per server, see each subclass). ``proxy_url``, if
        given, becomes HTTP(S)_PROXY for everything but 127.0.0.1, to catch internet traffic.
        ``extra_args`` are added to every run's command line, before the prompt (Codex: right
        after ``exec``).
        """
        self.executable = require_cli(self.name, bin_directory)
        self.root = root
        self.home = root / "home"
        self.workdir = workdir or root / "work"
        self.model_url = model_url.rstrip("/")
        self.mcp_servers = list(mcp_servers)
        self.allowed_tools = list(allowed_tools) if allowed_tools is not None else None
        self.proxy_url = proxy_url
        self.extra_env = dict(extra_env or {})
        self.tool_timeout = tool_timeout
        self.extra_args = list(extra_args)
        self._runs: list[RunningAgent] = []
        for directory in (self.home, self.workdir, root / "tmp"):
            directory.mkdir(parents=True, exist_ok=True)
        self._write_config()

    # -- what each CLI defines

    @abstractmethod
    def _write_config(self) -> None: ...

    @abstractmethod
    def _argv(self, prompt: str, resume: str | None) -> list[str]: ...

    @abstractmethod
    def _cli_env(self) -> dict[str, str]: ...

    # -- running

    def env(self) -> dict[str, str]:
        """The complete environment a run gets (built from scratch, see the module doc)."""
        env = {
            "PATH": os.pathsep.join([str(self.executable.parent), os.environ.get("PATH", "")]),
            "HOME": str(self.home),
            "TMPDIR": str(self.root / "tmp"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "NO_COLOR": "1",
            # The model server is local: never route it through a proxy.
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
        for name in ("LC_ALL", "LC_CTYPE", "USER", "LOGNAME", "TZ"):
            if name in os.environ:
                env[name] = os.environ[name]
        if self.proxy_url:
            for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
                env[name] = env[name.lower()] = self.proxy_url
        env.update(self._cli_env())
        env.update(self.extra_env)
        return env

    def start(
        self, prompt: str, *, resume: str | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> RunningAgent:
        """Start one turn in the background; ``resume`` continues that session id."""
        run_dir = self.root / "runs" / str(len(self._runs) + 1)
        run_dir.mkdir(parents=True, exist_ok=True)
        running = RunningAgent(self, self._argv(prompt, resume), self.env(), run_dir, timeout)
        self._runs.append(running)
        return running

    def run(
        self, prompt: str, *, resume: str | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> AgentRun:
        """Run one turn to completion (or until ``timeout``) and return the result."""
        return self.start(prompt, resume=resume, timeout=timeout).wait()

    def close(self) -> None:
        """Kill every run of this CLI that is still going (for fixture teardown)."""
        for running in self._runs:
            running.kill()


class ClaudeCli(AgentCli):
    """Claude Code: ``claude -p --verbose --output-format stream-json``.

    MCP servers go in a ``--mcp-config`` file with ``--strict-mcp-config``; tools are
    pre-approved with ``--allowedTools mcp__<server>__<tool>`` (``allowed_tools``, or the whole
    server ``mcp__<server>`` when it is None). ``ENABLE_TOOL_SEARCH=false`` offers MCP tools
    directly instead of behind ToolSearch.
    """

    name = "claude"

    @property
    def mcp_config_path(self) -> Path:
        return self.home / "mcp-config.json"

    def _write_config(self) -> None:
        servers: dict[str, Any] = {}
        for server in self.mcp_servers:
            argv = list(server.argv)
            if server.cwd is not None:
                # Claude Code 2.1.330 silently ignores "cwd" in --mcp-config: start the
                # server through a tiny chdir-then-exec shim instead (no shell involved).
                argv = [sys.executable, "-c", _CHDIR_EXEC, str(server.cwd), *argv]
            servers[server.name] = {
                "type": "stdio",
                "command": argv[0],
                "args": argv[1:],
                "env": dict(server.env),
            }
        _write_json(self.mcp_config_path, {"mcpServers": servers})

    def _argv(self, prompt: str, resume: str | None) -> list[str]:
        argv = [str(self.executable), "-p", "--verbose", "--output-format", "stream-json"]
        argv += ["--model", CLAUDE_MODEL]
        argv += ["--mcp-config", str(self.mcp_config_path), "--strict-mcp-config"]
        allowed = [
            f"mcp__{server.name}__{tool}"
            if self.allowed_tools is not None
            else f"mcp__{server.name}"
            for server in self.mcp_servers
            for tool in (self.allowed_tools if self.allowed_tools is not None else [""])
        ]
        if allowed:
            argv += ["--allowedTools", *allowed]
        if resume:
            argv += ["--resume", resume]
        # --allowedTools and --mcp-config take several values: without "--" they would
        # swallow the prompt.
        return [*argv, *self.extra_args, "--", prompt]

    def _cli_env(self) -> dict[str, str]:
        return {
            "CLAUDE_CONFIG_DIR": str(self.home / ".claude"),
            "ANTHROPIC_BASE_URL": self.model_url,
            "ANTHROPIC_API_KEY": "sk-ant-test-harness",
            # No traffic to Anthropic besides the model API (checked with a refusing proxy).
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_BUG_COMMAND": "1",
            "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
            # Default is 10 retries with backoff, for 401 too: a broken test would stall minutes.
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "ENABLE_TOOL_SEARCH": "false",
            "MCP_TOOL_TIMEOUT": str(int(self.tool_timeout * 1000)),
            # MCP servers from the user's config (what `discord-mcp install` writes) connect in
            # the background in -p mode: without a startup wait, a server still starting (a
            # loaded machine) is "pending" and its tools are missing from the first model
            # request. --mcp-config servers are waited for, these only with this variable.
            "CLAUDE_CODE_MCP_STARTUP_WAIT_MS": str(int(_MCP_STARTUP_WAIT * 1000)),
        }


class CodexCli(AgentCli):
    """Codex: ``codex exec --json --skip-git-repo-check`` with a ``$CODEX_HOME/config.toml``.

    The config points a ``responses`` provider at the model server with retries off, turns
    off update checks, analytics, feedback and the features that call GitHub/ChatGPT, and
    registers each MCP server with ``default_tools_approval_mode = "approve"`` (without it
    ``exec`` refuses MCP calls) and ``required = true`` (so the first turn waits for it).
    """

    name = "codex"
    _KEY_VARIABLE = "TEST_MODEL_API_KEY"

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    def _write_config(self) -> None:
        lines = [
            f"model = {_toml(CODEX_MODEL)}",
            'model_provider = "harness"',
            "check_for_update_on_startup = false",
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[feedback]",
            "enabled = false",
            "",
            # Without these Codex contacts github.com, api.github.com and chatgpt.com.
            "[features]",
            "plugins = false",
            "apps = false",
            "remote_plugin = false",
            "plugin_sharing = false",
            "",
            "[model_providers.harness]",
            'name = "Test harness model server"',
            f"base_url = {_toml(self.model_url + '/v1')}",
            f"env_key = {_toml(self._KEY_VARIABLE)}",
            'wire_api = "responses"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
        ]
        for server in self.mcp_servers:
            table = f"mcp_servers.{_toml(server.name)}"
            lines += [
                "",
                f"[{table}]",
                f"command = {_toml(server.argv[0])}",
                f"args = [{', '.join(_toml(a) for a in server.argv[1:])}]",
                'default_tools_approval_mode = "approve"',
                # Without it, exec starts the turn without waiting for a slow-starting server:
                # its tools are then missing from the first tool search (seen ~1 run in 4).
                "required = true",
                f"tool_timeout_sec = {self.tool_timeout:g}",
                "startup_timeout_sec = 30",
            ]
            if server.cwd is not None:
                lines.append(f"cwd = {_toml(str(server.cwd))}")
            if self.allowed_tools is not None:
                lines.append(f"enabled_tools = [{', '.join(map(_toml, self.allowed_tools))}]")
            lines += ["", f"[{table}.env]"]
            lines += [f"{_toml(k)} = {_toml(v)}" for k, v in server.env.items()]
        self.codex_home.mkdir(parents=True, exist_ok=True)
        (self.codex_home / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _argv(self, prompt: str, resume: str | None) -> list[str]:
        argv = [str(self.executable), "exec", *self.extra_args]
        if resume:
            argv += ["resume"]
        argv += ["--json", "--skip-git-repo-check"]
        if resume:
            argv += [resume]
        return [*argv, "--", prompt]

    def _cli_env(self) -> dict[str, str]:
        return {"CODEX_HOME": str(self.codex_home), self._KEY_VARIABLE: "sk-test-harness"}


class GeminiCli(AgentCli):
    """Gemini CLI: ``gemini --output-format stream-json -m <model> --prompt=<prompt>``.

    ``~/.gemini/settings.json`` selects API-key auth (otherwise a custom base URL fails with
    exit 41), turns off auto-update, usage statistics and telemetry, allows one attempt per
    request, and registers each MCP server with ``trust: true`` (untrusted servers' tools are
    not offered at all in headless mode). The model is pinned so there is no router call.
    """

    name = "gemini"

    def _write_config(self) -> None:
        servers: dict[str, Any] = {}
        for server in self.mcp_servers:
            entry: dict[str, Any] = {
                "command": server.argv[0],
                "args": list(server.argv[1:]),
                "env": dict(server.env),
                "timeout": int(self.tool_timeout * 1000),
                "trust": True,
            }
            if server.cwd is not None:
                entry["cwd"] = str(server.cwd)
            if self.allowed_tools is not None:
                entry["includeTools"] = list(self.allowed_tools)
            servers[server.name] = entry
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {
                "enableAutoUpdate": False,
                "enableAutoUpdateNotification": False,
                "maxAttempts": 1,
                "retryFetchErrors": False,
            },
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "mcpServers": servers,
        }
        _write_json(self.home / ".gemini" / "settings.json", settings)

    def _argv(self, prompt: str, resume: str | None) -> list[str]:
        argv = [str(self.executable), "--output-format", "stream-json", "-m", GEMINI_MODEL]
        if resume:
            argv += ["--resume", resume]
        # "=" keeps a prompt that starts with "-" from being read as an option.
        return [*argv, *self.extra_args, f"--prompt={prompt}"]

    def _cli_env(self) -> dict[str, str]:
        return {
            "GOOGLE_GEMINI_BASE_URL": self.model_url,
            "GEMINI_API_KEY": "gemini-test-harness",
            # Headless runs in an untrusted folder exit 55.
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            # Gemini CLI starts Node again with a larger heap (half the machine's memory) and
            # sets this for that second start, which then runs the CLI: the tests run it as the
            # second start does, without the first (~0.7 s of CPU a run, 57 runs a suite).
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }


# What the ``agent_cli`` fixture (tests/e2e/conftest.py) provides:
# ``make(name, mcp_servers=(), **AgentCli options) -> AgentCli``.
AgentCliFactory = Callable[..., AgentCli]

CLI_CLASSES: dict[CliName, type[AgentCli]] = {
    "claude": ClaudeCli,
    "codex": CodexCli,
    "gemini": GeminiCli,
}


def _toml(value: str) -> str:
    # A JSON string with non-ASCII kept literally is a valid TOML basic string (JSON's
    # \uXXXX escapes are TOML's too; only astral-plane escapes would differ).
    return json.dumps(value, ensure_ascii=False)


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
