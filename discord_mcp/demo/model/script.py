"""What the scripted model says: its replies, and steps that decide from a request."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from discord_mcp.demo.model.recorded import Api, ModelRequest

# --------------------------------------------------------------------------------------------
# What the scripted model can say


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
Step = Reply | Callable[["ModelRequest"], Reply]


class ScriptError(Exception):
    """Raised by a step that cannot answer the request; the server answers HTTP 500."""


# --------------------------------------------------------------------------------------------
# Script helpers


def quote_tool_result(
    template: str = "The tool returned: {result}",
) -> Callable[[ModelRequest], Reply]:
    """A step that answers with text quoting the tool result that just came back.

    ``{result}`` in ``template`` is replaced by the result's text. Fails the request (and
    records an error) if the request carries no fresh tool result.
    """

    def step(request: ModelRequest) -> Reply:
        results = request.latest_tool_results()
        if not results:
            raise ScriptError("expected the request to carry a tool result, found none")
        return Text(template.format(result=results[-1].text))

    return step


def tool_round_trip(
    server: str,
    tool: str,
    arguments: Mapping[str, Any],
    template: str = "The tool returned: {result}",
) -> Callable[[ModelRequest], Reply]:
    """A step that decides from the request: call the tool, or quote its fresh result.

    If the request carries a tool result that just came back, answer with ``template`` (see
    :func:`quote_tool_result`); otherwise call ``tool``. Use it with ``repeat=True`` to serve a
    whole tool turn however many requests the CLI makes.
    """
    call = ToolCall(server, tool, dict(arguments))

    def step(request: ModelRequest) -> Reply:
        results = request.latest_tool_results()
        if results:
            return Text(template.format(result=results[-1].text))
        return call

    return step
