"""The add-on packages at the repository's root: a Claude Code plugin (with its marketplace) and
a Gemini CLI extension, generated from the entries ``install`` writes, so the two never drift.

============================================  ===============================================
file                                          what it holds
============================================  ===============================================
``.claude-plugin/plugin.json``                the server (``uvx --from ${CLAUDE_PLUGIN_ROOT}
                                              discord-mcp``), the ``PermissionRequest`` and
                                              ``Stop`` hooks, the skills folder
                                              (``discord_mcp/skills/``: one folder per skill)
``.claude-plugin/marketplace.json``           a marketplace of one plugin: this repository
``gemini-extension.json``                     the server (``${extensionPath}``), the context
                                              file (the decisions skill)
``hooks/hooks.json``                          the extension's ``BeforeTool``, ``AfterAgent``
                                              and ``SessionStart`` hooks (Gemini CLI reads
                                              them only from there); Claude Code loads this
                                              file too, and runs its ``SessionStart``
============================================  ===============================================

Every entry is the one ``install`` writes (:func:`~discord_mcp.setup.clients.desired_entry`,
:func:`~discord_mcp.setup.approvals.desired_group`,
:func:`~discord_mcp.setup.session_hooks.desired_group`) with two differences: discord-mcp is
started by ``uvx`` from the plugin's or the extension's own copy of this repository, and no
``.env`` is named. The server and the hooks read the one ``setup`` wrote by default
(:func:`~discord_mcp.config.default_env_file`), or ``DISCORD_MCP_ENV_FILE``: the token never
lands in these files.

``python -m discord_mcp.setup.bundles`` rewrites them; a test fails when the committed files
differ from what this module makes (for instance after a hook's command line or timeout
changed in ``install``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from discord_mcp import __version__
from discord_mcp.setup import approvals, session_hooks
from discord_mcp.setup.clients import SERVER_NAME, Client, desired_entry

NAME = "discord-mcp"
DESCRIPTION = (
    "Reach your human over Discord: ask and wait for decisions, tool approvals on your phone, "
    "notices, progress cards, and the owner's messages in your session."
)
CLAUDE_ROOT = "${CLAUDE_PLUGIN_ROOT}"
GEMINI_ROOT = "${extensionPath}"
SKILLS = "./discord_mcp/skills/"
"""The plugin's skills: every folder here with a ``SKILL.md`` (adding a skill is one file)."""
CONTEXT_FILE = "discord_mcp/skills/discord-decisions/SKILL.md"
"""Gemini CLI's context file for the extension: the same words as the Claude Code skill."""
AUTHOR = {"name": "The discord-mcp authors"}


def _prefix(root: str) -> list[str]:
    return ["uvx", "--from", root, NAME]


def _shell(command: str, root: str) -> str:
    # shlex quotes the placeholder as '${...}'; the clients replace it in the text, and a
    # shell must not keep it literal either: double quotes let both work.
    return command.replace(f"'{root}'", f'"{root}"')


def _server(client: Client, root: str) -> dict[str, Any]:
    entry = desired_entry(client, None, command=_prefix(root))
    if not entry.get("env"):
        entry.pop("env", None)
    return entry


def _hook_groups(client: Client, root: str) -> dict[str, list[dict[str, Any]]]:
    """The approval hook and the session hooks of ``client``, as ``install`` makes them."""
    groups: dict[str, list[dict[str, Any]]] = {}
    event = approvals.EVENTS[client]
    groups[event] = [approvals.desired_group(client, None, _prefix(root))]
    for event, name in session_hooks.EVENTS[client].items():
        groups[event] = [session_hooks.desired_group(client, name, None, _prefix(root))]
    for event_groups in groups.values():
        for group in event_groups:
            for handler in group["hooks"]:
                handler["command"] = _shell(handler["command"], root)
    return groups


