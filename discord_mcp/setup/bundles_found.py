"""The Claude Code plugin and the Gemini CLI extension as the clients installed them, for
``doctor``: both register our server and our hooks without touching the files ``install``
writes, so a doctor that read only those would call a wired client "not wired".

=============  ===============================================  ==================================
client         where it records the bundle                      enabled
=============  ===============================================  ==================================
Claude Code    ``~/.claude/plugins/installed_plugins.json``      ``enabledPlugins`` in the user's,
               (``$CLAUDE_CONFIG_DIR``): each install's          the project's and the local
               ``installPath`` holds ``.claude-plugin/``         ``settings.json`` (later wins)
Gemini CLI     ``~/.gemini/extensions/<name>/``: a copy, or a    ``extension-enablement.json``:
               link (``.gemini-extension-install.json``          the last override matching the
               ``type: link``, ``source``)                       folder wins; enabled by default
=============  ===============================================  ==================================

Reading these files never fails ``doctor``: what cannot be read is reported as not found.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from discord_mcp.setup.clients import Client, is_ours

HOOK_MARK = "discord-mcp hook "
"""Every hook command of ours runs ``discord-mcp hook <event> …``."""


@dataclass(frozen=True, slots=True)
class Bundle:
    """One install of our plugin or extension."""

    client: Client
    kind: Literal["plugin", "extension"]
    name: str
    root: Path
    enabled: bool
    servers: tuple[str, ...]
    """Our MCP servers, named as the client names them (``plugin_<plugin>_<server>``)."""
    events: frozenset[str]
    """The hook events our hook commands are registered for."""

    def label(self) -> str:
        return f"{self.kind} {self.name}, {self.root}"


def found(*, home: Path, cwd: Path, environ: Mapping[str, str]) -> list[Bundle]:
    """Every install of our plugin (Claude Code) and extension (Gemini CLI) on this machine."""
    return [*_claude_plugins(home, cwd, environ), *_gemini_extensions(home, cwd)]


def _json(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def _our_events(hooks: object) -> set[str]:
    """The events of a hooks mapping (``{"hooks": {...}}`` or the mapping itself) that run
    one of our hook commands."""
    if isinstance(hooks, dict) and isinstance(hooks.get("hooks"), dict):
        hooks = hooks["hooks"]
    if not isinstance(hooks, dict):
        return set()
    events = set()
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                if isinstance(handler, dict) and HOOK_MARK in str(handler.get("command") or ""):
                    events.add(str(event))
    return events


def _our_servers(manifest: Mapping[str, Any]) -> list[str]:
    servers = manifest.get("mcpServers")
    if not isinstance(servers, dict):
        return []
    return [name for name, entry in servers.items() if isinstance(entry, dict) and is_ours(entry)]


def _claude_plugins(home: Path, cwd: Path, environ: Mapping[str, str]) -> Iterator[Bundle]:
    configured = environ.get("CLAUDE_CONFIG_DIR", "").strip()
    base = Path(configured) if configured else home / ".claude"
    plugins = _json(base / "plugins" / "installed_plugins.json").get("plugins")
    if not isinstance(plugins, dict):
        return
    enabled: dict[str, bool] = {}
    for settings in (
        base / "settings.json",
        cwd / ".claude" / "settings.json",
        cwd / ".claude" / "settings.local.json",
    ):
        said = _json(settings).get("enabledPlugins")
        if isinstance(said, dict):
            enabled.update({str(k): v is True for k, v in said.items()})
    for key, installs in plugins.items():
        for install in installs if isinstance(installs, list) else []:
            where = install.get("installPath") if isinstance(install, dict) else None
            if not isinstance(where, str):
                continue
            root = Path(where)
            manifest = _json(root / ".claude-plugin" / "plugin.json")
            servers = _our_servers(manifest)
            events = _our_events(manifest.get("hooks")) | _our_events(
                _json(root / "hooks" / "hooks.json")
            )
            if not servers and not events:
                continue  # someone else's plugin
            plugin = str(manifest.get("name") or str(key).split("@")[0])
            yield Bundle(
                client="claude",
                kind="plugin",
                name=str(key),
                root=root,
                enabled=enabled.get(str(key), False),
                servers=tuple(f"plugin_{plugin}_{s}" for s in servers),
                events=frozenset(events),
            )


def _gemini_enabled(home: Path, name: str, cwd: Path) -> bool:
    """Gemini's rule: enabled unless the last override matching the folder disables it."""
    rules = _json(home / ".gemini" / "extensions" / "extension-enablement.json").get(name)
    overrides = rules.get("overrides") if isinstance(rules, dict) else None
    folder = cwd.as_posix().rstrip("/") + "/"
    enabled = True
    for rule in overrides if isinstance(overrides, list) else []:
        text = str(rule)
        disable = text.startswith("!")
        pattern = text[1:] if disable else text
        if fnmatch.fnmatchcase(folder, pattern):
            enabled = not disable
    return enabled


def _gemini_extensions(home: Path, cwd: Path) -> Iterator[Bundle]:
    folder = home / ".gemini" / "extensions"
    try:
        candidates = sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return
    for place in candidates:
        install = _json(place / ".gemini-extension-install.json")
        source = install.get("source")
        linked = install.get("type") == "link" and isinstance(source, str)
        root = Path(source) if linked and isinstance(source, str) else place
        manifest = _json(root / "gemini-extension.json")
        servers = _our_servers(manifest)
        events = _our_events(_json(root / "hooks" / "hooks.json"))
        if not servers and not events:
            continue
        name = str(manifest.get("name") or place.name)
        yield Bundle(
            client="gemini",
            kind="extension",
            name=name,
            root=root,
            enabled=_gemini_enabled(home, name, cwd),
            servers=tuple(servers),
            events=frozenset(events),
        )
