"""One adapter per agent CLI, behind the :class:`~discord_mcp.runs.adapters.base.Adapter`
Protocol: how to call it (new session, resume, MCP registration) and how to read its JSON
lines and judge the outcome."""

from __future__ import annotations

from collections.abc import Mapping

from discord_mcp.runs.adapters.acp import AcpAdapter
from discord_mcp.runs.adapters.base import (
    Adapter,
    Decoder,
    Invocation,
    InvocationRequest,
    McpRegistration,
    Outcome,
)
from discord_mcp.runs.adapters.claude import ClaudeAdapter
from discord_mcp.runs.adapters.codex import CodexAdapter
from discord_mcp.runs.adapters.gemini import GeminiAdapter
from discord_mcp.runs.journal.views import Tool

ADAPTERS: Mapping[Tool, Adapter] = {
    "claude": ClaudeAdapter(),
    "codex": CodexAdapter(),
    "gemini": GeminiAdapter(),
}


def adapter_for(tool: Tool) -> Adapter:
    """The adapter for ``tool`` (any name that is not a headless CLI is an ACP agent)."""
    return ADAPTERS.get(tool) or AcpAdapter(tool)


__all__ = [
    "ADAPTERS",
    "Adapter",
    "Decoder",
    "Invocation",
    "InvocationRequest",
    "McpRegistration",
    "Outcome",
    "adapter_for",
]
