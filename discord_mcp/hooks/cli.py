"""``discord-mcp hook EVENT [--client] [--wait] [--env-file] [--ask-all]``: the entry point."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from discord_mcp.errors import DiscordMCPError
from discord_mcp.hooks import (
    before_tool,
    network,
    permission_request,
    pre_tool_use,
    session_start,
    stop,
)
from discord_mcp.hooks.runner import QUIET_EVENTS, HookOptions, parse_options, read_payload

Handler = Callable[[Mapping[str, Any], HookOptions, Mapping[str, str]], dict[str, Any] | None]
HANDLERS: dict[str, Handler] = {
    "permission-request": permission_request.handle,
    "before-tool": before_tool.handle,
    "pre-tool-use": pre_tool_use.handle,
    "stop": stop.handle,
    "session-start": session_start.handle,
    "network": network.handle,
}
FAIL_CLOSED = frozenset({"network"})
"""Hooks whose every failure must refuse the call (the CLIs run a call whose hook failed)."""


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
        if options.event in FAIL_CLOSED:
            stdout.write(json.dumps(network.deny(options.client, f"unreadable event: {exc}")))
            stdout.write("\n")
            return 0
        if options.event in QUIET_EVENTS:
            return 0
        stderr.write(f"discord-mcp hook: cannot read the event: {exc}\n")
        return 1
    try:
        answer = HANDLERS[options.event](payload, options, environ)
    except DiscordMCPError as exc:
        if options.event in QUIET_EVENTS:
            return 0
        stderr.write(f"discord-mcp hook: {exc}\n")
        return 1
    if answer is not None:
        stdout.write(json.dumps(answer) + "\n")
        stdout.flush()
    return 0
