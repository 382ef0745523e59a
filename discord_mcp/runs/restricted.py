"""What a stranger's turn may do (issue 25): talk in its chat channel, and nothing else.

Theory. A chat channel open to people other than the owners (``discord-watch chat add ...
--who everyone`` or roles) runs their turns restricted: the agent can send messages, react and
read the channel's history through the ``discord`` server's chat tools, and it has no shell, no
file writes, no file reads, no network and no other MCP server. Such a turn never raises an
approval card (there is nothing to approve) and never sees the owner's inbox or decisions: the
run's discord server serves only ``send_message``, ``add_reaction`` and ``read_history``, each
pinned to the turn's channel and without files (``DISCORD_MCP_TOOLS=chat``, read by
:mod:`discord_mcp.config`).

Each CLI is locked down its own way, and in layers, so one setting that a CLI ignores does not
open the turn:

===========  ==================================================================================
CLI          how
===========  ==================================================================================
claude       no built-in tool at all (``--tools ""``), only our MCP server
             (``--strict-mcp-config``), only its three chat tools allowed (``--allowedTools``)
             and anything else denied without asking (``--permission-mode dontAsk``, no
             permission prompt tool); the user's and the project's settings are not read
             (``--setting-sources ""``)
codex        the ``read-only`` sandbox with ``approval_policy = "never"`` (nothing can ask to
             leave it), its shell tools off (``--disable shell_tool``, ``unified_exec``) and
             its image viewer (``view_image``, which its own process runs outside the
             sandbox: it read any path), web search off, every other MCP server of its
             config files off, no hooks
gemini       a home of its own (``<state>/runs/cli-homes/gemini-restricted``): no MCP server but
             ours with the three chat tools (``includeTools``), no memory file of the owner's
             (``context.fileName`` names none; ``GEMINI.md`` is not linked), every built-in
             tool excluded, no extensions, no hooks, the default approval mode (headless
             Gemini then offers no shell or write tool), and an admin policy
             (``--admin-policy``) that denies every tool but those three
ACP agents   refused (E_RESTRICTED_NOT_ENFORCEABLE): an agent's own tools cannot be taken away
===========  ==================================================================================

What people write reaches such a turn with its ``@`` signs written ``＠``
(:mod:`discord_mcp.watch.chat.context`): Claude Code and Gemini CLI attach an ``@path`` in a
prompt by themselves, without a tool. Codex reads ``$CODEX_HOME/AGENTS.md`` into the turn's
instructions (no setting skips it): a chat's Codex has a home of its own
(:mod:`discord_mcp.runs.codex_home`), so the owner's never reaches it.

The project's own arguments are dropped for such a turn (they could undo any of this), all but
its ``--model``. When something cannot be held (an admin policy directory of Gemini's that
would replace ours), the turn is refused rather than run open.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from discord_mcp.errors import RunError

TOOLS_VARIABLE = "DISCORD_MCP_TOOLS"
"""Set to ``chat`` in a restricted turn's discord server: only the chat tools, pinned."""
CHAT_TOOLS = ("send_message", "add_reaction", "read_history")
"""The tools a restricted turn has."""
SERVER = "discord"
ENGINES = ("claude", "codex", "gemini")
"""The engines that can run a restricted turn."""

GEMINI_BUILTIN_TOOLS = (
    "run_shell_command", "write_file", "replace", "read_file", "read_many_files",
    "list_directory", "glob", "search_file_content", "grep_search", "web_fetch",
    "google_web_search", "save_memory", "write_todos", "codebase_investigator",
    "activate_skill", "get_internal_docs", "delegate_to_agent", "enter_plan_mode",
    "exit_plan_mode", "ask_user",
)  # fmt: skip
"""Excluded by name as well as by policy (a layer in case the policy is not read)."""
GEMINI_SYSTEM_POLICIES = Path("/etc/gemini-cli/policies")
"""Gemini ignores ``--admin-policy`` when this directory holds policy files."""
GEMINI_NO_MEMORY = "DISCORD-MCP-NO-MEMORY.md"
"""The memory file name of a stranger's Gemini turn: never a file anyone wrote."""
CODEX_FEATURES_OFF = ("shell_tool", "unified_exec", "view_image")
"""Codex's tools that run programs or read files, switched off for a stranger's turn
(``view_image`` is run by Codex's own process, outside its sandbox: it read any path)."""