SHARED_ROOT = 'c="${CLAUDE_PLUGIN_ROOT}" g="${extensionPath}"; '
"""Both clients read ``hooks/hooks.json`` at the repository's root (Claude Code loads it for any
plugin; Gemini CLI only from there), so its ``SessionStart`` hook, the one event both know, runs
in both: each fills in its own placeholder and the other stays empty."""


def _shared_session_start() -> list[dict[str, Any]]:
    """Gemini's ``SessionStart`` group, its command finding the root under either client (the
    session-start hook reads no client-specific input)."""
    (group,) = _hook_groups("gemini", GEMINI_ROOT)["SessionStart"]
    for handler in group["hooks"]:
        command = handler["command"].replace(f'"{GEMINI_ROOT}"', '"${c:-$g}"')
        handler["command"] = SHARED_ROOT + command.replace(" --client gemini", "")
    return [group]


def claude_plugin() -> dict[str, Any]:
    """``.claude-plugin/plugin.json``."""
    return {
        "name": NAME,
        "version": __version__,
        "description": DESCRIPTION,
        "author": AUTHOR,
        "license": "MIT",
        "keywords": ["discord", "human-in-the-loop", "approvals", "mcp"],
        "mcpServers": {SERVER_NAME: _server("claude", CLAUDE_ROOT)},
        # SessionStart comes from hooks/hooks.json, which Claude Code loads as well.
        "hooks": {
            event: groups
            for event, groups in _hook_groups("claude", CLAUDE_ROOT).items()
            if event != "SessionStart"
        },
        "skills": SKILLS,
    }


def claude_marketplace() -> dict[str, Any]:
    """``.claude-plugin/marketplace.json``: this repository as a marketplace of one plugin."""
    return {
        "name": NAME,
        "owner": AUTHOR,
        "description": "discord-mcp as a Claude Code plugin, from its own repository.",
        "plugins": [
            {
                "name": NAME,
                "source": "./",
                "description": DESCRIPTION,
                "version": __version__,
                "license": "MIT",
            }
        ],
    }


def gemini_extension() -> dict[str, Any]:
    """``gemini-extension.json``."""
    return {
        "name": NAME,
        "version": __version__,
        "description": DESCRIPTION,
        "mcpServers": {SERVER_NAME: _server("gemini", GEMINI_ROOT)},
        "contextFileName": CONTEXT_FILE,
    }


def gemini_hooks() -> dict[str, Any]:
    """``hooks/hooks.json`` of the Gemini CLI extension (Claude Code reads it too: only its
    ``SessionStart`` applies there, the other events are Gemini's own and ignored)."""
    groups = _hook_groups("gemini", GEMINI_ROOT)
    groups["SessionStart"] = _shared_session_start()
    return {"hooks": groups}


FILES = {
    ".claude-plugin/plugin.json": claude_plugin,
    ".claude-plugin/marketplace.json": claude_marketplace,
    "gemini-extension.json": gemini_extension,
    "hooks/hooks.json": gemini_hooks,
}


def render(make: Any) -> str:
    """A file's text: indented JSON with a final newline."""
    return json.dumps(make(), indent=2, ensure_ascii=False) + "\n"


def stale(root: Path) -> list[str]:
    """The files under ``root`` that differ from what this module makes."""
    return [
        name
        for name, make in FILES.items()
        if not (root / name).is_file() or (root / name).read_text(encoding="utf-8") != render(make)
    ]


def write(root: Path) -> list[str]:
    """(Re)write the files under ``root``; returns the ones that changed."""
    changed = stale(root)
    for name in changed:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(FILES[name]), encoding="utf-8")
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m discord_mcp.setup.bundles [ROOT]``: rewrite the files (default: the clone)."""
    args = list(sys.argv[1:] if argv is None else argv)
    root = Path(args[0]) if args else Path(__file__).resolve().parents[2]
    for name in write(root):
        sys.stdout.write(f"wrote {root / name}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
