"""How a script decides: its steps (a reply, or a function of the request that picks one),
and ready-made steps for a tool's round trip."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from discord_mcp.demo.model.recorded import ModelRequest
from discord_mcp.demo.model.replies import Reply, Text, ToolCall

Step = Reply | Callable[[ModelRequest], Reply]


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
