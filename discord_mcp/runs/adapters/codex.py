"""Codex CLI: ``codex exec --json``.

New session and resume::

    codex exec --json --skip-git-repo-check -c mcp_servers.discord.… <project args> -- <prompt>
    codex exec --json --skip-git-repo-check -c … <project args> resume <thread_id> -- <prompt>

Options go before ``resume``: ``exec``'s own options (``-s``, ``--full-auto``, ...) are refused
after it, and accepted before it for a resumed run too. The thread id is stable across
resumes.

Images the owner sent go with ``--image=<path>`` (right after ``exec``, where the next argument
is an option, since ``exec``'s ``--image`` takes several values; after ``resume`` for a resumed
run); every file is also listed by path in the prompt.

The ``discord`` MCP server is added with ``-c`` overrides (TOML values): ``command``, ``args``,
``default_tools_approval_mode = "approve"`` (``exec`` refuses MCP calls that need approval
otherwise), ``required = true`` (else a slow server misses the first turn's tool search) and
``env_vars = [...]``: the NAMES of the variables Codex passes through to the server. Their
values (the bot token among them) travel in Codex's own environment, never in argv.

Approvals (unless the project's setting is ``off``): a ``PreToolUse`` and a ``PermissionRequest``
hook, ``discord-mcp hook ... --client codex``, added with ``-c hooks.<event>=[...]`` for this run
only (so ``--dangerously-bypass-hook-trust``: Codex runs a user's hooks only once reviewed in its
TUI), and ``--approve-for-me``, which sends a command that must leave the sandbox to the
``PermissionRequest`` hook instead of refusing it. The hooks inherit Codex's environment (the
server's variables, ``DISCORD_MCP_APPROVALS``). Codex lets a call run when its hook fails, is
killed, or reaches its timeout, so the hooks fail closed themselves
(:mod:`discord_mcp.hooks.guard`): ``--timeout`` tells them the timeout written here, any failure
(settings missing from the environment included) is a block, and the command wraps the hook so
that a hook process that is killed exits 2 with a reason all the same
(:func:`~discord_mcp.hooks.guard.command`).

Without network (:mod:`discord_mcp.runs.constraints`): every MCP server of the user's and the
project's ``config.toml`` turned off (``-c mcp_servers.<name>.enabled=false``: they run outside
the sandbox; an empty ``mcp_servers={}`` override does not remove them), the sandbox's network
off, web search disabled, and no ``--approve-for-me`` (nothing leaves the sandbox); project
arguments that would open it, or a config that cannot be read, refuse the run
(E_NETWORK_NOT_ENFORCEABLE).

A persona (issue 25) goes in ``-c developer_instructions=...``. A stranger's turn is locked
down as :mod:`discord_mcp.runs.restricted` says: the read-only sandbox, approvals never, no
shell tools, no web search, no other MCP server, no hooks, none of the project's arguments but
its model.

Events: ``thread.started`` (``thread_id``), ``turn.started``, ``item.started`` /
``item.updated`` / ``item.completed`` (``agent_message``, ``mcp_tool_call``,
``command_execution``, ``file_change``, ``web_search``, ...), ``error`` (also transient ones
such as "Reconnecting..."), and the final ``turn.completed`` (with usage) or ``turn.failed``.
"""

from __future__ import annotations

import json
import logging
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from discord_mcp.config import DEFAULT_APPROVAL_WAIT_S
from discord_mcp.errors import RunError
from discord_mcp.hooks import guard
from discord_mcp.runs import restricted
from discord_mcp.runs.adapters.base import (
    MCP_SERVER_NAME,
    Decoder,
    Invocation,
    InvocationRequest,
    McpRegistration,
    Verdict,
    prompt_with_files,
    token_usage,
    truncate,
)
from discord_mcp.runs.adapters.codex_app import HOOK_TRUST_WARNING
from discord_mcp.runs.adapters.codex_steer import app_server_argv, steer_message
from discord_mcp.runs.constraints import codex_network_args
from discord_mcp.runs.journal.views import Tool

log = logging.getLogger(__name__)


def _toml(value: Any) -> str:
    # JSON strings and arrays of strings are valid TOML (the escapes used by json.dumps with
    # ensure_ascii are TOML's too).
    return json.dumps(value)


