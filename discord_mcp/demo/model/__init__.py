"""A scripted model: a local stand-in for the model APIs of Claude Code, Codex and Gemini CLI.

A demo and test model, not a model: it answers each request with the next step of a script
(a text, an MCP tool call, a shell command). ``discord-mcp demo --agent claude|codex|gemini``
runs the real CLI against it (:mod:`discord_mcp.demo.agents`), and the end-to-end tests drive
every CLI with it (``tests/support/model_server.py``). It listens on 127.0.0.1 only and refuses,
as a proxy, anything meant for the internet.

- :mod:`~discord_mcp.demo.model.replies`: what it can say (:class:`Text`, :class:`ToolCall`,
  :class:`ShellCall`, :class:`BuiltinCall`);
- :mod:`~discord_mcp.demo.model.recorded`: the requests it received, read in each API's shape;
- :mod:`~discord_mcp.demo.model.script`: steps, and steps that decide from the request;
- :mod:`~discord_mcp.demo.model.playback`: the script in play and the record of requests;
- :mod:`~discord_mcp.demo.model.apis`: the three wire formats, answering a request;
- :mod:`~discord_mcp.demo.model.serving`: the HTTP handler and the refusing proxy;
- :mod:`~discord_mcp.demo.model.server`: :class:`ModelServer`, a playback served over HTTP;
- :mod:`~discord_mcp.demo.model.wire`: server-sent events and schema-shaped answers.
"""

from discord_mcp.demo.model.recorded import ModelRequest, RequestKind, ToolResult
from discord_mcp.demo.model.replies import Api, BuiltinCall, Reply, ShellCall, Text, ToolCall
from discord_mcp.demo.model.script import ScriptError, Step, quote_tool_result, tool_round_trip
from discord_mcp.demo.model.server import ModelServer

__all__ = [
    "Api",
    "BuiltinCall",
    "ModelRequest",
    "ModelServer",
    "Reply",
    "RequestKind",
    "ScriptError",
    "ShellCall",
    "Step",
    "Text",
    "ToolCall",
    "ToolResult",
    "quote_tool_result",
    "tool_round_trip",
]
