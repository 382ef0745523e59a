"""``discord-mcp install <client> --approvals``: the hook that sends a client's permission
prompts to Discord, and what ``doctor`` says about it.

============  ==============================================  ====================================
client        file (user scope / ``--scope project``)         hook
============  ==============================================  ====================================
Claude Code   ``~/.claude/settings.json``                     ``PermissionRequest``: ``discord-mcp
              (``$CLAUDE_CONFIG_DIR``) / ``.claude/…``        hook permission-request``
Codex         ``~/.codex/hooks.json`` (``$CODEX_HOME``) /     ``PermissionRequest`` (``--client
              ``.codex/hooks.json``                           codex``); Codex runs it once trusted
Gemini CLI    ``~/.gemini/settings.json`` /                   ``BeforeTool``: ``discord-mcp hook
              ``.gemini/settings.json``                       before-tool`` (harmless reads pass
                                                              unasked: ``hooks.reads``)
============  ==============================================  ====================================

The hook's command names this Python and the ``.env`` written by ``setup`` (``--env-file``):
the client's config never holds the token. It waits :data:`WAIT_S` for the owner, the client's
hook timeout is :data:`TIMEOUT_S`, and ``--timeout`` tells the hook so: it always answers
first, and blocks the call on any failure (:mod:`discord_mcp.hooks.guard`). The clients run
the command through a shell (Claude Code ``/bin/sh -c``, Codex the user's bash or zsh, Gemini
CLI ``bash -c``; the table of what each does with a hook's end is in
:mod:`~discord_mcp.hooks.guard`), and the command is the hook followed by a POSIX wrapper,
``|| { ...; exit 2; }`` (:func:`~discord_mcp.hooks.guard.command`): a hook that is killed (the
OOM killer, ``kill -9``), or whose Python cannot start, ends with exit code 2 and a sentence on
stderr, which blocks the call in all three (without it, Codex and Gemini CLI run the call). Like
``install`` itself: idempotent (an entry as it should be leaves the file untouched), the file
backed up before a change, everything else in it kept, and a file that cannot be parsed never
overwritten. A changed command is a new hook to Codex: it runs it once trusted again.

``doctor`` (:func:`hook_state`) also says when an installed hook cannot work: its program is
gone (the client would let every call run), it does not know its timeout or thinks it longer
than it is (its answer could come after the client gave up on it), the timeout leaves no time to
ask, or its env file is gone (every call would be blocked); and that a hook without the wrapper
(installed by an older discord-mcp) needs reinstalling, since it fails open when killed.
"""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from discord_mcp.config import DEFAULT_APPROVAL_WAIT_S
from discord_mcp.errors import ConfigError
from discord_mcp.hooks import before_tool, guard
from discord_mcp.setup.clients import HOOK_MARKERS, Client, Scope, server_command

if TYPE_CHECKING:
    from discord_mcp.setup.install import Backups

WAIT_S = DEFAULT_APPROVAL_WAIT_S
TIMEOUT_S = WAIT_S + 30
HOOK_NAME = "discord-mcp approvals"
"""Gemini hooks carry a name; a ``discord-watch`` run replaces the hook of this name with its
own, so a run never asks twice."""
EVENTS: dict[Client, str] = {
    "claude": "PermissionRequest",
    "codex": "PermissionRequest",
    "gemini": "BeforeTool",
}
State = Literal["wired", "needs review", "needs reinstall", "absent", "unreadable", "broken"]
MIN_BUDGET_S = 10.0
"""A hook whose timeout leaves it less than this cannot post a card and wait for an answer."""


def hook_file(
    client: Client, scope: Scope, *, home: Path, cwd: Path, environ: Mapping[str, str]
) -> Path:
    """Where ``client`` keeps its hooks for ``scope``."""
    if client == "claude":
        if scope == "project":
            return cwd / ".claude" / "settings.json"
        base = Path(environ["CLAUDE_CONFIG_DIR"]) if environ.get("CLAUDE_CONFIG_DIR") else None
        return (base or home / ".claude") / "settings.json"
    if client == "codex":
        if scope == "project":
            return cwd / ".codex" / "hooks.json"
        base = Path(environ["CODEX_HOME"]) if environ.get("CODEX_HOME") else home / ".codex"
        return base / "hooks.json"
    return (cwd if scope == "project" else home) / ".gemini" / "settings.json"


