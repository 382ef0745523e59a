"""A tool-permission request, whichever CLI and route it came from, and what it would do.

:class:`ToolRequest` is what every route hands over (the ``approve`` tool, the hooks); it is
stored as the ``approval`` object of the decision. :func:`describe` reads it into an
:class:`Action`: a shell command, a file change (with a unified diff, see
:mod:`~discord_mcp.approvals.changes`), or another tool's input, plus the risks flagged on the
card and the session rule an "Allow for this session" would record.

Tool names per CLI (as their permission routes report them):

==============  =========================  ==============================================
what            Claude Code                Codex (hooks) / Gemini CLI
==============  =========================  ==============================================
shell           ``Bash`` {command}         ``Bash`` {command} / ``run_shell_command``
write a file    ``Write``                  (``apply_patch``) / ``write_file``
edit a file     ``Edit``, ``MultiEdit``    ``apply_patch`` {command: patch} / ``replace``
==============  =========================  ==============================================
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from discord_mcp.approvals.changes import file_change
from discord_mcp.approvals.risk import command_risks

Client = Literal["claude", "codex", "gemini"]
CLIENTS: tuple[Client, ...] = ("claude", "codex", "gemini")
SHELL_TOOLS = frozenset({"Bash", "run_shell_command", "shell", "exec_command", "local_shell"})
_CHAINING = ("&&", "||", ";", "|", "`", "$(", ">", "<", "\n", "&")


@dataclass(frozen=True, slots=True)
class ToolRequest:
    """One tool call an agent CLI wants permission for.

    Attributes:
        client: which CLI asks.
        tool_name: the tool as that CLI names it (``Bash``, ``write_file``, ``mcp__x__y``).
        tool_input: the tool's arguments, exactly as the CLI gave them (agent content).
        session_id: the CLI's session (Claude/Gemini session id, Codex thread id); rules for
            "this session" are scoped to it.
        cwd: the agent's working directory, when known.
        route: how it asks (``prompt-tool`` or ``hook``).
        attended: a person at the CLI's terminal can answer too (when no one answers here in
            time, the terminal asks instead of the agent being told no).
    """

    client: Client
    tool_name: str
    tool_input: Mapping[str, Any]
    session_id: str
    cwd: str = ""
    route: str = "hook"
    tool_use_id: str | None = field(default=None, compare=False)
    attended: bool = field(default=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "tool_name": self.tool_name,
            "tool_input": dict(self.tool_input),
            "session_id": self.session_id,
            "cwd": self.cwd,
            "route": self.route,
            "tool_use_id": self.tool_use_id,
            "attended": self.attended,
            "fingerprint": self.fingerprint(),
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> ToolRequest:
        client = str(document.get("client") or "claude")
        tool_input = document.get("tool_input")
        return cls(
            client=client if client in CLIENTS else "claude",
            tool_name=str(document.get("tool_name") or ""),
            tool_input=dict(tool_input) if isinstance(tool_input, dict) else {},
            session_id=str(document.get("session_id") or ""),
            cwd=str(document.get("cwd") or ""),
            route=str(document.get("route") or "hook"),
            tool_use_id=document.get("tool_use_id") or None,
            attended=bool(document.get("attended")),
        )

    def fingerprint(self) -> str:
        """Same tool, same input, same session: the same request (a retry, or a double ask)."""
        canonical = json.dumps(
            [self.client, self.session_id, self.tool_name, self.tool_input],
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Action:
    """What a request would do, for the card and for session rules.

    Attributes:
        title: "Run a shell command", "Write a file", ...
        command: the exact shell command, if it is one.
        path: the file it changes, if it is a file change.
        diff: a unified diff of the change (may be long; the card truncates it visibly).
        detail: the input of any other tool, as JSON.
        reason: why the agent says it wants this (its description or justification).
        risks: short phrases for the card's warning ("recursive delete", ...).
        rule: the session rule "Allow for this session" records (``cmd:<prefix>`` or
            ``tool:<name>``); a request with shell chaining has none for its command.
        rule_label: that rule in words.
    """

    title: str
    command: str | None = None
    path: str | None = None
    diff: str | None = None
    detail: str | None = None
    reason: str | None = None
    risks: tuple[str, ...] = ()
    rule: str = ""
    rule_label: str = ""


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def describe(request: ToolRequest) -> Action:
    """Read ``request`` into an :class:`Action` (never raises on odd input)."""
    name = request.tool_name
    arguments = request.tool_input
    reason = _text(arguments.get("description")) or _text(arguments.get("justification"))
    if name in SHELL_TOOLS:
        command = _shell_command(arguments)
        if command is not None:
            prefix = command_prefix(command)
            rule = f"cmd:{prefix}" if prefix else ""
            label = f"`{prefix} …` commands" if prefix else ""
            return Action(
                title="Run a shell command",
                command=command,
                reason=reason,
                risks=command_risks(command),
                rule=rule,
                rule_label=label,
            )
    change = file_change(name, arguments, request.cwd)
    if change is not None:
        return Action(
            title=change.title,
            path=change.path,
            diff=change.diff,
            reason=reason,
            risks=change.risks,
            rule=f"tool:{name}",
            rule_label=f"the `{name}` tool",
        )
    detail = json.dumps(dict(arguments), ensure_ascii=False, indent=1, default=str)
    return Action(
        title=f"Use the tool `{name}`",
        detail=detail,
        reason=reason,
        rule=f"tool:{name}",
        rule_label=f"the `{name}` tool",
    )


def _shell_command(arguments: Mapping[str, Any]) -> str | None:
    for key in ("command", "cmd"):
        value = arguments.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(part, str) for part in value):
            return shlex.join(value)
    return None


def has_chaining(command: str) -> bool:
    """Whether a command does more than one thing (pipes, ``;``, ``&&``, substitutions,
    redirections): such a command is never answered by a session rule."""
    return any(token in command for token in _CHAINING)


def command_prefix(command: str) -> str:
    """The part of a command a session rule covers: the program and, for programs with
    subcommands, the subcommand (``git push``, ``npm test``, ``pytest``). Empty when the
    command cannot be split."""
    try:
        words = shlex.split(command, comments=False)
    except ValueError:
        return ""
    while words and "=" in words[0] and not words[0].startswith("="):
        words = words[1:]  # FOO=bar cmd ...
    if not words:
        return ""
    prefix = [words[0]]
    if len(words) > 1 and _is_subcommand(words[1]):
        prefix.append(words[1])
    return " ".join(prefix)


def _is_subcommand(word: str) -> bool:
    return word.replace("-", "").replace("_", "").isalnum() and not word.startswith("-")


def rule_matches(rule: str, request: ToolRequest) -> bool:
    """Whether a session rule recorded earlier answers ``request``.

    ``tool:<name>``: the same tool. ``cmd:<prefix>``: a shell command with that prefix, no
    chaining, and nothing risky; a rule never covers more than the owner saw.
    """
    if rule.startswith("tool:"):
        return request.tool_name == rule[len("tool:") :] and request.tool_name not in SHELL_TOOLS
    if rule.startswith("cmd:") and request.tool_name in SHELL_TOOLS:
        command = _shell_command(request.tool_input)
        if command is None or has_chaining(command) or command_risks(command):
            return False
        return command_prefix(command) == rule[len("cmd:") :]
    return False
