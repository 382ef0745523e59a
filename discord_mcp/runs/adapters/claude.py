"""Claude Code: ``claude -p --verbose --output-format stream-json``.

New session::

    claude -p --verbose --output-format stream-json --mcp-config <job>/mcp.json
           --allowedTools mcp__discord <project args> -- <prompt>

Files the owner sent: their paths are listed in the prompt (Claude opens images with its Read
tool) and their directory is added with ``--add-dir``, so reading them needs no permission.

Resume: the same with ``--resume <session_id>`` (stable across resumes; works from any cwd).
``--mcp-config`` and ``--allowedTools`` take several values and would swallow a prompt after
them, hence the ``--``. The per-job MCP config (mode 0600: it holds the bot token) adds the
``discord`` server on top of the user's own servers (no ``--strict-mcp-config``), and
``--allowedTools mcp__discord`` pre-approves its tools, so a headless run can ask questions.
With approvals on (the project's ``ask``, the default, or ``ask-all``),
``--permission-prompt-tool mcp__discord__approve`` sends every permission prompt to the owner
(tools Claude Code's rules allow, such as reads, run without asking). A ``PreToolUse`` hook
(``--settings``, a per-job file) sends more there: in ``ask``, a read that names a secret
(``Read`` of a ``.env``: :mod:`discord_mcp.hooks.reads`; the hook runs for the read tools
alone); in ``ask-all`` (``--ask-all``), every other tool, so all reads go to the owner. The hook
blocks the call when it fails, and so does Claude Code when the hook cannot even start or times
out (``onFailure: "block"``).

A persona (issue 25) goes with ``--append-system-prompt`` (and ``--system-prompt-snapshot
off``, so an edited persona reaches a kept session). A stranger's turn is locked down as
:mod:`discord_mcp.runs.restricted` says: no built-in tools, only our server's chat tools, no
permission prompt tool, no hooks, none of the project's arguments but its model.

Without network (:mod:`discord_mcp.runs.constraints`): every command the agent starts runs in
a network namespace of its own, through ``CLAUDE_CODE_SHELL_PREFIX`` (set in the environment
and in the per-job settings file's ``env``; :mod:`discord_mcp.runs.offline`), our MCP server
and approval hook excepted; ``--disallowedTools`` removes the tools that reach the network or
run programs from the CLI's own process (``WebFetch``, ``WebSearch``, ``Monitor``,
``EnterWorktree``, ``ExitWorktree``, ``Workflow``), ``--strict-mcp-config`` the user's MCP
servers, and a ``PreToolUse`` hook, ``discord-mcp hook network``, in the same settings file,
refuses at once, with a reason, the shell commands it can tell use the network.

Steering (the project's ``busy: steer``): ``--input-format stream-json`` and no prompt in argv; the
prompt is the first line of the CLI's stdin, a user message as the Agent SDK writes it (``{"type":
"user", "session_id": "", "message": {"role": "user", "content": [{"type": "text", "text": ...}]},
"parent_tool_use_id": null}``), and every message steered into the job is one more such line (the
job wrapper feeds them: :mod:`discord_mcp.runs.processes.wrap`). Claude Code 2.1.330 reads stdin
while it works: a message that arrives during a turn reaches the model at its next step, beside the
next tool result ("The user sent a new message while you were working: ..."), and one that arrives
after the model's last step runs as one more turn of the same session, in the same process, with its
own ``result`` event. The wrapper closes stdin at the first ``result``; the CLI then answers what it
already read and exits.

Events: ``system/init`` (``session_id``, MCP server status), ``assistant`` (text and
``tool_use`` blocks, one block per event), ``user`` (tool results), ``system/api_retry``,
``system/permission_denied``, ``rate_limit_event`` (a ``rejected`` one means the quota is spent
until ``resetsAt``), and the turn's ``result`` (a steered job may run more than one turn: its
answer is every turn's, its usage their sum, its cost the last, which counts them all). Success
is ``result.is_error == false`` in every turn; ``subtype`` says "success" even for API errors, so
it is not used.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.hooks import guard
from discord_mcp.hooks.reads import CLAUDE_READS
from discord_mcp.runs import offline, restricted
from discord_mcp.runs.adapters.base import (
    MCP_SERVER_NAME,
    Decoder,
    Invocation,
    InvocationRequest,
    Verdict,
    file_dirs,
    prompt_with_files,
    token_usage,
)
from discord_mcp.runs.constraints import claude_network_check
from discord_mcp.runs.journal.views import Tool, Usage


class ClaudeDecoder(Decoder):
    tool = "claude"

    def __init__(self) -> None:
        super().__init__()
        self._results: list[dict[str, Any]] = []

    def handle(self, event: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind == "system":
            return self._system(event)
        if kind == "assistant":
            changed = False
            for block in event["message"].get("content") or []:
                if block.get("type") == "text":
                    changed = self.set_text(block.get("text")) or changed
                elif block.get("type") == "tool_use":
                    self.add_tool_call(str(block.get("name")), block.get("input"))
                    changed = True
            return changed
        if kind == "result":
            return self._turn_result(event)
        if kind == "rate_limit_event":
            info = event.get("rate_limit_info") or {}
            resets = info.get("resetsAt")
            if info.get("status") == "rejected" and isinstance(resets, int | float):
                self.limit_resets_at = float(resets)
                self.note = f"usage limit reached ({info.get('rateLimitType') or 'limit'})"
                return True
            return False
        if kind == "stream_event":  # --include-partial-messages: the answer as it is written
            return self._partial(event.get("event") or {})
        if kind == "user":
            return False
        self.unknown_events += 1
        return False

    def _turn_result(self, event: dict[str, Any]) -> bool:
        self._results.append(event)
        self.final_seen = True
        if isinstance(event.get("session_id"), str) and self.session_key is None:
            self.session_key = event["session_id"]
        result = event.get("result")
        text = result if isinstance(result, str) else self.last_text
        if len(self._results) == 1 or self.final_text is None:
            self.final_text = text
        elif text:
            self.final_text = f"{self.final_text.rstrip()}\n\n{text}"
        usage = token_usage(
            event.get("usage"),
            cached_key="cache_read_input_tokens",
            cache_write_key="cache_creation_input_tokens",
        )
        self.usage = usage if self.usage is None else _added(self.usage, usage)
        cost = event.get("total_cost_usd")
        self.cost_usd = float(cost) if isinstance(cost, int | float) else None
        return True

    def _partial(self, event: dict[str, Any]) -> bool:
        what = event.get("type")
        if what == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                self.stream.add(delta["text"])
        elif what == "message_stop":
            self.stream.end_message()
        return False

    def _system(self, event: dict[str, Any]) -> bool:
        subtype = event.get("subtype")
        if subtype == "init":
            if isinstance(event.get("session_id"), str):
                self.session_key = event["session_id"]
            servers = event.get("mcp_servers") or []
            broken = [
                f"{s.get('name')}: {s.get('status')}"
                for s in servers
                if s.get("name") == MCP_SERVER_NAME and s.get("status") != "connected"
            ]
            if broken:
                self.note = f"MCP server {', '.join(broken)}"
            return True
        if subtype == "api_retry":
            status = event.get("error_status")
            self.note = (
                f"API retry {event.get('attempt')}/{event.get('max_retries')}"
                f" ({f'HTTP {status}' if status else event.get('error', 'error')})"
            )
            return True
        if subtype == "permission_denied":
            self.note = f"permission denied for {event.get('tool_name')}"
            return True
        if subtype != "status":
            self.unknown_events += 1
        return False

    def verdict(self) -> Verdict | None:
        if not self._results:
            return None
        failed = [r for r in self._results if r.get("is_error")]
        if not failed:
            return Verdict(ok=True)
        first = failed[0]
        message = first.get("result")
        errors = first.get("errors")
        if not isinstance(message, str) and isinstance(errors, list) and errors:
            message = "; ".join(str(e) for e in errors)
        status = first.get("api_error_status")
        if status and isinstance(message, str):
            message = f"{message} (HTTP {status})"
        return Verdict(ok=False, message=message if isinstance(message, str) else None)

    def resume_failed(self, exit_code: int | None, stderr_tail: str) -> bool:
        errors = [e for r in self._results for e in r.get("errors") or []]
        text = " ".join(str(e) for e in errors) + " " + stderr_tail
        return "No conversation found" in text


def _added(one: Usage, other: Usage) -> Usage:
    """Two turns' token counts together (a count neither reported stays unknown)."""

    def plus(a: int | None, b: int | None) -> int | None:
        return None if a is None and b is None else (a or 0) + (b or 0)

    return Usage(
        input_tokens=plus(one.input_tokens, other.input_tokens),
        output_tokens=plus(one.output_tokens, other.output_tokens),
        cached_input_tokens=plus(one.cached_input_tokens, other.cached_input_tokens),
        total_tokens=plus(one.total_tokens, other.total_tokens),
        cache_write_tokens=plus(one.cache_write_tokens, other.cache_write_tokens),
    )