def hook_command(client: Client, env_file: Path | None, prefix: list[str] | None = None) -> str:
    """The shell command the client runs (it runs hooks through a shell: quoted, and wrapped so
    that a killed hook blocks the call: :func:`~discord_mcp.hooks.guard.command`).

    ``prefix`` starts discord-mcp (default :func:`~discord_mcp.setup.clients.launcher`); no
    ``env_file``: the hook reads the default one (a plugin's or an extension's hooks).
    """
    event = "before-tool" if client == "gemini" else "permission-request"
    argv = [*server_command(prefix), "hook", event, "--client", client]
    timing = ["--wait", f"{WAIT_S:g}", "--timeout", f"{TIMEOUT_S:g}"]
    return guard.command([*argv, *timing, *(["--env-file", str(env_file)] if env_file else [])])


def desired_group(
    client: Client, env_file: Path | None, prefix: list[str] | None = None
) -> dict[str, Any]:
    """Our matcher group for the client's hook event."""
    command = hook_command(client, env_file, prefix)
    if client == "gemini":
        handler = {
            "type": "command",
            "name": HOOK_NAME,
            "command": command,
            "timeout": int(TIMEOUT_S * 1000),  # milliseconds
        }
        return {"matcher": before_tool.matcher(ask_all=False), "hooks": [handler]}
    handler = {"type": "command", "command": command, "timeout": int(TIMEOUT_S)}
    if client == "claude":
        return {"matcher": "*", "hooks": [handler]}
    return {"hooks": [handler]}  # Codex: no matcher means every tool


def _is_ours(group: Any) -> bool:
    return isinstance(group, dict) and any(
        isinstance(h, dict)
        and (
            any(marker in str(h.get("command")) for marker in HOOK_MARKERS)
            or h.get("name") == HOOK_NAME
        )
        for h in group.get("hooks") or []
    )


def read_hooks_document(path: Path) -> dict[str, Any]:
    """The hook file as a dict ({} when missing).

    Raises:
        ValueError: it exists but is not a JSON object.
    """
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    if not raw.strip():
        return {}
    document = json.loads(raw)
    if not isinstance(document, dict):
        raise ValueError(f"{path} is not a JSON object")
    return document


@dataclass(frozen=True, slots=True)
class HookInstall:
    """What ``install --approvals`` did."""

    client: Client
    path: Path
    changed: bool
    backup: Path | None

    def describe(self) -> str:
        event = EVENTS[self.client]
        if not self.changed:
            return f"{self.path}\n  already up to date: the {event} hook sends approvals to Discord"
        lines = [f"{self.path}\n  * {event} hook: approvals go to Discord ({HOOK_NAME})"]
        if self.backup is not None:
            lines.append(f"  backup of the previous file: {self.backup}")
        if self.client == "codex":
            lines.append(
                "  Codex runs a new hook only once you trust it: start `codex` and review it "
                "with /hooks."
            )
        if self.client == "gemini":
            lines.append(
                "  Gemini still confirms at the terminal after an Allow unless you run it with "
                "--approval-mode=yolo (or auto_edit for edits)."
            )
        return "\n".join(lines)


