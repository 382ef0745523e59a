"""What every CLI adapter provides, and the decoding they share.

Theory. An adapter knows one agent CLI: how to call it (:meth:`Adapter.invocation`: argv,
extra environment, per-job files), how to read what it prints (:class:`Decoder`: one JSON
object per stdout line), and how it reports success (:meth:`Decoder.verdict`). Everything else
(processes, timeouts, the journal) is the engine's.

Decoding is tolerant: a line that is not a JSON object, an event type we do not know, or a
known event with an unexpected shape is counted and skipped, never a reason to fail the job.
The raw line is in the job's stdout log anyway (the CLI writes it there directly).

The outcome is judged the way each CLI really reports it (research/real-clis.md): from the
CLI's final event first (Claude ``result.is_error``, Codex ``turn.completed`` /
``turn.failed``, Gemini ``result.status``), then from the exit code. No final event means
E_ADAPTER_MISSING_RESULT (or E_CLI_EXIT_NONZERO when the exit code says more); a new session
that never reported its key is E_ADAPTER_SESSION_KEY_MISSING, since the thread could not be
resumed.

Files. An owner's message may carry files (a screenshot from the phone, a voice message), kept
locally by the daemon. Each adapter hands them to its CLI the way that CLI takes them
(:class:`AttachedFile`; :func:`prompt_with_files` lists them in the prompt): Claude Code gets
the paths and ``--add-dir`` for their directory (it opens images with its Read tool), Codex
gets images with ``--image``, Gemini gets ``@path`` references it reads into the prompt.

MCP registration: each run's agent gets discord-mcp as an MCP server named ``discord``
(:class:`McpRegistration` plus ``DISCORD_THREAD_ID``). Secrets never go into argv: values of
variables named like ``*TOKEN*``, ``*KEY*``, ``*SECRET*``, ``*PASSWORD*`` are passed in a 0600
per-job file or the CLI's environment (:func:`check_no_secrets_in_argv` guards it). The bot
token goes in neither: the server reads it from the file ``DISCORD_MCP_ENV_FILE`` names.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from discord_mcp.errors import RunError
from discord_mcp.runs.engine.streaming import TextStream
from discord_mcp.runs.journal.model import session_key_name
from discord_mcp.runs.journal.views import Tool, ToolCallSummary, Usage
from discord_mcp.runs.offline import Jail
from discord_mcp.runs.restricted import TOOLS_VARIABLE

MCP_SERVER_NAME = "discord"
THREAD_VARIABLE = "DISCORD_THREAD_ID"
ARTIFACTS_VARIABLE = "DISCORD_MCP_RUN_ARTIFACTS"
_SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
_KEEP_TOOL_CALLS = 20
_TEXT_LIMIT = 400
_SUMMARY_LIMIT = 80
_SUMMARY_KEYS = (
    "command",
    "cmd",
    "file_path",
    "path",
    "paths",
    "pattern",
    "query",
    "question",
    "url",
    "prompt",
    "description",
)


@dataclass(frozen=True)
class McpRegistration:
    """How to start discord-mcp as an MCP server for a run's agent.

    ``argv``: the command (e.g. ``[sys.executable, "-m", "discord_mcp"]``); ``env``: the
    variables it needs (channel, state dir, ...). The engine adds
    ``DISCORD_THREAD_ID=<the run's thread>`` so the agent's questions land in that thread.

    The bot token is never one of them: some CLIs hand the server's variables over through
    their own environment, which the agent's shell can print. Pass it by reference instead,
    ``DISCORD_MCP_ENV_FILE`` naming a private file that holds it.
    """

    argv: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.argv:
            raise ValueError("McpRegistration.argv is empty")
        if "DISCORD_BOT_TOKEN" in self.env:
            raise ValueError(
                "McpRegistration.env must not hold DISCORD_BOT_TOKEN: pass it by reference "
                "(DISCORD_MCP_ENV_FILE naming a private file)"
            )


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


@dataclass(frozen=True)
class AttachedFile:
    """A file the owner sent with the job's message, as a local copy."""

    path: Path
    content_type: str | None = None
    voice_message: bool = False

    @property
    def is_image(self) -> bool:
        return (self.content_type or "").startswith("image/")

    def describe(self) -> str:
        kind = self.content_type or "file"
        return f"a voice message, {kind}" if self.voice_message else kind


