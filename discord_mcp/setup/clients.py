"""Where each agent client keeps its MCP servers, and what our entry should look like.

=============  =====================================  ========================================
client         user scope                             project scope
=============  =====================================  ========================================
Claude Code    ``~/.claude.json`` ``mcpServers``       ``./.mcp.json`` ``mcpServers``
               (``$CLAUDE_CONFIG_DIR/.claude.json``)  (asks for approval once)
Codex CLI      ``~/.codex/config.toml``               ``./.codex/config.toml`` (trusted
               ``[mcp_servers.discord]``              projects only)
               (``$CODEX_HOME/config.toml``)
Gemini CLI     ``~/.gemini/settings.json``            ``./.gemini/settings.json``
               ``mcpServers.discord``
=============  =====================================  ========================================

Our entry never holds the token: it sets ``DISCORD_MCP_ENV_FILE`` to the ``.env`` written by
``discord-mcp setup`` (mode 0600). The per-client settings that decide whether a decision can
wait are chosen here too (see each builder) and checked by ``discord-mcp doctor``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

Client = Literal["claude", "codex", "gemini"]
Scope = Literal["user", "project"]
CLIENTS: tuple[Client, ...] = ("claude", "codex", "gemini")
SERVER_NAME = "discord"
"""The MCP server name: tools appear as ``mcp__discord__ask_decision``. No ``_``: Gemini splits
``mcp_<server>_<tool>`` on the first underscore."""

CODEX_TOOL_TIMEOUT_S = 900
"""Codex kills a tool call after ``tool_timeout_sec``; we give it 15 minutes..."""
CODEX_BLOCK_S = 870
"""...and tell our server to return ``pending`` well before that."""
GEMINI_TIMEOUT_MS = 600_000
"""Gemini CLI's default; our server returns ``pending`` after 540 s, below it."""


@dataclass(frozen=True, slots=True)
class Location:
    """A client's config file for a scope."""

    client: Client
    scope: Scope
    path: Path


def config_location(
    client: Client, scope: Scope, *, home: Path, cwd: Path, environ: dict[str, str]
) -> Location:
    """Where ``client`` keeps its MCP servers for ``scope``."""
    if client == "claude":
        if scope == "project":
            return Location(client, scope, cwd / ".mcp.json")
        base = Path(environ["CLAUDE_CONFIG_DIR"]) if environ.get("CLAUDE_CONFIG_DIR") else home
        return Location(client, scope, base / ".claude.json")
    if client == "codex":
        if scope == "project":
            return Location(client, scope, cwd / ".codex" / "config.toml")
        base = Path(environ["CODEX_HOME"]) if environ.get("CODEX_HOME") else home / ".codex"
        return Location(client, scope, base / "config.toml")
    directory = cwd if scope == "project" else home
    return Location(client, scope, directory / ".gemini" / "settings.json")


HOOK_MARKERS = ("discord_mcp hook ", "discord-mcp hook ")
"""What every hook command of ours contains, whichever way it starts discord-mcp."""


def from_clone(package_dir: Path | None = None) -> bool:
    """Whether discord-mcp runs from a source tree (a clone, installed editable): its
    ``pyproject.toml`` sits beside the package."""
    directory = package_dir or Path(__file__).resolve().parents[1]
    return (directory.parent / "pyproject.toml").is_file()


def install_source(direct_url: str | None, version: str) -> str:
    """What ``uvx --from`` needs to start this very release again.

    ``direct_url`` is the installed distribution's ``direct_url.json`` (PEP 610), present when
    it came from a wheel file, an archive or a git URL rather than an index.
    """
    try:
        origin = json.loads(direct_url) if direct_url else None
    except ValueError:
        origin = None
    if isinstance(origin, dict) and isinstance(origin.get("url"), str):
        url: str = origin["url"]
        vcs = origin.get("vcs_info")
        if isinstance(vcs, dict) and vcs.get("vcs") == "git":
            commit = vcs.get("commit_id")
            return f"git+{url}@{commit}" if commit else f"git+{url}"
        if "archive_info" in origin:
            if url.startswith("file://"):
                path = Path(unquote(urlsplit(url).path))
                if path.is_file():
                    return str(path)
            else:
                return url
    return f"discord-mcp=={version}"


def _direct_url() -> str | None:
    try:
        return metadata.distribution("discord-mcp").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None


