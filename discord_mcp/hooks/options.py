"""A hook's command line: its event and options (light: a read's hook answers with little more
than this module, :mod:`~discord_mcp.hooks.guard` and its handler loaded)."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from discord_mcp.hooks.guard import BadCommandLine

if TYPE_CHECKING:
    from discord_mcp.hooks.guard import HookProcess

EVENTS = (
    "permission-request",
    "before-tool",
    "pre-tool-use",
    "stop",
    "session-start",
    "network",
)
QUIET_EVENTS = frozenset({"stop", "session-start"})
"""Hooks that never fail loudly: any error means no output and exit code 0 (the agent goes on
as it would without us)."""


@dataclasses.dataclass(frozen=True)
class HookOptions:
    event: str
    client: str
    wait: float | None
    env_file: str | None
    ask_all: bool
    timeout: float | None = None
    """The CLI's timeout for this hook (seconds), as its configuration says; None: its default."""
    process: HookProcess | None = None
    """The command line's process: answers (and ends) as soon as the answer is known, and by its
    deadline. None when a test calls a handler in-process."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise BadCommandLine(message)


def parse_options(argv: Sequence[str]) -> HookOptions:
    """The hook's options.

    Raises:
        BadCommandLine: they cannot be parsed (``--help`` still prints and exits).
    """
    parser = _Parser(
        prog="discord-mcp hook",
        description="Run as an agent CLI's hook: one JSON event on stdin, the answer on stdout.",
    )
    parser.add_argument("event", choices=EVENTS)
    parser.add_argument(
        "--client", choices=["claude", "codex", "gemini"], default=None, help="who runs us"
    )
    parser.add_argument(
        "--wait",
        type=float,
        default=None,
        help="seconds to wait for the owner (default DISCORD_MCP_APPROVAL_WAIT_SECONDS; always "
        "cut to what the hook's timeout leaves)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="the CLI's timeout for this hook, in seconds, as its configuration sets it: the "
        "hook answers before it (default: the CLI's own, 600 for claude and codex, 60 for gemini)",
    )
    parser.add_argument("--env-file", default=None, help="the .env written by setup")
    parser.add_argument(
        "--ask-all",
        action="store_true",
        help="approve every tool, reads too (default: only what writes or executes)",
    )
    args = parser.parse_args(list(argv))
    for name in ("wait", "timeout"):
        value = getattr(args, name)
        if value is not None and not value > 0:
            raise BadCommandLine(f"--{name} must be a positive number of seconds, not {value:g}")
    default_client = "gemini" if args.event == "before-tool" else "claude"
    return HookOptions(
        event=args.event,
        client=args.client or default_client,
        wait=args.wait,
        env_file=args.env_file,
        ask_all=args.ask_all,
        timeout=args.timeout,
    )