def install_hook(
    client: Client,
    scope: Scope,
    *,
    env_file: Path,
    home: Path,
    cwd: Path,
    environ: Mapping[str, str],
    backups: Backups | None = None,
) -> HookInstall:
    """Add (or update) our hook in the client's file.

    Raises:
        ConfigError: the file cannot be parsed (it is left as it is).
    """
    from discord_mcp.setup.install import backup, write_text

    path = hook_file(client, scope, home=home, cwd=cwd, environ=environ)
    try:
        document = read_hooks_document(path)
    except ValueError as exc:
        raise ConfigError(
            str(path),
            f"cannot be parsed ({str(exc)[:120]})",
            "Fix or move the file, then run install again; it was not changed",
        ) from None
    event = EVENTS[client]
    found = document.get("hooks")
    hooks: dict[str, Any] = found if isinstance(found, dict) else {}
    groups = list(hooks[event]) if isinstance(hooks.get(event), list) else []
    desired = desired_group(client, env_file)
    if [g for g in groups if _is_ours(g)] == [desired]:
        return HookInstall(client, path, False, None)
    kept = [g for g in groups if not _is_ours(g)]
    document["hooks"] = {**hooks, event: [*kept, desired]}
    saved = backup(path, backups)
    write_text(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return HookInstall(client, path, True, saved)


def hook_state(
    client: Client, *, home: Path, cwd: Path, environ: Mapping[str, str]
) -> tuple[State, str]:
    """Whether approvals are wired for ``client`` (either scope), in words for ``doctor``."""
    for scope in ("project", "user"):
        path = hook_file(client, scope, home=home, cwd=cwd, environ=environ)
        try:
            document = read_hooks_document(path)
        except (ValueError, OSError) as exc:
            return "unreadable", f"{path}: {exc}"
        hooks = document.get("hooks") if isinstance(document.get("hooks"), dict) else {}
        groups = hooks.get(EVENTS[client]) if isinstance(hooks, dict) else None
        if not isinstance(groups, list) or not any(_is_ours(g) for g in groups):
            continue
        handlers = [h for g in groups if _is_ours(g) for h in g.get("hooks") or []]
        for handler in handlers:
            if isinstance(handler, dict) and (problem := handler_problem(client, handler)):
                return "broken", f"{EVENTS[client]} hook in {path}: {problem}"
        for handler in handlers:
            if isinstance(handler, dict) and not guard.fails_closed(str(handler.get("command"))):
                return "needs reinstall", (
                    f"{EVENTS[client]} hook in {path}: needs reinstall, it fails open when "
                    "killed (installed by an older discord-mcp: a hook process that is killed, "
                    "by the OOM killer say, would let the call run)"
                )
        if client == "codex" and not _codex_trusted(path, home=home, environ=environ):
            return "needs review", f"{path}: installed, but Codex runs it only once trusted"
        return "wired", f"{EVENTS[client]} hook in {path}"
    return "absent", "no approval hook"


def handler_problem(client: Client, handler: Mapping[str, Any]) -> str | None:
    """Why our hook ``handler`` cannot guard ``client``'s calls as configured (None: it can)."""
    from discord_mcp.hooks.guard import DEFAULT_TIMEOUT_S, budget

    argv = guard.hook_words(str(handler.get("command") or ""))
    if not argv:
        return "its command cannot be read"
    program = argv[0]
    if not (os.path.isfile(program) and os.access(program, os.X_OK)) and not (
        os.sep not in program and shutil.which(program)
    ):
        return f"its program {program} is gone, so the client would let every call run"
    configured = handler.get("timeout")
    if isinstance(configured, int | float) and not isinstance(configured, bool):
        seconds = configured / 1000 if client == "gemini" else float(configured)
    else:
        seconds = DEFAULT_TIMEOUT_S[client]
    said = _option(argv, "--timeout")
    if said is None:
        return (
            f"it does not know the client's timeout for it ({seconds:g} s; installed by an older "
            "discord-mcp), so it may answer after the client stopped waiting"
        )
    try:
        if float(said) > seconds:
            return (
                f"it believes it has {said} s but the client gives it {seconds:g} s, so it may "
                "answer after the client stopped waiting and the call would run"
            )
    except ValueError:
        return f"its --timeout {said!r} is not a number, so it blocks every call"
    if budget(seconds, client) < MIN_BUDGET_S:
        return f"its timeout ({seconds:g} s) leaves no time to ask the owner: every call is blocked"
    env_file = _option(argv, "--env-file")
    if env_file is not None and not Path(env_file).expanduser().is_file():
        return f"its env file {env_file} is missing, so it blocks every call"
    return None


def _option(argv: list[str], name: str) -> str | None:
    for index, word in enumerate(argv):
        if word == name and index + 1 < len(argv):
            return argv[index + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


def _codex_trusted(path: Path, *, home: Path, environ: Mapping[str, str]) -> bool:
    """Whether Codex recorded trust for a PermissionRequest hook of ``path``."""
    base = Path(environ["CODEX_HOME"]) if environ.get("CODEX_HOME") else home / ".codex"
    try:
        config = tomllib.loads((base / "config.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return False
    states = (config.get("hooks") or {}).get("state") or {}
    return any(
        key.startswith(str(path)) and ":permission_request:" in key and value.get("trusted_hash")
        for key, value in states.items()
        if isinstance(value, dict)
    )