def prompt_with_files(
    prompt: str, files: Sequence[AttachedFile], show: Callable[[Path], str] = str
) -> str:
    """``prompt`` followed by the list of the owner's files (each shown by ``show``)."""
    if not files:
        return prompt
    lines = ["The owner attached these files (local copies; open them to see them):"]
    lines += [f"- {show(f.path)} ({f.describe()})" for f in files]
    note = "\n".join(lines)
    return f"{prompt.rstrip()}\n\n{note}" if prompt.strip() else note


def file_dirs(files: Sequence[AttachedFile]) -> list[str]:
    """The directories holding the files, each once, in order."""
    return list(dict.fromkeys(str(f.path.parent) for f in files))


@dataclass(frozen=True)
class InvocationRequest:
    """What the engine tells an adapter about the run it is to start."""

    executable: str
    prompt: str
    resume_key: str | None
    default_args: Sequence[str]
    job_dir: Path  # private to this job; deleted when it ends
    shared_dir: Path  # private to the engine; kept across jobs (e.g. Gemini's overlay home)
    thread_id: str
    env: Mapping[str, str]  # the environment the CLI will get, before the adapter's additions
    mcp: McpRegistration | None
    attachments: tuple[AttachedFile, ...] = ()  # the owner's files sent with this job
    approvals: str = "off"  # the project's setting: ask | ask-all | off (needs ``mcp``)
    allow_network: bool = True  # False: keep the CLI off the network (runs/constraints.py)
    artifacts_dir: Path | None = None  # the run folder's artifacts/ (files sent are kept there)
    workdir: Path | None = None  # where the CLI runs (the project's folder)

    def hook_argv(self) -> tuple[str, ...]:
        """How the CLI runs ``discord-mcp`` for a hook: as the MCP server is run, else with
        this Python (local mode registers no server)."""
        return (
            tuple(self.mcp.argv) if self.mcp is not None else (sys.executable, "-m", "discord_mcp")
        )

    stream: bool = False  # the project streams the answer as it is written (issue 24)
    steer: bool = False  # the project hands messages to a running turn (``busy: steer``)
    instructions: str | None = None  # added to the agent's instructions (issue 25: a persona)
    restricted: bool = False  # a stranger's turn: only the chat tools (runs/restricted.py)
    jail: Jail | None = None  # no network: how its commands get a namespace (runs/offline.py)
    mcp_extra: Mapping[str, str] = field(default_factory=dict)  # more for the server, per turn

    def mcp_env(self) -> dict[str, str]:
        """The MCP server's environment: the registration's plus the thread id (and where the
        run keeps the files its agent sends); a restricted turn's server serves only the chat
        tools."""
        base = dict(self.mcp.env) if self.mcp else {}
        run = {ARTIFACTS_VARIABLE: str(self.artifacts_dir)} if self.artifacts_dir else {}
        tools = {TOOLS_VARIABLE: "chat"} if self.restricted else {}
        return {**base, **self.mcp_extra, THREAD_VARIABLE: self.thread_id, **run, **tools}

    def prompt_with_instructions(self, prompt: str) -> str:
        """``prompt`` headed by the instructions, for an engine that has no place of its own
        for them."""
        if not self.instructions:
            return prompt
        return f"{self.instructions.rstrip()}\n\n---\n\n{prompt}"


@dataclass(frozen=True)
class Invocation:
    """How to run the CLI: argv, variables to add to its environment, private files to write.

    ``files`` are written atomically (mode 0600, private directories) before the CLI starts;
    those in the job directory go when the job ends. ``links`` are symlinks (link -> target)
    created when missing.
    """

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    files: Mapping[Path, str] = field(default_factory=dict)
    links: Mapping[Path, Path] = field(default_factory=dict)
    input: str | None = None
    """JSON lines the CLI reads first from its stdin (its prompt), for a CLI started so that it
    takes messages mid-turn (:meth:`Adapter.steer_line`); None: its stdin is /dev/null."""
    programs: Mapping[Path, str] = field(default_factory=dict)
    """Private programs (mode 0700) to write like ``files``: the shell prefix or the ``bash``
    through which a run without network starts its commands (:mod:`discord_mcp.runs.offline`)."""


@dataclass(frozen=True)
class Verdict:
    """The CLI's own report from its final event."""

    ok: bool
    message: str | None = None


