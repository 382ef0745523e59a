"""``discord-mcp install <client> --hooks``: the hooks that keep an agent from forgetting its
questions (:mod:`discord_mcp.hooks.stop`, :mod:`discord_mcp.hooks.session_start`), and what
``doctor`` says about them.

============  ==============================================  ==================================
client        file (user scope / ``--scope project``)         events
============  ==============================================  ==================================
Claude Code   ``~/.claude/settings.json`` / ``.claude/…``     ``Stop``, ``SessionStart``
Codex         ``~/.codex/hooks.json`` / ``.codex/…``          ``Stop``, ``SessionStart`` (run
                                                              once trusted in ``/hooks``)
Gemini CLI    ``~/.gemini/settings.json`` / ``.gemini/…``     ``AfterAgent``, ``SessionStart``
============  ==============================================  ==================================

All three take the same answers (``{"decision": "block", "reason"}`` to go on instead of
stopping; ``hookSpecificOutput.additionalContext`` at a session's start). The files are the
ones ``install --approvals`` writes (:mod:`discord_mcp.setup.approvals`), merged the same way:
idempotent, backed up before a change, every other hook kept, and a file that cannot be parsed
never overwritten. The command names this Python and the ``.env`` written by ``setup``.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from discord_mcp.errors import ConfigError
from discord_mcp.setup.approvals import hook_file, read_hooks_document
from discord_mcp.setup.clients import HOOK_MARKERS, Client, Scope, server_command

if TYPE_CHECKING:
    from discord_mcp.setup.install import Backups

TIMEOUT_S = 30
"""The hooks read local files only; they answer well within this."""
EVENTS: dict[Client, dict[str, str]] = {
    "claude": {"Stop": "stop", "SessionStart": "session-start"},
    "codex": {"Stop": "stop", "SessionStart": "session-start"},
    "gemini": {"AfterAgent": "stop", "SessionStart": "session-start"},
}
"""Per client: its event name -> our hook (``discord-mcp hook <name>``)."""
State = Literal["wired", "needs review", "absent", "unreadable"]


def hook_command(
    client: Client, name: str, env_file: Path | None, prefix: list[str] | None = None
) -> str:
    """The shell command (``prefix`` and ``env_file`` as for the approval hook's)."""
    argv = [*server_command(prefix), "hook", name, "--client", client]
    # --timeout: the hook gives up (quietly) before the client would kill it.
    timing = ["--timeout", str(TIMEOUT_S)]
    return shlex.join([*argv, *timing, *(["--env-file", str(env_file)] if env_file else [])])


def _markers(name: str) -> tuple[str, ...]:
    return tuple(f"{marker}{name} " for marker in HOOK_MARKERS)


def desired_group(
    client: Client, name: str, env_file: Path | None, prefix: list[str] | None = None
) -> dict[str, Any]:
    command = hook_command(client, name, env_file, prefix)
    if client == "gemini":
        handler = {
            "type": "command",
            "name": f"discord-mcp {name}",
            "command": command,
            "timeout": TIMEOUT_S * 1000,  # milliseconds
        }
        return {"hooks": [handler]}
    return {"hooks": [{"type": "command", "command": command, "timeout": TIMEOUT_S}]}


def _is_ours(group: Any, name: str) -> bool:
    return isinstance(group, dict) and any(
        isinstance(h, dict) and any(marker in f"{h.get('command')} " for marker in _markers(name))
        for h in group.get("hooks") or []
    )


@dataclass(frozen=True, slots=True)
class SessionHooksInstall:
    """What ``install --hooks`` did."""

    client: Client
    path: Path
    changed: bool
    backup: Path | None

    def describe(self) -> str:
        events = " and ".join(EVENTS[self.client])
        if not self.changed:
            return f"{self.path}\n  already up to date: the {events} hooks"
        lines = [
            f"{self.path}\n  * {events} hooks: no turn ends while a question is open, and a "
            "new session gets the answers that came while away"
        ]
        if self.backup is not None:
            lines.append(f"  backup of the previous file: {self.backup}")
        if self.client == "codex":
            lines.append(
                "  Codex runs a new hook only once you trust it: start `codex` and review it "
                "with /hooks."
            )
        return "\n".join(lines)


def install_session_hooks(
    client: Client,
    scope: Scope,
    *,
    env_file: Path,
    home: Path,
    cwd: Path,
    environ: Mapping[str, str],
    backups: Backups | None = None,
) -> SessionHooksInstall:
    """Add (or update) our Stop/SessionStart hooks in the client's file.

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
    found = document.get("hooks")
    hooks: dict[str, Any] = dict(found) if isinstance(found, dict) else {}
    changed = False
    for event, name in EVENTS[client].items():
        groups = list(hooks[event]) if isinstance(hooks.get(event), list) else []
        desired = desired_group(client, name, env_file)
        if [g for g in groups if _is_ours(g, name)] == [desired]:
            continue
        hooks[event] = [*(g for g in groups if not _is_ours(g, name)), desired]
        changed = True
    if not changed:
        return SessionHooksInstall(client, path, False, None)
    document["hooks"] = hooks
    saved = backup(path, backups)
    write_text(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return SessionHooksInstall(client, path, True, saved)


def session_hooks_state(
    client: Client, *, home: Path, cwd: Path, environ: Mapping[str, str]
) -> tuple[State, str]:
    """Whether both hooks are wired for ``client`` (either scope), in words for ``doctor``."""
    for scope in ("project", "user"):
        path = hook_file(client, scope, home=home, cwd=cwd, environ=environ)
        try:
            document = read_hooks_document(path)
        except (ValueError, OSError) as exc:
            return "unreadable", f"{path}: {exc}"
        hooks = document.get("hooks") if isinstance(document.get("hooks"), dict) else {}
        wired = [
            event
            for event, name in EVENTS[client].items()
            if isinstance(hooks, dict)
            and isinstance(hooks.get(event), list)
            and any(_is_ours(g, name) for g in hooks[event])
        ]
        if not wired:
            continue
        missing = [event for event in EVENTS[client] if event not in wired]
        if missing:
            return "needs review", f"{path}: only {', '.join(wired)} (run install --hooks again)"
        if client == "codex" and not _codex_trusted(path, home=home, environ=environ):
            return "needs review", f"{path}: installed, but Codex runs them only once trusted"
        return "wired", f"{' and '.join(wired)} hooks in {path}"
    return "absent", "no Stop/SessionStart hooks"


def _codex_trusted(path: Path, *, home: Path, environ: Mapping[str, str]) -> bool:
    """Whether Codex recorded trust for both our hooks of ``path``."""
    base = Path(environ["CODEX_HOME"]) if environ.get("CODEX_HOME") else home / ".codex"
    try:
        config = tomllib.loads((base / "config.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return False
    states = (config.get("hooks") or {}).get("state") or {}
    trusted = {
        event
        for key, value in states.items()
        for event in (":stop:", ":session_start:")
        if isinstance(value, dict)
        and key.startswith(str(path))
        and event in key
        and value.get("trusted_hash")
    }
    return trusted == {":stop:", ":session_start:"}
