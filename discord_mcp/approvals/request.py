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

import json
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from discord_mcp.approvals import preview, shell_rules
from discord_mcp.approvals.changes import file_change
from discord_mcp.approvals.risk import command_risks

Client = Literal["claude", "codex", "gemini", "acp"]
CLIENTS: tuple[Client, ...] = ("claude", "codex", "gemini", "acp")
SHELL_TOOLS = frozenset({"Bash", "run_shell_command", "shell", "exec_command", "local_shell"})
_WORDS_OF_THE_AGENT = frozenset({"description", "justification"})
"""Input keys that explain a call rather than make it (Codex adds ``description`` to the
second ask of one call)."""
_ID_CHARS = 200


def _short(value: object, limit: int = _ID_CHARS) -> str:
    return str(value or "")[:limit]


@dataclass(frozen=True, slots=True)
class ToolRequest:
    """One tool call an agent CLI wants permission for.

    Attributes:
        client: which CLI asks.
        tool_name: the tool as that CLI names it (``Bash``, ``write_file``, ``mcp__x__y``).
        tool_input: the tool's arguments, exactly as the CLI gave them (agent content; any
            size: what is stored of it is a bounded preview, see :meth:`to_json`).
        session_id: the CLI's session (Claude/Gemini session id, Codex thread id); rules for
            "this session" are scoped to it.
        cwd: the agent's working directory, when known.
        route: how it asks (``prompt-tool`` or ``hook``).
        tool_use_id: the call's own id, when the CLI gives one (Claude's prompt tool, Codex's
            ``PreToolUse``).
        turn_id: the turn the call belongs to (Codex's hooks).
        event: the hook event that asks (``PreToolUse``, ``PermissionRequest``,
            ``BeforeTool``; empty for the prompt tool).
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
    turn_id: str | None = field(default=None, compare=False)
    event: str = field(default="", compare=False)
    _hashes: dict[str, str] = field(default_factory=dict, init=False, compare=False, repr=False)
    """Hashes of the input, once computed (it may be large)."""

    def to_json(self) -> dict[str, Any]:
        """The request as stored with its approval: bounded whatever the input's size (a
        preview of the input, and the SHA-256 of the whole)."""
        shown, cut = preview.bounded(dict(self.tool_input))
        return {
            "client": self.client,
            "tool_name": _short(self.tool_name),
            "tool_input": shown,
            "tool_input_sha256": self._hash("input", lambda: dict(self.tool_input)),
            "tool_input_truncated": cut,
            "session_id": _short(self.session_id),
            "cwd": _short(self.cwd, 1000),
            "route": _short(self.route),
            "tool_use_id": _short(self.tool_use_id) or None,
            "turn_id": _short(self.turn_id) or None,
            "event": _short(self.event),
            "attended": self.attended,
            "fingerprint": self.fingerprint(),
            "subject": self.subject(),
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> ToolRequest:
        """A stored request (its input as stored: a preview when it was large)."""
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
            turn_id=document.get("turn_id") or None,
            event=str(document.get("event") or ""),
        )

    def fingerprint(self) -> str:
        """Same tool, same input, same session: the same request (a retry, or a double ask).
        Of the whole input, however large."""
        return self._hash(
            "fingerprint",
            lambda: [self.client, self.session_id, self.tool_name, dict(self.tool_input)],
        )[:16]

    def subject(self) -> str:
        """What the call does, without the agent's words about it: the command of a shell
        call, else the input without its description. Codex's two asks for one call have the
        same subject (the second adds a ``description``)."""

        def what() -> Any:
            command = _shell_command(self.tool_input) if self.tool_name in SHELL_TOOLS else None
            core: Any = command
            if command is None:
                core = {k: v for k, v in self.tool_input.items() if k not in _WORDS_OF_THE_AGENT}
            return [self.client, self.session_id, self.tool_name, core]

        return self._hash("subject", what)[:16]

    def _hash(self, name: str, value: Callable[[], Any]) -> str:
        if name not in self._hashes:
            self._hashes[name] = preview.digest(value())
        return self._hashes[name]


@dataclass(frozen=True, slots=True)
class Action:
    """What a request would do, for the card and for session rules. Every text here is
    bounded (:mod:`~discord_mcp.approvals.preview`): it is stored with the approval.

    Attributes:
        title: "Run a shell command", "Write a file", ...
        command: the shell command (its start, with a marker, when it is very long).
        path: the file it changes, if it is a file change.
        diff: a unified diff of the change (the card truncates it visibly).
        detail: the input of any other tool, as JSON.
        reason: why the agent says it wants this (its description or justification).
        risks: short phrases for the card's warning ("recursive delete", ...).
        rule: the session rule "Allow for this session" records (``shell:{...}``, see
            :mod:`~discord_mcp.approvals.shell_rules`, or ``tool:<name>``); empty when only
            this exact request can be covered.
        rule_label: that rule in English words (the card words it from ``rule`` itself).
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


