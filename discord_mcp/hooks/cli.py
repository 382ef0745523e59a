"""``discord-mcp hook EVENT [--client] [--wait] [--env-file] [--ask-all]``: the entry point."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from discord_mcp.errors import DiscordMCPError
from discord_mcp.hooks import before_tool, permission_request, pre_tool_use
from discord_mcp.hooks.runner import HookOptions, parse_options, read_payload

Handler = Callable[[Mapping[str, Any], HookOptions, Mapping[str, str]], dict[str, Any] | None]
HANDLERS: dict[str, Handler] = {
    "permission-request": permission_request.handle,
    "before-tool": before_tool.handle,
    "pre-tool-use": pre_tool_use.handle,
}


def main(
    argv: Sequence[str],
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """``discord-mcp hook EVENT [options]``; returns the exit code."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    environ = os.environ if environ is None else environ
    options = parse_options(argv)
    try:
        payload = read_payload(stdin)
    except ValueError as exc:
        stderr.write(f"discord-mcp hook: cannot read the event: {exc}\n")
        return 1
    try:
        answer = HANDLERS[options.event](payload, options, environ)
    except DiscordMCPError as exc:
        stderr.write(f"discord-mcp hook: {exc}\n")
        return 1
    if answer is not None:
        stdout.write(json.dumps(answer) + "\n")
        stdout.flush()
    return 0