def user_message(text: str) -> str:
    """``text`` as one line of Claude Code's stream-json input: a user message."""
    message = {
        "type": "user",
        "session_id": "",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
        "parent_tool_use_id": None,
    }
    return json.dumps(message, ensure_ascii=False) + "\n"


HOOK_TIMEOUT_S = 30


def _hook_command(server_argv: Sequence[str], *args: str) -> str:
    """The shell command of ``discord-mcp hook ARGS``, wrapped to fail closed when killed."""
    return guard.command([*server_argv, "hook", *args, "--timeout", str(HOOK_TIMEOUT_S)])


def _hook_group(command: str, matcher: str = "*") -> dict[str, Any]:
    """A ``PreToolUse`` group running ``command`` (:func:`_hook_command`) for the tools
    ``matcher`` names (every one by default)."""
    # onFailure "block" (Claude Code 2.1.330): a hook that cannot start, fails or times out
    # blocks the call instead of letting it run unasked; the wrapper (guard.command) makes a
    # killed hook exit 2 as well, the same rule as every other guard.
    hook = {
        "type": "command",
        "command": command,
        "timeout": HOOK_TIMEOUT_S,
        "onFailure": "block",
    }
    return {"matcher": matcher, "hooks": [hook]}


class ClaudeAdapter:
    tool: Tool = "claude"

    def invocation(self, request: InvocationRequest) -> Invocation:
        argv = [request.executable, "-p", "--verbose", "--output-format", "stream-json"]
        if request.steer:
            argv += ["--input-format", "stream-json"]
        if request.stream:
            argv.append("--include-partial-messages")
        if request.resume_key:
            argv += ["--resume", request.resume_key]
        if request.instructions:
            # Rendered afresh for every turn, so an edited persona file changes the next reply
            # of a kept session too (the snapshot would repeat the first turn's text).
            argv += ["--append-system-prompt", request.instructions]
            argv += ["--system-prompt-snapshot", "off"]
        files = {}
        if request.mcp is not None:
            config_path = request.job_dir / "claude-mcp.json"
            server = {
                "type": "stdio",
                "command": request.mcp.argv[0],
                "args": list(request.mcp.argv[1:]),
                "env": request.mcp_env(),
            }
            files[config_path] = json.dumps({"mcpServers": {MCP_SERVER_NAME: server}}, indent=1)
            argv += ["--mcp-config", str(config_path)]
            if request.restricted:
                argv += restricted.claude_args()
            else:
                argv += ["--allowedTools", f"mcp__{MCP_SERVER_NAME}"]
            if request.approvals != "off" and not request.restricted:
                argv += ["--permission-prompt-tool", f"mcp__{MCP_SERVER_NAME}__approve"]
        elif request.restricted:
            raise RunError(
                "E_RESTRICTED_NOT_ENFORCEABLE",
                "a stranger's turn needs the discord server for its chat tools, and this run "
                "has none",
            )
        groups = []
        # What runs outside a run's network namespace, because it is ours: our MCP server
        # (its words) and our approval hook (its exact shell command).
        ours: list[list[str]] = []
        ours_code: list[str] = []
        if request.mcp is not None:
            ours.append(list(request.mcp.argv))
        if request.mcp is not None and request.approvals != "off" and not request.restricted:
            if request.approvals == "ask-all":
                command = _hook_command(request.mcp.argv, "pre-tool-use", "--ask-all")
                groups.append(_hook_group(command))
            else:  # reads of secrets ask too (Claude Code lets reads run unasked)
                command = _hook_command(request.mcp.argv, "pre-tool-use")
                groups.append(_hook_group(command, matcher="|".join(sorted(CLAUDE_READS))))
            ours_code.append(command)
        settings: dict[str, Any] = {}
        env: dict[str, str] = {}
        programs: dict[Path, str] = {}
        if not request.allow_network and not request.restricted:
            claude_network_check(request.default_args)
            jail = offline.required(request.jail)
            argv += ["--strict-mcp-config", "--disallowedTools", *offline.CLAUDE_DENIED_TOOLS]
            # The early, explained refusal; the namespace is what keeps the promise.
            network = _hook_command(request.hook_argv(), "network", "--client", "claude")
            groups.append(_hook_group(network))
            wiring = offline.claude(
                jail, request.job_dir, request.env.get("PATH", ""), ours, ours_code
            )
            files.update(wiring.files)
            programs.update(wiring.programs)
            env.update(wiring.env)
            settings["env"] = wiring.env  # outranks any settings file the agent could write
        if groups:
            settings["hooks"] = {"PreToolUse": groups}
        if settings:
            settings_path = request.job_dir / "claude-settings.json"
            files[settings_path] = json.dumps(settings, indent=1)
            argv += ["--settings", str(settings_path)]
        if request.attachments and not request.restricted:
            argv += ["--add-dir", *file_dirs(request.attachments)]
        prompt = prompt_with_files(request.prompt, request.attachments)
        default_args = (
            restricted.model_args(request.default_args)
            if request.restricted
            else tuple(request.default_args)
        )
        if request.steer:  # the prompt is stdin's first line (see the module doc)
            argv += default_args
            return Invocation(
                argv=tuple(argv),
                env=env,
                files=files,
                input=user_message(prompt),
                programs=programs,
            )
        argv += [*default_args, "--", prompt]
        return Invocation(argv=tuple(argv), env=env, files=files, programs=programs)

    def decoder(self) -> Decoder:
        return ClaudeDecoder()

    def steer_line(self, text: str) -> str | None:
        return user_message(text)