LONG_COMMAND = shell_rules.MAX_LENGTH
"""A longer command is flagged on the card, never covered by a rule, and shown in part."""
_RULE_BYTES = 2048


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def describe(request: ToolRequest) -> Action:
    """Read ``request`` into an :class:`Action` (never raises on odd input; bounded in time
    and size whatever the input's size)."""
    name = request.tool_name
    arguments = request.tool_input
    reason = _text(arguments.get("description")) or _text(arguments.get("justification"))
    reason = preview.clip(reason, 1024) if reason else None
    if name in SHELL_TOOLS:
        command = _shell_command(arguments)
        if command is not None:
            return _shell_action(command, reason)
    change = file_change(name, arguments, request.cwd)
    if change is not None:
        return Action(
            title=change.title,
            path=preview.clip(change.path, 1024),
            diff=preview.clip(change.diff),
            reason=reason,
            risks=change.risks,
            rule=f"tool:{name}",
            rule_label=f"the `{name}` tool",
        )
    shown, _ = preview.bounded(dict(arguments), preview.TEXT_BYTES)
    detail = json.dumps(shown, ensure_ascii=False, indent=1, default=str)
    return Action(
        title=f"Use the tool `{name}`",
        detail=detail,
        reason=reason,
        rule=f"tool:{name}",
        rule_label=f"the `{name}` tool",
    )


def _shell_action(command: str, reason: str | None) -> Action:
    if len(command) > LONG_COMMAND:
        risks: tuple[str, ...] = (f"very long command ({len(command):,} characters)",)
        rule = None
    else:
        risks = command_risks(command)
        rule = shell_rules.rule_for(command)
    stored = rule.to_rule() if rule is not None else ""
    if len(stored.encode()) > _RULE_BYTES:
        stored, rule = "", None
    return Action(
        title="Run a shell command",
        command=preview.clip(command),
        reason=reason,
        risks=risks,
        rule=stored,
        rule_label=rule.describe() if rule is not None else "",
    )


def _shell_command(arguments: Mapping[str, Any]) -> str | None:
    for key in ("command", "cmd"):
        value = arguments.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(part, str) for part in value):
            return shlex.join(value)
    return None


def shell_command(request: ToolRequest) -> str | None:
    """The shell command a request runs, if it runs one."""
    if request.tool_name not in SHELL_TOOLS:
        return None
    return _shell_command(request.tool_input)


def rule_matches(rule: str, request: ToolRequest) -> bool:
    """Whether a session rule recorded earlier answers ``request``.

    ``tool:<name>``: the same tool (never the shell). ``shell:{...}``: a shell command the
    rule covers (:meth:`~discord_mcp.approvals.shell_rules.CommandRule.covers`). Any other
    rule (such as the ``cmd:<prefix>`` rules of earlier versions) answers nothing.
    """
    if rule.startswith("tool:"):
        return request.tool_name == rule[len("tool:") :] and request.tool_name not in SHELL_TOOLS
    command = shell_command(request)
    return command is not None and shell_rules.covers(rule, command)


def rule_words(rule: str, lang: str = "en") -> str:
    """What ``rule`` covers, in words for the card ("" when it covers one request only)."""
    if rule.startswith("tool:"):
        return f"the `{rule[len('tool:') :]}` tool"
    return shell_rules.describe(rule, lang)
