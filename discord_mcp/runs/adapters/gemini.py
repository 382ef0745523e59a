"""Gemini CLI: ``gemini --output-format stream-json --prompt=<prompt>``.

Where stream-json is not available (an older Gemini CLI, or the owner's setting), the run uses
``--output-format json`` instead and reads its single JSON object (:mod:`.gemini_json`:
``DISCORD_WATCH_GEMINI_OUTPUT=json``, or the project's own ``--output-format json``).

New session and resume::

    gemini --output-format stream-json <project args> --prompt=<prompt>
    gemini --output-format stream-json --resume <session_id> <project args> --prompt=<prompt>

``--prompt=`` keeps a prompt that starts with ``-`` from being read as an option. Files the owner
sent are ``@path`` references in the prompt, which Gemini reads into the prompt itself (images
too); their directory joins the workspace with ``--include-directories``. Resume works
only from the directory the session was created in (sessions are stored per project), which
is why every run happens in the project's path.

The ``discord`` MCP server. Gemini has no command-line flag for an MCP server, and the files
it reads are the user's ``~/.gemini/settings.json``, the project's ``.gemini/settings.json``
(which we must not touch), and system files. Gemini 0.61 skips a system settings file
(``GEMINI_CLI_SYSTEM_SETTINGS_PATH``) unless it and every directory above it are owned by root
and not writable by group or others, so that route is closed to a normal user. What it does
honour is ``GEMINI_CLI_HOME``, the directory holding ``.gemini/``. Runs therefore get an
overlay home, ``<state>/runs/cli-homes/gemini``, kept across jobs. Its ``.gemini/`` links to
the entries of the user's real ``~/.gemini`` (credentials, accounts, trusted folders, memory,
commands, extensions, skills, ...), except what Gemini keeps per home and rewrites by renaming
a temporary file over it: the project registry (``projects.json``), the sessions (``tmp/``)
and ``history/`` stay the runs' own, so runs' sessions never mix with the user's interactive
ones (and resume keeps working, from the project's directory, across jobs). Its
``settings.json`` is the user's settings (comments allowed) plus ``mcpServers.discord`` with
``trust: true`` (untrusted servers' tools are not offered at all in headless mode). The thread
id is written as ``${DISCORD_THREAD_ID}``, which Gemini expands from each run's environment,
so concurrent runs can share the file. Approvals (unless the project's setting is ``off``): the
run gets ``--approval-mode yolo`` (headless Gemini offers its shell and write tools only then)
and the settings a ``BeforeTool`` hook, ``discord-mcp hook before-tool``, which asks the owner;
the hook matches every tool and reads the run's setting from ``DISCORD_MCP_APPROVALS``, since
the file is shared. In yolo mode a hook that fails, is killed or times out lets the call run, so
the hook fails closed itself (:mod:`discord_mcp.hooks.guard`): ``--timeout`` names the timeout
written here, a failure, settings missing from its ``env`` included, is a deny, and the command
wraps the hook so that a killed hook process is a deny too
(:func:`~discord_mcp.hooks.guard.command`; the network hook's as well). The file is 0600
(it holds the bot token). If the user's settings cannot be read, the overlay links them
unchanged and runs go without the discord server (logged), rather than without the user's
settings.

Without network (:mod:`discord_mcp.runs.constraints`) every command the agent starts (its shell
tool and the hooks, which Gemini runs as ``bash -c``) runs in a network namespace of its own,
through a ``bash`` of ours first on the run's PATH (:mod:`discord_mcp.runs.offline`), our
approval hook excepted. The run gets an overlay home of its own kind,
``<state>/runs/cli-homes/gemini-offline`` (a run's constraints never change, so its sessions
stay in one home), even without Discord: its settings keep no MCP server but ours (and
``--allowed-mcp-server-names discord`` drops a project's), exclude the web tools and
``invoke_agent`` (``tools.exclude``), and add a ``BeforeTool`` hook, ``discord-mcp hook
network``, that refuses at once, with a reason, the shell commands it can tell use the network.
Extensions (which may bring MCP servers) are not linked into it; ``GEMINI_SANDBOX=false`` keeps
a project's settings from restarting the CLI in a container of its own.

A persona (issue 25) heads the prompt (Gemini has no flag that adds to its instructions). A
stranger's turn is locked down as :mod:`discord_mcp.runs.restricted` says, in a home of its
own, ``<state>/runs/cli-homes/gemini-restricted``.

Events: ``init`` (``session_id``), ``message`` (user echo; assistant text as deltas),
``tool_use`` / ``tool_result``, ``error`` (warnings), and the final ``result`` with
``status`` ``success`` or ``error``. When Gemini ends on an API error its exit code is the
HTTP status mod 256 (401 -> 145, 500 -> 244, 529 -> 17).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from discord_mcp.chat.said import MARK_VARIABLE
from discord_mcp.config import DEFAULT_APPROVAL_WAIT_S
from discord_mcp.errors import RunError
from discord_mcp.hooks import before_tool, guard
from discord_mcp.runs import offline as offline_runs
from discord_mcp.runs import restricted
from discord_mcp.runs.adapters.base import (
    ARTIFACTS_VARIABLE,
    MCP_SERVER_NAME,
    THREAD_VARIABLE,
    Decoder,
    Invocation,
    InvocationRequest,
    McpRegistration,
    Outcome,
    Verdict,
    as_int,
    file_dirs,
    prompt_with_files,
    truncate,
)
from discord_mcp.runs.adapters.gemini_json import (
    GeminiResult,
    JsonResult,
    error_in,
    output_format,
    parse,
)
from discord_mcp.runs.adapters.gemini_settings import read_settings
from discord_mcp.runs.journal.views import Tool, Usage

log = logging.getLogger(__name__)

HOME_VARIABLE = "GEMINI_CLI_HOME"
APPROVALS_VARIABLE = "DISCORD_MCP_APPROVALS"
"""The project's approvals setting, read by the hook (the overlay settings are shared by every
project's runs, so the hook matches every tool and decides per run)."""
APPROVAL_HOOK_NAME = "discord-mcp approvals"
NETWORK_HOOK_NAME = "discord-mcp network"
_OFFLINE_SKIPPED = frozenset({"extensions", "mcp-oauth-tokens.json"})
"""Not linked into the home of runs without network: extensions may bring MCP servers."""
HOOK_MARGIN_S = 30.0
"""Gemini CLI's hook timeout is our wait plus this: the hook always answers first."""
SETTINGS_FILE = "settings.json"
# Kept per home by Gemini itself (see the module doc): never linked into the overlay.
_OWN_ENTRIES = frozenset({SETTINGS_FILE, "projects.json", "tmp", "history"})