class CodexDecoder(Decoder):
    tool = "codex"

    def __init__(self) -> None:
        super().__init__()
        self._seen_items: set[str] = set()
        self._failed: str | None = None
        self._completed = False

    def handle(self, event: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind == "thread.started":
            self.session_key = str(event["thread_id"])
            return True
        if kind in ("item.started", "item.updated", "item.completed"):
            return self._item(event["item"], done=kind == "item.completed")
        if kind == "turn.completed":
            self._completed = True
            self.final_seen = True
            self.usage = token_usage(event.get("usage"), cached_key="cached_input_tokens")
            return True
        if kind == "turn.failed":
            self.final_seen = True
            error = event.get("error") or {}
            self._failed = str(error.get("message") or "turn failed")
            return True
        if kind == "error":
            self.note = truncate(str(event.get("message")), 200)
            return True
        if kind != "turn.started":
            self.unknown_events += 1
        return False

    def _item(self, item: dict[str, Any], *, done: bool) -> bool:
        item_type = item.get("type")
        item_id = str(item.get("id"))
        first = item_id not in self._seen_items
        self._seen_items.add(item_id)
        if item_type == "agent_message":
            if isinstance(item.get("text"), str):
                # Codex's exec stream gives whole messages (no deltas): each one as it comes.
                self.stream.replace(item["text"])
                if done:
                    self.final_text = item["text"]
                    self.stream.end_message()
            return self.set_text(item.get("text"))
        if item_type == "mcp_tool_call" and first:
            name = f"mcp__{item.get('server')}__{item.get('tool')}"
            self.add_tool_call(name, item.get("arguments"))
            return True
        if item_type == "command_execution" and first:
            self.add_tool_call("shell", {"command": item.get("command")})
            return True
        if item_type == "file_change" and first:
            paths = [c.get("path") for c in item.get("changes") or [] if isinstance(c, dict)]
            self.add_tool_call("file_change", {"paths": paths})
            return True
        if item_type == "web_search" and first:
            self.add_tool_call("web_search", {"query": item.get("query")})
            return True
        if item_type == "error":
            if HOOK_TRUST_WARNING in str(item.get("message")):
                return False  # the flag our approval hooks need: not news for the owner
            self.note = truncate(str(item.get("message")), 200)
            return True
        if item_type == "mcp_tool_call" and done and item.get("status") == "failed":
            self.note = truncate(f"{item.get('tool')} failed: {item.get('error')}", 200)
            return True
        return False

    def verdict(self) -> Verdict | None:
        if self._failed is not None:
            return Verdict(ok=False, message=self._failed)
        if self._completed:
            return Verdict(ok=True)
        return None

    def resume_failed(self, exit_code: int | None, stderr_tail: str) -> bool:
        return exit_code not in (None, 0) and "no rollout found" in stderr_tail


APPROVALS_VARIABLE = "DISCORD_MCP_APPROVALS"
HOOK_MARGIN_S = 30
_SANDBOX_FLAGS = (
    "-s",
    "--sandbox",
    "--approve-for-me",
    "--full-auto",
    "--dangerously-bypass-approvals-and-sandbox",
)


def _approval_args(
    mcp: McpRegistration, default_args: Sequence[str], *, escalate: bool = True
) -> list[str]:
    """Hooks that ask the owner: ``PreToolUse`` for every call that writes or executes, and
    ``PermissionRequest`` for a call that must leave the sandbox (``--approve-for-me`` routes
    those to it instead of refusing them; unless the project chose its own sandbox, or the run
    must stay in it: ``escalate`` False)."""
    wait = float(mcp.env.get("DISCORD_MCP_APPROVAL_WAIT_SECONDS") or DEFAULT_APPROVAL_WAIT_S)
    timeout = int(wait) + HOOK_MARGIN_S
    args = ["--dangerously-bypass-hook-trust"]  # our own hooks, added for this run only
    own_sandbox = any(a in _SANDBOX_FLAGS or a.startswith("--sandbox=") for a in default_args)
    if escalate and not own_sandbox:
        args.append("--approve-for-me")
    for event, name in (
        ("PreToolUse", "pre-tool-use"),
        ("PermissionRequest", "permission-request"),
    ):
        options = ["--client", "codex", "--wait", f"{wait:g}", "--timeout", str(timeout)]
        command = guard.command([*mcp.argv, "hook", name, *options])
        handler = f"{{type={_toml('command')}, command={_toml(command)}, timeout={timeout}}}"
        args += ["-c", f"hooks.{event}=[{{hooks=[{handler}]}}]"]
    return args


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _configured_servers(request: InvocationRequest) -> list[str]:
    """The MCP servers Codex would start from its config files (the user's and the project's).

    Raises:
        RunError: E_NETWORK_NOT_ENFORCEABLE when a config file cannot be read.
    """
    home = request.env.get("CODEX_HOME") or str(
        Path(request.env.get("HOME") or Path.home()) / ".codex"
    )
    files = [Path(home) / "config.toml"]
    if request.workdir is not None:
        files.append(request.workdir / ".codex" / "config.toml")
    names: list[str] = []
    for path in files:
        try:
            document = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            raise RunError(
                "E_NETWORK_NOT_ENFORCEABLE",
                f"the run asks for no network, but {path} cannot be read ({exc}) to turn its "
                "MCP servers off: fix the file, or run with network",
            ) from None
        servers = document.get("mcp_servers")
        if isinstance(servers, dict):
            names += [str(name) for name in servers if str(name) not in names]
    odd = [name for name in names if not _BARE_KEY.match(name)]
    if odd:  # a -c path takes bare keys only (a quoted one makes Codex exit 1)
        raise RunError(
            "E_NETWORK_NOT_ENFORCEABLE",
            f"the run asks for no network, but the MCP server {odd[0]!r} in Codex's config "
            "cannot be turned off for one run (its name is not a bare TOML key): rename it, or "
            "run with network",
        )
    return names


class CodexAdapter:
    tool: Tool = "codex"

    def invocation(self, request: InvocationRequest) -> Invocation:
        images = [f"--image={f.path}" for f in request.attachments if f.is_image]
        if request.restricted:
            images = []
        argv = [request.executable, "exec"]
        if not request.resume_key:
            argv += images
        argv += ["--json", "--skip-git-repo-check"]
        env: dict[str, str] = {}
        default_args: Sequence[str] = request.default_args
        if request.restricted:
            if request.mcp is None:
                raise RunError(
                    "E_RESTRICTED_NOT_ENFORCEABLE",
                    "a stranger's turn needs the discord server for its chat tools, and this "
                    "run has none",
                )
            default_args = restricted.model_args(request.default_args)
            for name in _configured_servers(request):
                if name != MCP_SERVER_NAME:
                    argv += ["-c", f"mcp_servers.{name}.enabled=false"]
            argv += restricted.codex_args()
        elif not request.allow_network:
            offline = codex_network_args(request.default_args)  # refuses what would open it
            for name in _configured_servers(request):
                if name != MCP_SERVER_NAME:
                    argv += ["-c", f"mcp_servers.{name}.enabled=false"]
            argv += offline
        if request.instructions:
            argv += ["-c", f"developer_instructions={_toml(request.instructions)}"]
        if request.mcp is not None:
            server_env = request.mcp_env()
            prefix = f"mcp_servers.{MCP_SERVER_NAME}"
            overrides = {
                "command": request.mcp.argv[0],
                "args": list(request.mcp.argv[1:]),
                "default_tools_approval_mode": "approve",
                "required": True,
                "env_vars": sorted(server_env),
            }
            for key, value in overrides.items():
                argv += ["-c", f"{prefix}.{key}={_toml(value)}"]
            env.update(server_env)
            if request.approvals != "off" and not request.restricted:
                argv += _approval_args(
                    request.mcp, request.default_args, escalate=request.allow_network
                )
                env[APPROVALS_VARIABLE] = request.approvals
        argv += list(default_args)
        if request.steer and not images:
            # The same options, hooks included (app-server runs them as exec does).
            bridged = app_server_argv(request, argv[4:])
            if bridged is not None:
                log.info("codex turn through codex app-server (it takes messages mid-turn)")
                text = prompt_with_files(request.prompt, request.attachments)
                return Invocation(argv=bridged, env=env, input=steer_message(text))
            log.info("codex turn through codex exec: its options do not fit codex app-server")
        if request.resume_key:
            argv += ["resume", *images, request.resume_key]
        argv += ["--", prompt_with_files(request.prompt, request.attachments)]
        return Invocation(argv=tuple(argv), env=env)

    def decoder(self) -> Decoder:
        return CodexDecoder()

    def steer_line(self, text: str) -> str | None:
        # Read by the app-server bridge (a job started by `codex exec` has no input at all:
        # the runner offers nothing to a job without an input directory).
        return steer_message(text)
