"""What the scripted model can say: a text, an MCP tool call, a shell command or one of the
CLI's own tools, and the three APIs it says them in."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Api = Literal["anthropic", "openai", "gemini"]
"""The model API a request came in: Anthropic Messages, OpenAI Responses, or Gemini."""


@dataclass(frozen=True)
class Text:
    """The model answers with plain text and ends its turn.

    ``pieces``: how many stream deltas the text is sent in (so a CLI that streams shows it
    growing). ``hold``: when given, the first piece is sent, then the rest only once it is set
    (at most 60 s), so a test can watch the answer half written.
    """

    text: str
    pieces: int = 1
    hold: threading.Event | None = field(default=None, compare=False, repr=False)

    def split(self) -> list[str]:
        size = max(1, -(-len(self.text) // max(1, self.pieces)))
        return [self.text[i : i + size] for i in range(0, len(self.text), size)] or [""]


@dataclass(frozen=True)
class ToolCall:
    """The model calls ``tool`` of the MCP server registered as ``server`` in the CLI.

    The wire name is derived per API: ``mcp__<server>__<tool>`` for Claude Code,
    namespace ``mcp__<server>`` + name ``<tool>`` for Codex (after a tool search),
    ``mcp_<server>_<tool>`` for Gemini CLI.
    """

    server: str
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ShellCall:
    """The model runs ``command`` with the CLI's own shell tool, not an MCP tool.

    Claude Code's ``Bash`` (``{"command", "description"}``), Codex's ``exec_command``
    (``{"cmd"}``, plus ``codex_arguments`` such as ``sandbox_permissions``), Gemini CLI's
    ``run_shell_command`` (``{"command", "description"}``). The tool must be offered to the
    model (headless Gemini offers it only in yolo mode).
    """

    command: str
    description: str = "run a shell command"
    codex_arguments: Mapping[str, Any] = field(default_factory=dict)

    def wire(self, api: Api) -> tuple[str, dict[str, Any]]:
        """The tool's name and arguments as ``api`` spells them."""
        if api == "anthropic":
            return "Bash", {"command": self.command, "description": self.description}
        if api == "openai":
            return "exec_command", {"cmd": self.command, **self.codex_arguments}
        return "run_shell_command", {"command": self.command, "description": self.description}


@dataclass(frozen=True)
class BuiltinCall:
    """The model calls one of the CLI's own tools by the name that CLI offers it under (e.g.
    Claude Code's ``Read`` or ``Write``, Gemini CLI's ``write_file``), with ``arguments``."""

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    def wire(self, api: Api) -> tuple[str, dict[str, Any]]:
        return self.tool, dict(self.arguments)


Reply = Text | ToolCall | ShellCall | BuiltinCall