def check_engine(tool: str) -> None:
    """Refuse an engine that cannot run a restricted turn.

    Raises:
        RunError: E_RESTRICTED_NOT_ENFORCEABLE.
    """
    if tool not in ENGINES:
        raise RunError(
            "E_RESTRICTED_NOT_ENFORCEABLE",
            f"{tool} cannot be locked down for someone who is not an owner (an ACP agent keeps "
            "its own tools): use claude, codex or gemini for a chat channel open to others",
        )


def model_args(args: Sequence[str]) -> tuple[str, ...]:
    """The model a project's arguments choose (``--model X``, ``-m X``, ``--model=X``), and
    nothing else of them."""
    kept: list[str] = []
    items = list(args)
    for index, arg in enumerate(items):
        if arg in ("--model", "-m") and index + 1 < len(items):
            kept = [arg, items[index + 1]]
        elif arg.startswith("--model="):
            kept = [arg]
    return tuple(kept)


def claude_args() -> list[str]:
    """Claude Code's options for a restricted turn (our MCP config is added by the adapter)."""
    allowed = [f"mcp__{SERVER}__{name}" for name in CHAT_TOOLS]
    return [
        "--strict-mcp-config",
        "--tools",
        "",
        "--permission-mode",
        "dontAsk",
        "--setting-sources",
        "",
        "--allowedTools",
        *allowed,
    ]


def codex_args() -> list[str]:
    """Codex's options for a restricted turn (other MCP servers are turned off by the adapter)."""
    args = ["-s", "read-only", "-c", 'approval_policy="never"', "-c", 'web_search="disabled"']
    for feature in CODEX_FEATURES_OFF:
        args += ["--disable", feature]
    return args


def gemini_policy() -> str:
    """The admin policy of a restricted Gemini turn: every tool denied but the chat tools."""
    tools = json.dumps(list(CHAT_TOOLS))
    return (
        "# Written by discord-watch for the turns of people who are not owners.\n"
        "[[rule]]\n"
        'toolName = "*"\n'
        'decision = "deny"\n'
        "priority = 900\n"
        'denyMessage = "This conversation may only use the chat tools."\n\n'
        "[[rule]]\n"
        f'mcpName = "{SERVER}"\n'
        f"toolName = {tools}\n"
        'decision = "allow"\n'
        "priority = 999\n"
    )


def check_gemini_policies(directory: Path = GEMINI_SYSTEM_POLICIES) -> None:
    """Refuse a restricted Gemini turn when the system's policy directory would make Gemini
    ignore ours.

    Raises:
        RunError: E_RESTRICTED_NOT_ENFORCEABLE.
    """
    try:
        found = sorted(p.name for p in directory.glob("*.toml"))
    except OSError:
        found = []
    if found:
        raise RunError(
            "E_RESTRICTED_NOT_ENFORCEABLE",
            f"{directory} holds policy files ({', '.join(found)}), which make Gemini CLI ignore "
            "the policy that keeps a stranger's turn to the chat tools: use claude or codex for "
            "this chat channel",
        )


def gemini_settings(settings: dict[str, Any], server: dict[str, Any]) -> dict[str, Any]:
    """The user's Gemini settings made fit for a restricted turn: no MCP server but ``server``
    (ours, given its three tools only), no hooks, every built-in tool excluded."""
    kept = {k: v for k, v in settings.items() if k not in ("mcpServers", "hooks", "mcp")}
    tools = dict(kept.get("tools") or {})
    tools.pop("core", None)
    tools.pop("allowed", None)
    tools["exclude"] = sorted({*(tools.get("exclude") or []), *GEMINI_BUILTIN_TOOLS})
    kept["tools"] = tools
    kept["mcpServers"] = {SERVER: {**server, "includeTools": list(CHAT_TOOLS)}}
    # The owner's memory (~/.gemini/GEMINI.md, and such files in the folders above) is not a
    # stranger's to read: a memory file name that no one has.
    context = dict(kept.get("context") or {})
    context["fileName"] = GEMINI_NO_MEMORY
    context.pop("includeDirectories", None)
    context["loadMemoryFromIncludeDirectories"] = False
    kept["context"] = context
    return kept
