"""What every hook shares: its options, settings, a gateway follower, one decision, one answer.

A hook is a short-lived process an agent CLI starts for one event, with the event's JSON on
stdin; it must print at most one JSON object on stdout and exit before the CLI's hook timeout.
Settings come from the environment the CLI passes on and, for hooks installed by ``discord-mcp
install``, from ``--env-file`` (the ``.env`` written by ``setup``; the client's config never
holds the token). The project is named after the payload's ``cwd``. A hook follows the
machine's gateway (a card gets buttons when a gateway is live) but never holds it: it lives
for one approval.

Failure policy: a payload we cannot read, or settings that are missing, is reported on stderr
with exit code 1, which every CLI treats as "the hook failed, carry on as without it" (Claude
Code and Codex fall back to their own permission flow; Gemini CLI lets the tool run, which is
why its installed hook also needs a working configuration: ``doctor`` checks it). Nothing here
prints a traceback to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from dotenv import dotenv_values

from discord_mcp.approvals.request import ToolRequest
from discord_mcp.approvals.service import Outcome
from discord_mcp.config import Settings
from discord_mcp.errors import ConfigError
from discord_mcp.tasks import cancel_and_wait

log = logging.getLogger(__name__)

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
    exit_early: bool = False
    """Print the answer and end the process as soon as it is known (the command line does)."""


def parse_options(argv: Sequence[str]) -> HookOptions:
    parser = argparse.ArgumentParser(
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
        help="seconds to wait for the owner (below the "
        "CLI's hook timeout; default DISCORD_MCP_APPROVAL_WAIT_SECONDS)",
    )
    parser.add_argument("--env-file", default=None, help="the .env written by setup")
    parser.add_argument(
        "--ask-all",
        action="store_true",
        help="approve every tool, reads too (default: only what writes or executes)",
    )
    args = parser.parse_args(list(argv))
    default_client = "gemini" if args.event == "before-tool" else "claude"
    return HookOptions(
        event=args.event,
        client=args.client or default_client,
        wait=args.wait,
        env_file=args.env_file,
        ask_all=args.ask_all,
        exit_early=True,
    )


def hook_settings(environ: Mapping[str, str], env_file: str | None, cwd: str) -> Settings:
    """Settings for a hook: the environment over the env file; the agent's directory names the
    project.

    Raises:
        ConfigError: a required setting is missing (the message says which).
    """
    explicit = env_file or environ.get("DISCORD_MCP_ENV_FILE", "").strip()
    env: dict[str, str] = {}
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(
                "--env-file" if env_file else "DISCORD_MCP_ENV_FILE",
                f"names {explicit!r}, which is not a readable file",
                "Point it at the .env written by `discord-mcp setup`",
            )
        values = dotenv_values(path, encoding="utf-8")
        env.update({k: v for k, v in values.items() if v is not None})
    env.update(environ)  # the CLI's environment wins, as for the server
    where = Path(cwd) if cwd and Path(cwd).is_dir() else Path.cwd()
    # Not the project's own .env: a hook runs in the agent's directory, not ours.
    settings = Settings.from_env(env, cwd=where, read_dotenv=False)
    # A hook lives for one approval: follow the machine's gateway, never hold it.
    gateway = "follow" if settings.gateway == "auto" else settings.gateway
    return dataclasses.replace(settings, gateway=gateway)


def quiet_settings(environ: Mapping[str, str], env_file: str | None, cwd: str) -> Settings | None:
    """:func:`hook_settings` with logging to the log file, or None when they cannot be had (a
    quiet hook then does nothing; it cannot even log)."""
    try:
        settings = hook_settings(environ, env_file, cwd)
    except Exception:  # a quiet hook never fails the agent
        return None
    try:
        configure_logging(settings)
    except Exception:
        return settings
    return settings


async def decide(
    settings: Settings,
    request: ToolRequest,
    *,
    wait: float,
    label: str,
    elsewhere: Callable[[], Awaitable[str]] | None = None,
    deliver: Callable[[Outcome], None] | None = None,
) -> Outcome:
    """One approval, with a gateway follower running meanwhile.

    ``deliver`` gets the outcome as soon as it is known, before the teardown (a hook prints its
    answer and exits there: :func:`answer_now`).
    """
    from discord_mcp.server.runtime import Runtime

    runtime = Runtime(settings)
    link = asyncio.create_task(runtime.run_link(), name="hook-gateway")
    try:
        outcome = await runtime.approvals.decide(
            request, max_wait=wait, label=label, elsewhere=elsewhere
        )
        if deliver is not None:
            deliver(outcome)
        return outcome
    finally:
        await cancel_and_wait(link, within=5)
        await runtime.aclose()


def answer_now(answer: dict[str, Any] | None) -> NoReturn:
    """Print the hook's answer and end the process at once.

    The CLI waits for the hook process to end, not only for its output: the answer must not
    wait for the gateway follower and the HTTP client to close (a few hundred milliseconds).
    Everything that must last is on disk already (the decision file, the log).
    """
    if answer is not None:
        sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(0)


def session_label(session_id: str) -> str:
    return session_id[:8] if session_id else "session"


def read_payload(stdin: TextIO) -> dict[str, Any]:
    """The event's JSON object.

    Raises:
        ValueError: it is not a JSON object.
    """
    payload = json.loads(stdin.read() or "null")
    if not isinstance(payload, dict):
        raise ValueError("the hook's input is not a JSON object")
    return payload


def configure_logging(settings: Settings) -> None:
    """Log to the state directory; only warnings to stderr (which some CLIs show)."""
    from discord_mcp.log import configure

    configure(program="discord-mcp-hook", home=settings.home, secrets=[settings.token.reveal()])
    for handler in logging.getLogger("discord_mcp").handlers:
        if isinstance(handler, logging.StreamHandler) and handler.stream is sys.stderr:
            handler.setLevel(logging.WARNING)