# Gemini CLI's own exit codes, and HTTP statuses as they come out mod 256.
_EXIT_MEANINGS = {
    41: "authentication is not set up",
    42: "bad input or unknown session",
    44: "sandbox error",
    52: "configuration error",
    53: "turn limit reached",
    55: "the folder is not trusted",
    **{
        status % 256: f"probably HTTP {status} from the model API"
        for status in (400, 401, 403, 404, 429, 500, 502, 503, 504, 529)
    },
}


class GeminiDecoder(Decoder):
    tool = "gemini"

    def __init__(self) -> None:
        super().__init__()
        self._text: list[str] = []
        self._result: dict[str, Any] | None = None
        self._json = JsonResult()  # --output-format json's one object (gemini_json)

    def feed(self, line: str) -> bool:
        if self._json.gathering or line.strip() == "{":  # json mode: one pretty-printed object
            done = self._json.feed(line)
            if self._json.result is not None and done:
                self.events_seen += 1
                return self._json_result(self._json.result)
            if not self._json.gathering and not done:
                self.non_json_lines += 1
            return False
        return super().feed(line)

    def _json_result(self, result: GeminiResult) -> bool:
        """The json mode's answer: the whole turn at once."""
        if result.session_id is not None:
            self.session_key = result.session_id
        self.final_seen = True
        self.final_text = result.response or None
        if result.response:
            self.stream.replace(result.response)
            self.set_text(result.response)
        self.usage = result.usage
        self._result = (
            {"status": "success"}
            if result.error is None
            else {"status": "error", "error": {"message": result.error}}
        )
        return True

    def handle(self, event: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind is None and ("response" in event or "error" in event):
            compact = parse(event)  # json mode's object on one line
            if compact is not None:
                return self._json_result(compact)
        if kind == "init":
            self.session_key = str(event["session_id"])
            return True
        if kind == "message":
            if event.get("role") != "assistant":
                return False
            content = event.get("content")
            if not isinstance(content, str):
                return False
            if event.get("delta"):
                self._text.append(content)
                self.stream.add(content)
            else:
                self._text = [content]
                self.stream.replace(content)
            return self.set_text("".join(self._text))
        if kind == "tool_use":
            self._text = []  # the answer is the text after the last tool call
            self.stream.end_message()
            self.add_tool_call(str(event.get("tool_name")), event.get("parameters"))
            return True
        if kind == "tool_result":
            if event.get("status") not in (None, "success"):
                self.note = truncate(f"tool failed: {event.get('error') or event}", 200)
                return True
            return False
        if kind == "error":
            self.note = truncate(str(event.get("message")), 200)
            return True
        if kind == "result":
            self._result = event
            self.final_seen = True
            self.final_text = "".join(self._text) or None
            stats = event.get("stats") or {}
            self.usage = Usage(
                input_tokens=as_int(stats.get("input_tokens")),
                output_tokens=as_int(stats.get("output_tokens")),
                cached_input_tokens=as_int(stats.get("cached")),
                total_tokens=as_int(stats.get("total_tokens")),
            )
            return True
        self.unknown_events += 1
        return False

    def verdict(self) -> Verdict | None:
        if self._result is None:
            return None
        if self._result.get("status") == "success":
            return Verdict(ok=True)
        error = self._result.get("error") or {}
        message = error.get("message") if isinstance(error, dict) else None
        return Verdict(ok=False, message=str(message) if message else None)

    def outcome(self, exit_code: int | None, *, resumed: bool, stderr_tail: str = "") -> Outcome:
        if self._result is None and (error := error_in(stderr_tail)) is not None:
            self._result = {"status": "error", "error": {"message": error}}  # json mode's
        return super().outcome(exit_code, resumed=resumed, stderr_tail=stderr_tail)

    def resume_failed(self, exit_code: int | None, stderr_tail: str) -> bool:
        return exit_code == 42 and "Error resuming session" in stderr_tail

    def explain_exit(self, exit_code: int) -> str:
        meaning = _EXIT_MEANINGS.get(exit_code)
        base = super().explain_exit(exit_code)
        return f"{base}: {meaning}" if meaning else base


class GeminiAdapter:
    tool: Tool = "gemini"

    def invocation(self, request: InvocationRequest) -> Invocation:
        if request.restricted:
            return _restricted_invocation(request)
        form, named = output_format(request.default_args, request.env)
        argv = [request.executable] + ([] if named else ["--output-format", form])
        if request.resume_key:
            argv += ["--resume", request.resume_key]
        if request.mcp is not None and request.approvals != "off":
            # Headless Gemini offers its shell and write tools only in yolo mode; the
            # BeforeTool hook is then what asks the owner.
            argv += ["--approval-mode", "yolo"]
        if request.attachments:
            argv += [f"--include-directories={d}" for d in file_dirs(request.attachments)]
        prompt = prompt_with_files(request.prompt, request.attachments, _at_reference)
        prompt = request.prompt_with_instructions(prompt)
        offline = not request.allow_network
        if offline:  # a project's settings may name MCP servers: none runs but ours
            argv += ["--allowed-mcp-server-names", MCP_SERVER_NAME]
        argv += [*request.default_args, f"--prompt={prompt}"]
        if request.mcp is None and not offline:
            return Invocation(argv=tuple(argv))
        real = real_gemini_dir(request.env)
        overlay_home = request.shared_dir / ("gemini-offline" if offline else "gemini")
        overlay = overlay_home / ".gemini"
        skipped = _OWN_ENTRIES | (_OFFLINE_SKIPPED if offline else frozenset())
        links = {
            overlay / entry.name: entry
            for entry in _entries(real)
            if entry.name not in skipped and not entry.name.endswith(".tmp")
        }
        files: dict[Path, str] = {}
        programs: dict[Path, str] = {}
        ours_code: list[str] = []  # what runs outside a run's network namespace: it is ours
        settings = read_settings(real / SETTINGS_FILE)
        if settings is None and offline:
            settings = {}  # never the user's servers unfiltered: start from nothing
            log.warning("cannot read %s; Gemini runs without network use none of it", real)
        if settings is None:
            log.warning(
                "cannot read %s; Gemini runs use it unchanged, without the discord MCP server",
                real / SETTINGS_FILE,
            )
            links[overlay / SETTINGS_FILE] = real / SETTINGS_FILE
        else:
            servers = {} if offline else dict(settings.get("mcpServers") or {})
            hooks = settings.get("hooks")
            if request.mcp is not None:
                servers[MCP_SERVER_NAME] = _server_entry(request.mcp)
                hooks = _with_approval_hook(hooks, request.mcp)
                ours_code.append(_approval_hook_command(request.mcp))
            if offline:
                # The early, explained refusal; the namespace is what keeps the promise.
                hooks = _with_network_hook(hooks, request.hook_argv())
                tools = dict(settings.get("tools") or {})
                excluded = {*(tools.get("exclude") or []), *offline_runs.GEMINI_EXCLUDED_TOOLS}
                tools["exclude"] = sorted(excluded)
                settings["tools"] = tools
            settings["mcpServers"] = servers
            if hooks is not None:
                settings["hooks"] = hooks
            files[overlay / SETTINGS_FILE] = json.dumps(settings, indent=1)
        env = {
            HOME_VARIABLE: str(overlay_home),
            APPROVALS_VARIABLE: request.approvals,
            MARK_VARIABLE: request.mcp_extra.get(MARK_VARIABLE, ""),  # the file is shared
        }
        if offline:
            jail = offline_runs.required(request.jail)
            path = request.env.get("PATH", "")
            wiring = offline_runs.gemini(jail, request.job_dir, path, [], ours_code)
            env.update(wiring.env)
            files.update(wiring.files)
            programs.update(wiring.programs)
        return Invocation(argv=tuple(argv), env=env, files=files, links=links, programs=programs)

    def decoder(self) -> Decoder:
        return GeminiDecoder()

    def steer_line(self, text: str) -> str | None:
        # Headless Gemini CLI reads its stdin once, before the turn (-p is appended to it): a
        # message cannot reach a running turn. Steering Gemini takes its ACP mode (gemini --acp).
        return None


def _server_entry(mcp: McpRegistration) -> dict[str, Any]:
    return {
        "command": mcp.argv[0],
        "args": list(mcp.argv[1:]),
        "env": {
            **mcp.env,
            THREAD_VARIABLE: f"${{{THREAD_VARIABLE}}}",
            ARTIFACTS_VARIABLE: f"${{{ARTIFACTS_VARIABLE}}}",
            MARK_VARIABLE: f"${{{MARK_VARIABLE}}}",
        },
        "trust": True,
    }


def _restricted_invocation(request: InvocationRequest) -> Invocation:
    """A stranger's turn (:mod:`discord_mcp.runs.restricted`): a home of its own whose settings
    keep only our server's chat tools, and an admin policy that denies everything else."""
    if request.mcp is None:
        raise RunError(
            "E_RESTRICTED_NOT_ENFORCEABLE",
            "a stranger's turn needs the discord server for its chat tools, and this run has none",
        )
    restricted.check_gemini_policies()
    overlay_home = request.shared_dir / "gemini-restricted"
    overlay = overlay_home / ".gemini"
    policy = overlay_home / "restricted-policy.toml"
    form, _ = output_format(request.default_args, request.env)  # its own arguments: not used
    argv = [request.executable, "--output-format", form, "--approval-mode", "default"]
    if request.resume_key:
        argv += ["--resume", request.resume_key]
    argv += [f"--admin-policy={policy}"]
    prompt = request.prompt_with_instructions(prompt_with_files(request.prompt, ()))
    argv += [*restricted.model_args(request.default_args), f"--prompt={prompt}"]
    real = real_gemini_dir(request.env)
    skipped = _OWN_ENTRIES | _OFFLINE_SKIPPED | {
        "policies", "commands", "skills", "agents", "GEMINI.md", "AGENTS.md", "memory"
    }  # fmt: skip
    links = {
        overlay / entry.name: entry
        for entry in _entries(real)
        if entry.name not in skipped and not entry.name.endswith(".tmp")
    }
    server = _server_entry(request.mcp)
    server["env"] = {
        **server["env"],
        **request.mcp_extra,
        restricted.TOOLS_VARIABLE: "chat",
    }
    settings = restricted.gemini_settings(read_settings(real / SETTINGS_FILE) or {}, server)
    files = {
        overlay / SETTINGS_FILE: json.dumps(settings, indent=1),
        policy: restricted.gemini_policy(),
    }
    env = {HOME_VARIABLE: str(overlay_home), APPROVALS_VARIABLE: "off"}
    return Invocation(argv=tuple(argv), env=env, files=files, links=links)


def _at_reference(path: Path) -> str:
    """``@path`` as Gemini's prompt reads it (spaces escaped with a backslash)."""
    return "@" + str(path).replace(" ", "\\ ")


def _with_network_hook(hooks: Any, hook_argv: tuple[str, ...]) -> dict[str, Any]:
    """The hooks plus our network guard, which judges every tool call (but our server's)."""
    merged = dict(hooks) if isinstance(hooks, dict) else {}
    command = guard.command([*hook_argv, "hook", "network", "--client", "gemini"])
    ours = {
        "matcher": before_tool.matcher(ask_all=True),
        "hooks": [{"type": "command", "name": NETWORK_HOOK_NAME, "command": command,
                   "timeout": 30_000}],
    }  # fmt: skip
    groups = [
        group
        for group in merged.get("BeforeTool") or []
        if not (
            isinstance(group, dict)
            and any(
                isinstance(h, dict) and h.get("name") == NETWORK_HOOK_NAME
                for h in group.get("hooks") or []
            )
        )
    ]
    merged["BeforeTool"] = [ours, *groups]
    return merged


def _approval_wait(mcp: McpRegistration) -> float:
    return float(mcp.env.get("DISCORD_MCP_APPROVAL_WAIT_SECONDS") or DEFAULT_APPROVAL_WAIT_S)


def _approval_hook_command(mcp: McpRegistration) -> str:
    """Our approval hook's shell command, wrapped to fail closed when killed."""
    wait = _approval_wait(mcp)
    timeout = wait + HOOK_MARGIN_S
    options = ["--client", "gemini", "--wait", f"{wait:g}", "--timeout", f"{timeout:g}"]
    return guard.command([*mcp.argv, "hook", "before-tool", *options])


def _with_approval_hook(hooks: Any, mcp: McpRegistration) -> dict[str, Any]:
    """The user's hooks plus our ``BeforeTool`` hook (replacing an older one of ours)."""
    merged = dict(hooks) if isinstance(hooks, dict) else {}
    timeout = _approval_wait(mcp) + HOOK_MARGIN_S
    command = _approval_hook_command(mcp)
    ours = {
        "matcher": before_tool.matcher(ask_all=True),
        "hooks": [
            {
                "type": "command",
                "name": APPROVAL_HOOK_NAME,
                "command": command,
                "timeout": int(timeout * 1000),
                "env": dict(mcp.env),
            }
        ],
    }
    groups = [
        group
        for group in merged.get("BeforeTool") or []
        if not (
            isinstance(group, dict)
            and any(
                isinstance(h, dict) and h.get("name") == APPROVAL_HOOK_NAME
                for h in group.get("hooks") or []
            )
        )
    ]
    merged["BeforeTool"] = [*groups, ours]
    return merged


def real_gemini_dir(env: Mapping[str, str]) -> Path:
    """The user's own ``.gemini`` directory, as Gemini would find it with this environment."""
    home = env.get(HOME_VARIABLE) or env.get("HOME") or str(Path.home())
    return Path(home) / ".gemini"


def _entries(directory: Path) -> list[Path]:
    try:
        return sorted(directory.iterdir())
    except OSError:
        return []