@dataclass(frozen=True)
class Outcome:
    """How a job ended, as judged from the CLI's output and exit code."""

    ok: bool
    error_code: str | None
    error_message: str | None
    session_key: str | None
    final_text: str | None
    usage: Usage | None
    cost_usd: float | None
    exit_code: int | None
    resume_failed: bool = False
    resets_at: float | None = None  # a usage limit the CLI reported resets then (epoch s)


class Decoder:
    """Reads one run's stdout lines; subclasses handle their CLI's events.

    Subclasses implement :meth:`handle` (return True when something a status message shows
    changed) and :meth:`verdict`; they may override :meth:`resume_failed` and
    :meth:`explain_exit`.
    """

    tool: ClassVar[Tool]

    def __init__(self) -> None:
        self.session_key: str | None = None
        self.final_seen = False
        self.final_text: str | None = None
        self.last_text: str | None = None
        self.note: str | None = None
        self.usage: Usage | None = None
        self.cost_usd: float | None = None
        self.limit_resets_at: float | None = None  # set when the CLI says its quota is spent
        self.tool_calls: list[ToolCallSummary] = []
        self.tool_call_count = 0
        self.stream = TextStream()  # the answer as it is written, where the CLI shows it
        self.context: tuple[int, int] | None = None  # context window (used, size) tokens
        self.events_seen = 0
        self.unknown_events = 0
        self.non_json_lines = 0
        self.bad_events = 0

    # -- feeding

    def feed(self, line: str) -> bool:
        """Decode one stdout line; True when the visible activity changed. Never raises."""
        text = line.strip()
        if not text:
            return False
        if not text.startswith("{"):
            self.non_json_lines += 1
            return False
        try:
            event = json.loads(text)
        except ValueError:
            self.non_json_lines += 1
            return False
        if not isinstance(event, dict):
            self.non_json_lines += 1
            return False
        self.events_seen += 1
        try:
            return self.handle(event)
        except (AttributeError, KeyError, TypeError, ValueError, IndexError):
            self.bad_events += 1  # a known event with a shape we did not expect
            return False

    def handle(self, event: dict[str, Any]) -> bool:
        raise NotImplementedError

    # -- helpers for subclasses

    def add_tool_call(self, name: str, arguments: Any) -> None:
        self.tool_calls.append(ToolCallSummary(name=str(name), summary=summarize(arguments)))
        del self.tool_calls[:-_KEEP_TOOL_CALLS]
        self.tool_call_count += 1

    def set_text(self, text: Any) -> bool:
        if not isinstance(text, str) or not text.strip():
            return False
        self.last_text = truncate(text.strip(), _TEXT_LIMIT)
        return True

    # -- judging

    def verdict(self) -> Verdict | None:
        """The CLI's final report, or None when its final event has not been seen."""
        raise NotImplementedError

    def unreadable(self) -> bool:
        """Whether the CLI wrote output and not one line of it was an event we understood
        (seed 000's E_ADAPTER_PARSE, issue 34)."""
        understood = self.events_seen - self.unknown_events - self.bad_events
        written = self.non_json_lines + self.events_seen
        return written > 0 and understood <= 0

    def resume_failed(self, exit_code: int | None, stderr_tail: str) -> bool:
        """Whether a resumed run failed because the CLI does not know the session any more."""
        return False

    def explain_exit(self, exit_code: int) -> str:
        """A few words on what a non-zero exit code means for this CLI."""
        if exit_code > 128:
            return f"exit code {exit_code} (killed by signal {exit_code - 128})"
        return f"exit code {exit_code}"

    def outcome(self, exit_code: int | None, *, resumed: bool, stderr_tail: str = "") -> Outcome:
        """Judge the run once the CLI has ended (``exit_code`` None: unknown)."""
        verdict = self.verdict()
        error_code: str | None = None
        message: str | None = None
        resume_failed = resumed and self.resume_failed(exit_code, stderr_tail)
        detail = _last_lines(stderr_tail)
        if resume_failed:
            error_code = "E_RESUME_FAILED"
            message = (
                f"{self.tool} no longer has this thread's session ({detail or 'resume failed'}); "
                "the thread's next message starts a new conversation"
            )
        elif verdict is None:
            if exit_code not in (None, 0):
                error_code = "E_CLI_EXIT_NONZERO"
                message = f"{self.tool} ended with {self.explain_exit(exit_code)}"
            elif self.unreadable():
                error_code = "E_ADAPTER_PARSE"
                message = (
                    f"{self.tool}'s output could not be read: none of its "
                    f"{self.non_json_lines + self.events_seen} lines was an event of its JSON "
                    "stream (another version or output format?)"
                )
            else:
                error_code = "E_ADAPTER_MISSING_RESULT"
                how = "exited" if exit_code == 0 else "ended"
                message = f"{self.tool} {how} without its final result event"
            if detail:
                message += f": {detail}"
        elif not verdict.ok:
            error_code = "E_CLI_ERROR"
            message = f"{self.tool} reported an error: {verdict.message or 'no details'}"
        elif exit_code not in (None, 0):
            error_code = "E_CLI_EXIT_NONZERO"
            message = f"{self.tool} reported success but ended with {self.explain_exit(exit_code)}"
        elif not resumed and self.session_key is None:
            error_code = "E_ADAPTER_SESSION_KEY_MISSING"
            message = (
                f"{self.tool} did not report its {session_key_name(self.tool)}, so this thread "
                "could not be continued; the next message starts a new conversation"
            )
        return Outcome(
            ok=error_code is None,
            error_code=error_code,
            error_message=truncate(message, 1000) if message else None,
            session_key=self.session_key,
            final_text=self.final_text,
            usage=self.usage,
            cost_usd=self.cost_usd,
            exit_code=exit_code,
            resume_failed=resume_failed,
            resets_at=self.limit_resets_at if error_code is not None else None,
        )


