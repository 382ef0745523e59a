"""``discord-mcp hook EVENT [--client] [--wait] [--timeout] [--env-file] [--ask-all]``."""

from __future__ import annotations

import dataclasses
import importlib
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from discord_mcp.hooks.guard import (
    GUARD_EVENTS,
    BadCommandLine,
    HookProcess,
    Reply,
    blocked,
    budget,
    emit,
    read_event,
    reason_for,
    scrub,
    secrets_of,
)
from discord_mcp.hooks.options import QUIET_EVENTS, HookOptions, parse_options

log = logging.getLogger(__name__)

Handler = Callable[[Mapping[str, Any], HookOptions, Mapping[str, str]], dict[str, Any] | None]
MODULES: dict[str, str] = {
    "permission-request": "permission_request",
    "before-tool": "before_tool",
    "pre-tool-use": "pre_tool_use",
    "stop": "stop",
    "session-start": "session_start",
    "network": "network",
}
"""Each event's module under :mod:`discord_mcp.hooks`, imported only for its own event: a hook
that answers at once (a harmless read, say) does not load the machinery of the others."""


def handler(event: str) -> Handler:
    """The ``handle`` function of ``event``'s module."""
    module = importlib.import_module(f"discord_mcp.hooks.{MODULES[event]}")
    found: Handler = module.handle
    return found


def main(
    argv: Sequence[str],
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
    exit_process: bool = False,
) -> int:
    """``discord-mcp hook EVENT [options]``; returns the exit code.

    ``exit_process``: the command line's way. A guard hook then prints its answer and ends the
    process as soon as the answer is known (and by its deadline, whatever it is doing);
    without it (a test calling this in-process) it returns, and has no deadline.
    """
    started = time.monotonic()
    quiet_logs(whole_process=exit_process)
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    environ = os.environ if environ is None else environ
    try:
        options = parse_options(argv)
    except BadCommandLine as exc:
        event = argv[0] if argv else ""
        if event in QUIET_EVENTS or event not in GUARD_EVENTS:
            stderr.write(f"discord-mcp hook: {exc}\n")
            return 0 if event in QUIET_EVENTS else 2
        client = _client_in(argv)
        reply = _failure(event, client, environ, secrets_of(environ, None))(reason_for(exc))
        return emit(reply, stdout, stderr)
    secrets = secrets_of(environ, options.env_file)
    failure = _failure(options.event, options.client, environ, secrets)
    process = None
    if exit_process:
        process = HookProcess(failure, secrets=secrets, stdout=stdout, stderr=stderr)
        allowed = budget(options.timeout, _timeout_client(options))
        process.watch(started + allowed, allowed)
        options = dataclasses.replace(options, process=process)
    guard = options.event in GUARD_EVENTS
    try:
        payload = read_event(stdin, guard=guard)
        reply = Reply(handler(options.event)(payload, options, environ))
    except Exception as exc:
        log.warning("the %s hook failed: %r", options.event, exc, exc_info=exc)
        reply = failure(scrub(reason_for(exc), secrets))
    if process is not None and guard:
        process.end(reply)
    return emit(reply, stdout, stderr)


def quiet_logs(*, whole_process: bool) -> None:
    """Until the log file is set up, nothing logged reaches stderr (Python's last resort): a
    guard's stderr is its reason alone, and a quiet hook's says nothing. For the whole process,
    a log file that cannot be written says nothing on stderr either."""
    if whole_process:
        logging.raiseExceptions = False
    package = logging.getLogger("discord_mcp")
    if not package.handlers:
        package.addHandler(logging.NullHandler())


def _failure(
    event: str, client: str, environ: Mapping[str, str], secrets: Sequence[str]
) -> Callable[[str], Reply]:
    """The reply for a failure of ``event``'s hook, given its reason."""
    if event not in GUARD_EVENTS:
        return lambda _reason: Reply()  # a quiet hook: no output, exit 0
    try:
        attended = False
        if event == "permission-request":
            from discord_mcp.hooks.permission_request import attended as is_attended

            attended = is_attended(client, environ)
    except Exception:  # a setting we cannot read: no one is known to be at a terminal, so deny
        attended = False

    def reply(reason: str) -> Reply:
        return blocked(event, client, scrub(reason, secrets), attended=attended)

    return reply


def _timeout_client(options: HookOptions) -> str:
    """Whose default hook timeout applies (``before-tool`` is Gemini CLI's event)."""
    return "gemini" if options.event == "before-tool" else options.client


def _client_in(argv: Sequence[str]) -> str:
    """The ``--client`` of an otherwise unparsable command line (its event's default if none)."""
    for index, word in enumerate(argv):
        if word.startswith("--client="):
            return word.split("=", 1)[1]
        if word == "--client" and index + 1 < len(argv):
            return argv[index + 1]
    return "gemini" if argv and argv[0] == "before-tool" else "claude"
