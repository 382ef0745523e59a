"""``doctor``'s look at the agent clients: our server entries in each client's settings, the
Claude Code plugin and Gemini CLI extension (:mod:`.bundles_found`), and whether approvals and
the session hooks reach Discord — by ``install``, by a bundle, or twice."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from discord_mcp.setup import bundles_found
from discord_mcp.setup.approvals import EVENTS as APPROVAL_EVENTS
from discord_mcp.setup.approvals import hook_state
from discord_mcp.setup.checks import Check
from discord_mcp.setup.clients import (
    CLIENTS,
    SERVER_NAME,
    config_location,
    entries,
    is_ours,
    read_document,
)
from discord_mcp.setup.session_hooks import EVENTS as SESSION_EVENTS
from discord_mcp.setup.session_hooks import session_hooks_state


def client_checks(*, home: Path, cwd: Path, environ: Mapping[str, str]) -> list[Check]:
    env = dict(environ)
    found: list[Check] = []
    registered_anywhere = False
    registered: set[str] = set()
    seen: set[Path] = set()
    for client in CLIENTS:
        for scope in ("user", "project"):
            location = config_location(client, scope, home=home, cwd=cwd, environ=env)
            if not location.path.exists() or location.path.resolve() in seen:
                continue  # run in ~, Gemini's user and project files are one file
            seen.add(location.path.resolve())
            try:
                document = read_document(location)
            except ValueError as exc:
                found.append(
                    Check("FAIL", f"{client} ({scope})", f"{location.path}: unreadable ({exc})")
                )
                continue
            ours = {n: e for n, e in entries(location, document).items() if is_ours(e)}
            for server_name, entry in ours.items():
                registered_anywhere = True
                registered.add(client)
                found.append(_judge_entry(client, scope, location.path, server_name, entry))
    bundles = bundles_found.found(home=home, cwd=cwd, environ=env)
    for bundle in bundles:
        found.append(_judge_bundle(bundle, twice=bundle.client in registered))
    live = [b for b in bundles if b.enabled]
    registered |= {b.client for b in live}
    registered_anywhere = registered_anywhere or bool(live)
    found += approval_checks(registered, live=live, home=home, cwd=cwd, environ=env)
    found += session_hook_checks(registered, live=live, home=home, cwd=cwd, environ=env)
    if not registered_anywhere:
        found.append(
            Check(
                "WARN",
                "agent clients",
                "discord-mcp is not registered with Claude Code, Codex or Gemini CLI here",
                "discord-mcp install claude   (or codex, gemini)",
            )
        )
    return found


def _judge_bundle(bundle: bundles_found.Bundle, *, twice: bool) -> Check:
    """Our plugin or extension: enabled or not, and whether ``install`` registered the server
    as well (``twice``: the agent would see every tool twice)."""
    name = f"{bundle.client} ({bundle.label()})"
    if not bundle.enabled:
        return Check("OK", name, f"installed but not enabled here (the {bundle.kind} is off)")
    if twice and bundle.servers:
        fix = (
            f"keep one: `{bundle.client} mcp remove {SERVER_NAME}` (the entry `discord-mcp "
            f"install {bundle.client}` wrote), or uninstall the {bundle.kind}"
        )
        return Check(
            "WARN",
            name,
            f"two discord-mcp servers at once: the {bundle.kind}'s "
            f"{', '.join(bundle.servers)} and the one `discord-mcp install {bundle.client}` "
            "registered; the agent sees every tool twice",
            fix,
        )
    servers = ", ".join(bundle.servers) or "none"
    return Check("OK", name, f"server {servers} from the {bundle.kind}")


def _by_bundle(client: str, events: Iterable[str], live: Sequence[bundles_found.Bundle]) -> str:
    """Which enabled bundle of ``client`` wires every one of ``events`` ('' when none does)."""
    for bundle in live:
        if bundle.client == client and set(events) <= bundle.events:
            return bundle.label()
    return ""


def _bundle_check(name: str, bundle: str, also: str | None, remove: str) -> Check:
    """A client's hooks wired by an enabled ``bundle``: fine alone, a warning when ``also``
    (what ``install`` wired besides) says they are wired twice."""
    if also is None:
        return Check("OK", name, f"wired by the {bundle}")
    return Check(
        "WARN",
        name,
        f"wired twice: by the {bundle} and by {also}",
        f"keep one: {remove}, or uninstall the bundle",
    )


def approval_checks(
    registered: set[str],
    *,
    live: Sequence[bundles_found.Bundle] = (),
    home: Path,
    cwd: Path,
    environ: Mapping[str, str],
) -> list[Check]:
    """Whether each client's permission prompts reach Discord (its approval hook, or the
    plugin's or extension's)."""
    checks = []
    for client in CLIENTS:
        state, detail = hook_state(client, home=home, cwd=cwd, environ=environ)
        if client not in registered and state == "absent":
            continue
        name = f"{client} approvals"
        bundle = _by_bundle(client, [APPROVAL_EVENTS[client]], live)
        if bundle and state != "unreadable":
            checks.append(
                _bundle_check(
                    name,
                    bundle,
                    None
                    if state == "absent"
                    else f"`install --approvals` ({detail}); every tool call would be asked twice",
                    f"remove our {APPROVAL_EVENTS[client]} hook from the file install wrote",
                )
            )
        elif state == "wired":
            checks.append(Check("OK", name, f"wired: {detail}"))
        elif state == "needs review":
            checks.append(Check("WARN", name, detail, "start `codex` and trust it with /hooks"))
        elif state == "unreadable":
            checks.append(Check("WARN", name, detail, "fix the file's JSON"))
        elif state in ("broken", "needs reinstall"):
            checks.append(Check("FAIL", name, detail, f"discord-mcp install {client} --approvals"))
        else:
            checks.append(
                Check(
                    "OK",
                    name,
                    "not wired: tool permission prompts stay at the terminal "
                    f"(to answer them from Discord: discord-mcp install {client} --approvals)",
                )
            )
    return checks


def session_hook_checks(
    registered: set[str],
    *,
    live: Sequence[bundles_found.Bundle] = (),
    home: Path,
    cwd: Path,
    environ: Mapping[str, str],
) -> list[Check]:
    """Whether each client has the Stop and SessionStart hooks (``install --hooks``, or the
    plugin's or extension's)."""
    checks = []
    for client in CLIENTS:
        state, detail = session_hooks_state(client, home=home, cwd=cwd, environ=environ)
        if client not in registered and state == "absent":
            continue
        name = f"{client} hooks"
        bundle = _by_bundle(client, SESSION_EVENTS[client], live)
        if bundle and state in ("absent", "wired"):
            checks.append(
                _bundle_check(
                    name,
                    bundle,
                    None if state == "absent" else f"`install --hooks` ({detail})",
                    "remove our hooks from the file install wrote",
                )
            )
        elif state == "wired":
            checks.append(Check("OK", name, f"wired: {detail}"))
        elif state == "needs review":
            fix = (
                "start `codex` and trust them with /hooks"
                if "trusted" in detail
                else f"discord-mcp install {client} --hooks"
            )
            checks.append(Check("WARN", name, detail, fix))
        elif state == "unreadable":
            checks.append(Check("WARN", name, detail, "fix the file's JSON"))
        else:
            checks.append(
                Check(
                    "OK",
                    name,
                    "not wired: an agent may end its turn with a question open and a new "
                    "session relies on check_pending "
                    f"(to wire them: discord-mcp install {client} --hooks)",
                )
            )
    return checks


def _judge_entry(
    client: str, scope: str, path: Path, server_name: str, entry: dict[str, Any]
) -> Check:
    name = f"{client} ({scope}, {path})"
    raw_env = entry.get("env")
    env: dict[str, Any] = raw_env if isinstance(raw_env, dict) else {}
    has_credentials = bool(env) and ("DISCORD_MCP_ENV_FILE" in env or "DISCORD_BOT_TOKEN" in env)
    problems: list[tuple[str, str]] = []
    if "_" in server_name and client == "gemini":
        problems.append(
            (f"server name {server_name!r} has '_'", "rename it: Gemini splits names on '_'")
        )
    if client == "claude":
        timeout = entry.get("timeout")
        if isinstance(timeout, int | float) and timeout < 110_000:
            problems.append(
                (f"per-server timeout {timeout} ms kills waits", "remove it or set >= 120000")
            )
    elif client == "codex":
        if entry.get("default_tools_approval_mode") != "approve":
            problems.append(
                (
                    "codex exec refuses tools that need approval",
                    'set default_tools_approval_mode = "approve"',
                )
            )
        tool_timeout = entry.get("tool_timeout_sec", 300)
        block = env.get("DISCORD_MCP_MAX_BLOCK_SECONDS") if env else None
        if isinstance(tool_timeout, int | float) and tool_timeout < 300 and not block:
            problems.append(
                (
                    f"tool_timeout_sec = {tool_timeout} is shorter than our 270 s wait",
                    f"raise it, or set DISCORD_MCP_MAX_BLOCK_SECONDS below {tool_timeout}",
                )
            )
    elif client == "gemini":
        if entry.get("trust") is not True:
            problems.append(
                ("trust is not true", "set trust: true, or headless Gemini hides the tools")
            )
        timeout = entry.get("timeout", 600_000)
        if isinstance(timeout, int | float) and timeout < 550_000:
            problems.append(
                (f"timeout {timeout} ms is shorter than our 540 s wait", "set timeout: 600000")
            )
        if not has_credentials:
            problems.append(
                (
                    "no explicit env: Gemini strips inherited *TOKEN* variables",
                    "run `discord-mcp install gemini` (it sets DISCORD_MCP_ENV_FILE)",
                )
            )
    if problems:
        return Check(
            "FAIL",
            name,
            "; ".join(p for p, _ in problems),
            "; ".join(f for _, f in problems),
        )
    return Check("OK", name, f"server '{server_name}' registered, timeouts and approval fine")