class Adapter(Protocol):
    """One agent CLI: how to call it and how to read it."""

    tool: Tool

    def invocation(self, request: InvocationRequest) -> Invocation:
        """The argv (prompt passed safely), environment additions and per-job files."""
        ...

    def decoder(self) -> Decoder:
        """A fresh decoder for one run's stdout."""
        ...

    def steer_line(self, text: str) -> str | None:
        """The stdin line that hands ``text`` to a running turn of a CLI started with
        :attr:`Invocation.input`; None: this CLI cannot take a message mid-turn."""
        ...


# --------------------------------------------------------------------------------------------
# Shared helpers


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def summarize(arguments: Any) -> str:
    """A short, one-line summary of tool arguments for a status message."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return truncate(" ".join(arguments.split()), _SUMMARY_LIMIT)
    if isinstance(arguments, dict):
        for key in _SUMMARY_KEYS:
            value = arguments.get(key)
            if value:
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                return truncate(" ".join(text.split()), _SUMMARY_LIMIT)
    if not arguments:
        return ""
    text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    return truncate(text, _SUMMARY_LIMIT)


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def token_usage(usage: Any, *, cached_key: str, cache_write_key: str | None = None) -> Usage:
    """Token counts from a CLI's usage object (``input_tokens``, ``output_tokens`` and, under
    names of their own, the input read from and written to the prompt cache); the total when
    both counts are known."""
    fields = usage if isinstance(usage, dict) else {}
    inputs = as_int(fields.get("input_tokens"))
    outputs = as_int(fields.get("output_tokens"))
    return Usage(
        input_tokens=inputs,
        output_tokens=outputs,
        cached_input_tokens=as_int(fields.get(cached_key)),
        total_tokens=inputs + outputs if inputs is not None and outputs is not None else None,
        cache_write_tokens=as_int(fields.get(cache_write_key)) if cache_write_key else None,
    )


def _last_lines(text: str, limit: int = 300) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # Skip stack-trace noise ("  3: <unknown>") that Codex prints after its error line.
    useful = [line for line in lines if not re.match(r"^\d+: <unknown>$", line)]
    return truncate(" | ".join(useful[-3:]), limit)


def check_no_secrets_in_argv(argv: Sequence[str], env: Mapping[str, str]) -> None:
    """Refuse an argv that carries the value of a secret-named variable.

    Raises:
        RunError: E_SECRET_IN_ARGV (a bug in an adapter or in the project's default args).
    """
    secrets = [(k, v) for k, v in env.items() if is_secret_name(k) and len(v) >= 6]
    for name, value in secrets:
        if any(value in part for part in argv):
            raise RunError(
                "E_SECRET_IN_ARGV",
                f"the command line would carry the value of {name}, which other users of this "
                "machine can read in the process list; pass it in the environment instead",
            )


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1)