def launcher(
    *,
    clone: bool | None = None,
    find: Callable[[str], str | None] = shutil.which,
    direct_url: str | None = None,
    offline: Callable[[str, str], bool] | None = None,
) -> list[str]:
    """How a client starts ``discord-mcp``: the argv before its arguments.

    From a clone (or without uv): this Python running ``discord_mcp``, an absolute path that
    needs no PATH. Installed from a wheel, a git URL or an index, with uv on PATH:
    ``uvx --offline --from <that source> discord-mcp``, which outlives the environment this
    command runs in (uvx's own environments are a cache) and starts from uv's cache without
    asking the package index; without ``--offline`` when that form was not seen to start
    (``offline(uvx, source)``, default :func:`~discord_mcp.setup.uvx_cache.offline_ready`).
    ``find`` looks a program up on PATH; the arguments default to what this machine says.
    """
    if clone if clone is not None else from_clone():
        return [sys.executable, "-m", "discord_mcp"]
    found = find("uvx")
    if not found:
        return [sys.executable, "-m", "discord_mcp"]
    from discord_mcp import __version__
    from discord_mcp.setup.uvx_cache import offline_ready, uvx_form

    source = install_source(direct_url if direct_url is not None else _direct_url(), __version__)
    ready = (offline or offline_ready)(found, source)
    return uvx_form(found, source, offline=ready)


def server_command(prefix: list[str] | None = None) -> list[str]:
    """How a client starts our server (:func:`launcher`, or ``prefix`` when given)."""
    return list(prefix) if prefix is not None else launcher()


def desired_entry(
    client: Client, env_file: Path | None, *, command: list[str] | None = None
) -> dict[str, Any]:
    """Our server's entry for ``client`` (``command``: how to start it, default
    :func:`server_command`; no ``env_file``: the server reads the default one)."""
    program, *args = server_command(command)
    env = {"DISCORD_MCP_ENV_FILE": str(env_file)} if env_file is not None else {}
    if client == "claude":
        return {"type": "stdio", "command": program, "args": args, "env": env}
    if client == "codex":
        return {
            "command": program,
            "args": args,
            "env": {**env, "DISCORD_MCP_MAX_BLOCK_SECONDS": str(CODEX_BLOCK_S)},
            "startup_timeout_sec": 30,
            "tool_timeout_sec": CODEX_TOOL_TIMEOUT_S,
            # codex exec refuses MCP calls that need approval ("approval policy is never").
            "default_tools_approval_mode": "approve",
            # Without it the first turn may start before the server is up, without its tools.
            "required": True,
        }
    return {
        "command": program,
        "args": args,
        "env": env,  # explicit: Gemini strips inherited variables named like *TOKEN*
        "timeout": GEMINI_TIMEOUT_MS,
        "trust": True,  # headless Gemini offers untrusted servers' tools to nobody
    }


def read_document(location: Location) -> dict[str, Any]:
    """The config file as a dict ({} when missing).

    Raises:
        ValueError: the file exists but is not valid JSON/TOML (we never overwrite it then).
    """
    try:
        raw = location.path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    if not raw.strip():
        return {}
    if location.client == "codex":
        return tomllib.loads(raw)
    document = json.loads(raw)
    if not isinstance(document, dict):
        raise ValueError(f"{location.path} is not a JSON object")
    return document


def entries(location: Location, document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The MCP servers configured in a client's document, by name."""
    key = "mcp_servers" if location.client == "codex" else "mcpServers"
    servers = document.get(key)
    return (
        {k: v for k, v in servers.items() if isinstance(v, dict)}
        if isinstance(servers, dict)
        else {}
    )


def is_ours(entry: dict[str, Any]) -> bool:
    """Whether an MCP server entry starts discord-mcp."""
    parts = [str(entry.get("command") or ""), *map(str, entry.get("args") or [])]
    return any("discord_mcp" in p or p.endswith("discord-mcp") for p in parts)


def find_ours(
    *, home: Path, cwd: Path, environ: dict[str, str]
) -> list[tuple[Location, str, dict[str, Any]]]:
    """Every configured discord-mcp entry, in every client and scope on this machine."""
    found = []
    for client in CLIENTS:
        for scope in ("user", "project"):
            location = config_location(client, scope, home=home, cwd=cwd, environ=environ)
            try:
                document = read_document(location)
            except ValueError:
                continue
            for name, entry in entries(location, document).items():
                if is_ours(entry):
                    found.append((location, name, entry))
    return found


def toml_value(value: Any) -> str:
    """A TOML literal for the simple values our entries use."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # TOML basic strings share JSON's escapes
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def toml_section(name: str, entry: dict[str, Any]) -> str:
    """``[mcp_servers.<name>]`` with one ``key = value`` line per field."""
    lines = [f"[mcp_servers.{name}]"]
    lines.extend(f"{key} = {toml_value(value)}" for key, value in entry.items())
    return "\n".join(lines) + "\n"


def without_toml_section(text: str, name: str) -> str:
    """``text`` with ``[mcp_servers.<name>]`` and its sub-tables removed."""
    headers = {f"[mcp_servers.{name}]", f'[mcp_servers."{name}"]'}
    prefixes = (f"[mcp_servers.{name}.", f'[mcp_servers."{name}".')
    kept: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("["):
            skipping = stripped in headers or stripped.startswith(prefixes)
        if not skipping:
            kept.append(line)
    return "".join(kept).rstrip("\n") + ("\n" if kept else "")


def private_file_mode(path: Path) -> bool:
    """Whether only the owner can read ``path``."""
    return (os.stat(path).st_mode & 0o077) == 0
