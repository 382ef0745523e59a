"""``discord-mcp install claude|codex|gemini [--scope user|project]``: register the server.

Idempotent: an entry already as it should be is left alone (and the file untouched). Otherwise
the file is backed up (``<file>.bak-<time>``) and rewritten, keeping everything else in it, and
the change is printed. A config file that cannot be parsed is never overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_mcp.errors import ConfigError
from discord_mcp.setup.clients import (
    SERVER_NAME,
    Client,
    Location,
    Scope,
    config_location,
    desired_entry,
    entries,
    read_document,
    toml_section,
    without_toml_section,
)
from discord_mcp.state.files import FILE_MODE, ensure_dir


@dataclass(frozen=True, slots=True)
class InstallResult:
    """What ``install`` did."""

    location: Location
    changed: bool
    backup: Path | None
    before: dict[str, Any] | None
    after: dict[str, Any]

    def describe(self) -> str:
        """What a person reads after running the command."""
        where = f"{self.location.client} ({self.location.scope} scope): {self.location.path}"
        if not self.changed:
            up = f"{where}\n  already up to date: server '{SERVER_NAME}' is registered"
            return "\n".join([up, *self._advice()])
        verb = "updated" if self.before is not None else "added"
        lines = [f"{where}\n  {verb} server '{SERVER_NAME}':"]
        for key, value in self.after.items():
            old = (self.before or {}).get(key, "<none>")
            mark = "  " if old == value else "* "
            lines.append(f"    {mark}{key} = {json.dumps(value)}")
        if self.backup is not None:
            lines.append(f"  backup of the previous file: {self.backup}")
        if self.location.client == "claude" and self.location.scope == "project":
            lines.append("  Claude Code asks once to approve project servers: run `claude` here.")
        if self.location.client == "codex" and self.location.scope == "project":
            lines.append("  Codex reads project config only in trusted projects.")
        return "\n".join(lines + self._advice())

    def _advice(self) -> list[str]:
        from discord_mcp.setup.uvx_cache import offline_advice

        command = self.after.get("command")
        argv = [str(command), *map(str, self.after.get("args") or [])] if command else []
        said = offline_advice(argv)
        return [f"  note: {said}"] if said else []


def install(
    client: Client,
    scope: Scope,
    *,
    env_file: Path,
    home: Path,
    cwd: Path,
    environ: dict[str, str],
    backups: Backups | None = None,
) -> InstallResult:
    """Register discord-mcp with ``client``.

    Raises:
        ConfigError: the env file is missing, or the client's config file is unreadable.
    """
    env_file = env_file.expanduser().resolve()
    if not env_file.is_file():
        raise ConfigError(
            "--env-file",
            f"{env_file} does not exist",
            "Run `discord-mcp setup` first (it writes .env), or pass --env-file PATH",
        )
    location = config_location(client, scope, home=home, cwd=cwd, environ=environ)
    try:
        document = read_document(location)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(
            str(location.path),
            f"cannot be parsed ({str(exc)[:120]})",
            "Fix or move the file, then run install again; it was not changed",
        ) from None
    desired = desired_entry(client, env_file)
    current = entries(location, document).get(SERVER_NAME)
    if current is not None and all(current.get(k) == v for k, v in desired.items()):
        return InstallResult(location, False, None, current, desired)
    saved = backup(location.path, backups)
    if client == "codex":
        _write_codex(location.path, desired)
    else:
        document.setdefault("mcpServers", {})[SERVER_NAME] = desired
        write_text(location.path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return InstallResult(location, True, saved, current, desired)


def install_url(
    scope: Scope,
    *,
    url: str,
    home: Path,
    cwd: Path,
    environ: dict[str, str],
    backups: Backups | None = None,
) -> InstallResult:
    """Register a running ``discord-mcp serve --http`` with Claude Code by its URL
    (``{"type": "http", "url": ...}``): the server holds the settings, so no ``.env`` is named.

    Raises:
        ConfigError: the URL is not http(s), or the client's config file is unreadable.
    """
    if not url.startswith(("http://", "https://")):
        raise ConfigError(
            "--url", f"{url!r} is not an http(s) URL", "Give e.g. http://127.0.0.1:8765/mcp"
        )
    location = config_location("claude", scope, home=home, cwd=cwd, environ=environ)
    try:
        document = read_document(location)
    except ValueError as exc:
        raise ConfigError(
            str(location.path),
            f"cannot be parsed ({str(exc)[:120]})",
            "Fix or move the file, then run install again; it was not changed",
        ) from None
    desired = {"type": "http", "url": url}
    current = entries(location, document).get(SERVER_NAME)
    if current == desired:
        return InstallResult(location, False, None, current, desired)
    saved = backup(location.path, backups)
    document.setdefault("mcpServers", {})[SERVER_NAME] = desired
    write_text(location.path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return InstallResult(location, True, saved, current, desired)


class Backups:
    """The backups of one ``install`` run: each file is copied once, before its first change,
    under a name no other backup has.

    ``install claude --approvals --hooks`` changes ``settings.json`` twice; its backup must be
    the file as it was before the run, never the half-changed one in between.
    """

    def __init__(self) -> None:
        self._saved: dict[Path, Path | None] = {}

    def save(self, path: Path) -> Path | None:
        """Back up ``path`` unless this run already did (None when it did not exist)."""
        key = path.absolute()
        if key not in self._saved:
            self._saved[key] = _copy_aside(path)
        return self._saved[key]


def _copy_aside(path: Path) -> Path | None:
    if not path.exists():
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for number in range(1000):
        target = path.with_name(f"{path.name}.bak-{stamp}" + (f"-{number}" if number else ""))
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        os.close(fd)
        shutil.copy2(path, target)
        return target
    raise ConfigError(str(path), "has too many backups", "Remove old .bak-* files beside it")


def backup(path: Path, backups: Backups | None = None) -> Path | None:
    """Copy ``path`` aside before it is changed (None if it is new); once per ``backups``."""
    return (backups or Backups()).save(path)


def _write_codex(path: Path, entry: dict[str, Any]) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    kept = without_toml_section(text, SERVER_NAME)
    updated = (kept + "\n" if kept.strip() else "") + toml_section(SERVER_NAME, entry)
    tomllib.loads(updated)  # never write a file Codex cannot read
    write_text(path, updated)


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` atomically, keeping its mode (0600 when new)."""
    ensure_dir(path.parent)
    existed = path.exists()
    mode = path.stat().st_mode & 0o777 if existed else FILE_MODE
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.chmod(temporary, mode)
    os.replace(temporary, path)
