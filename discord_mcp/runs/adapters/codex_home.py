"""A chat's own ``CODEX_HOME`` (issue 34): the owner's Codex home never reaches a chat's turn.

Theory. Codex reads its home (``$CODEX_HOME``, default ``~/.codex``) at every start: its
``config.toml`` (MCP servers, hooks, profiles, instructions, trusted projects, ...), its
``AGENTS.md`` (added to the turn's instructions; no setting skips it), its skills and prompts,
and its sessions. A chat channel's Codex turns (a stranger's above all) must see none of the
owner's, so each chat channel gets a home of its own, ``<state>/chat/<channel id>/codex-home/``,
rebuilt before each turn from what Codex needs to reach its model and nothing else:

- ``auth.json`` (the login: an API key or a ChatGPT sign-in), copied as it is, 0600;
- from ``config.toml``, only the keys that choose and reach the model
  (:data:`MODEL_KEYS`), and the tables that switch off update checks, analytics and feedback
  and features (only their ``false`` entries: a chat's turn never gets a feature the owner
  turned on).

Nothing else is copied: no ``AGENTS.md``, no MCP server, no hook, no profile, no skill. The
home's own ``sessions/`` stay in it, so a chat that keeps its session resumes there.

Fail closed: an owner's ``config.toml`` that cannot be read or parsed, a login that cannot be
copied, or a home that cannot be written fails the turn (``E_CODEX_HOME``) rather than run Codex
with the owner's home.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError
from discord_mcp.runs.engine.launch import private_dirs, write_private

VARIABLE = "CODEX_HOME"
FOLDER = "codex-home"
AUTH_FILE = "auth.json"
CONFIG_FILE = "config.toml"
MODEL_KEYS = (
    "model",
    "model_provider",
    "model_providers",
    "model_reasoning_effort",
    "model_reasoning_summary",
    "model_verbosity",
    "model_context_window",
    "model_max_output_tokens",
    "model_supports_reasoning_summaries",
    "openai_base_url",
    "chatgpt_base_url",
    "forced_login_method",
    "preferred_auth_method",
    "forced_chatgpt_workspace_id",
    "cli_auth_credentials_store",
    "check_for_update_on_startup",
)
"""The keys of the owner's ``config.toml`` a chat's home keeps: the model, where, how to sign in."""
OFF_TABLES = ("analytics", "feedback", "features")
"""Tables whose ``false`` entries are kept (switching something off never opens a turn)."""
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def owner_home(env: Mapping[str, str]) -> Path:
    """The Codex home the CLI would read with ``env``."""
    if env.get(VARIABLE):
        return Path(env[VARIABLE])
    return Path(env.get("HOME") or Path.home()) / ".codex"


def chat_home(chat_folder: Path, env: Mapping[str, str]) -> Path:
    """Make (again) the chat's own Codex home in ``chat_folder`` from the owner's (blocking).

    Raises:
        RunError: E_CODEX_HOME, it cannot be made (the turn must not run with the owner's).
    """
    source = owner_home(env)
    home = chat_folder / FOLDER
    if home.resolve() == source.resolve():
        raise RunError("E_CODEX_HOME", f"{home} is the owner's Codex home itself")
    try:
        config = _model_config(source / CONFIG_FILE)
        private_dirs(home)
        write_private(home / CONFIG_FILE, config)
        for stray in ("AGENTS.md", "AGENTS.override.md", "hooks.json"):
            (home / stray).unlink(missing_ok=True)
        login = source / AUTH_FILE
        target = home / AUTH_FILE
        if login.is_file():
            shutil.copyfile(login, target)
            os.chmod(target, 0o600)
        else:
            target.unlink(missing_ok=True)
    except OSError as exc:
        raise RunError(
            "E_CODEX_HOME", f"the chat's own Codex home {home} could not be made: {exc}"
        ) from None
    return home


def _model_config(path: Path) -> str:
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ""
    except (OSError, ValueError) as exc:
        raise RunError(
            "E_CODEX_HOME",
            f"Codex's {path} cannot be read ({exc}), so a chat's own Codex home cannot take "
            "the model settings from it: fix the file",
        ) from None
    kept: dict[str, Any] = {key: document[key] for key in MODEL_KEYS if key in document}
    for table in OFF_TABLES:
        entries = document.get(table)
        if isinstance(entries, dict):
            off = {k: v for k, v in entries.items() if v is False}
            off |= {"enabled": False} if entries.get("enabled") is False else {}
            if off:
                kept[table] = off
    return dumps(kept)


def dumps(document: Mapping[str, Any]) -> str:
    """``document`` as TOML (scalars, arrays and nested tables: what a config holds)."""
    lines: list[str] = []
    _table(lines, (), document)
    return "\n".join(lines) + "\n" if lines else ""


def _table(lines: list[str], path: tuple[str, ...], table: Mapping[str, Any]) -> None:
    plain = {k: v for k, v in table.items() if not isinstance(v, dict)}
    nested = {k: v for k, v in table.items() if isinstance(v, dict)}
    if path and plain:
        lines.append(f"[{'.'.join(_key(p) for p in path)}]")
    lines += [f"{_key(k)} = {_value(v)}" for k, v in plain.items()]
    for key, value in nested.items():
        _table(lines, (*path, key), value)


def _key(key: str) -> str:
    return key if _BARE.match(key) else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise RunError("E_CODEX_HOME", f"a model setting of Codex's config is odd: {value!r}")
