"""What every hook shares: its options, settings, a gateway follower, one decision, one answer.

A hook is a short-lived process an agent CLI starts for one event, with the event's JSON on
stdin; it prints at most one JSON object on stdout and ends before the CLI's hook timeout.
Settings come from the environment the CLI passes on and, for hooks installed by ``discord-mcp
install``, from ``--env-file`` (the ``.env`` written by ``setup``; the client's config never
holds the token). The project is named after the payload's ``cwd``. A hook follows the
machine's gateway (a card gets buttons when a gateway is live) but never holds it: it lives
for one approval.

Failure policy. The guard hooks (``permission-request``, ``before-tool``, ``pre-tool-use``) fail
closed: whatever goes wrong, and whenever their deadline comes, they answer with an explicit
block in the form their CLI honours, and a sentence saying why (:mod:`~discord_mcp.hooks.guard`).
``stop`` and ``session-start`` only add context: on any failure they print nothing and exit 0 (the
agent goes on as it would without them), logged to the log file. Nothing here prints a traceback,
and logs go to the state directory's log file only: stderr carries a guard's reason alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dotenv import dotenv_values

from discord_mcp.config import Settings, default_env_file
from discord_mcp.errors import ConfigError
from discord_mcp.hooks.guard import SETTLE_S, TEARDOWN_S, HookProcess, OutOfTime
from discord_mcp.hooks.options import EVENTS, QUIET_EVENTS, HookOptions, parse_options
from discord_mcp.session_labels import gemini_process, id_label, remember
from discord_mcp.tasks import cancel_and_wait

if TYPE_CHECKING:
    # Types only: the Stop and SessionStart hooks read local state and never load the approval
    # machinery (tests/hooks/test_hook_imports.py).
    from discord_mcp.approvals.request import ToolRequest
    from discord_mcp.approvals.service import Outcome
    from discord_mcp.server.runtime import Runtime

log = logging.getLogger(__name__)

__all__ = [
    "EVENTS",
    "QUIET_EVENTS",
    "HookOptions",
    "configure_logging",
    "decide",
    "hook_settings",
    "parse_options",
    "quiet_settings",
    "remember_session",
    "session_label",
]


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
    elif (default := default_env_file(environ)) is not None and default.is_file():
        # What `discord-mcp setup` wrote: how a plugin's or an extension's hooks find it.
        values = dotenv_values(default, encoding="utf-8")
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
    process: HookProcess | None = None,
    reply: Callable[[Outcome], dict[str, Any] | None] | None = None,
) -> Outcome:
    """One approval, with a gateway follower running meanwhile.

    With ``process`` (the command line), the hook answers (``reply(outcome)``, or the failure)
    and ends as soon as the answer is known, before the teardown; and all of it fits before the
    process's deadline: the owner's wait is cut to what is left once the card is posted, and
    whatever still runs :data:`~discord_mcp.hooks.guard.SETTLE_S` before it is cancelled.
    """
    from discord_mcp.server.runtime import Runtime

    deadline = process.deadline if process is not None else None
    runtime: Runtime | None = None
    link: asyncio.Task[None] | None = None
    try:
        runtime = Runtime(settings)
        if process is not None:
            process.keep_secret(settings.token.reveal())
            if runtime.interests is not None:
                process.on_exit(runtime.interests.close)  # before the lease that names it
            process.on_exit(runtime.lease.close)
        link = asyncio.create_task(runtime.run_link(), name="hook-gateway")
        async with _until(None if deadline is None else deadline - SETTLE_S, process):
            outcome = await runtime.approvals.decide(
                request,
                max_wait=wait,
                label=label,
                elsewhere=elsewhere,
                deadline=None if deadline is None else deadline - SETTLE_S - TEARDOWN_S,
            )
        if process is not None and reply is not None:
            process.answer(reply(outcome))
        return outcome
    except Exception as exc:
        if process is not None:
            log.warning("blocking the %s call: %r", request.tool_name, exc, exc_info=exc)
            process.fail(exc)
        raise
    finally:
        if link is not None:
            await cancel_and_wait(link, within=5)
        if runtime is not None:
            await runtime.aclose()


@contextlib.asynccontextmanager
async def _until(deadline: float | None, process: HookProcess | None) -> AsyncIterator[None]:
    """Cancel the block at ``deadline`` (``time.monotonic``), raising :class:`OutOfTime`."""
    if deadline is None:
        yield
        return
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout_at(loop.time() + (deadline - time.monotonic())) as scope:
            yield
    except TimeoutError:
        if not scope.expired():
            raise
        raise OutOfTime(process.allowed if process is not None else 0.0) from None


def session_label(session_id: str) -> str:
    """The session's label on cards, as its MCP server labels its questions
    (:func:`discord_mcp.session_labels.id_label`)."""
    return id_label(session_id)


def remember_session(settings: Settings, payload: Mapping[str, Any]) -> None:
    """Under Gemini CLI, record its process's current session for its MCP server's labels
    (:func:`discord_mcp.session_labels.remember`); never fails the hook."""
    session_id = str(payload.get("session_id") or "")
    if not session_id:
        return
    try:
        remember(settings.home, session_id, gemini_process())
    except Exception:
        log.info("could not record the session for the server's labels", exc_info=True)


def configure_logging(settings: Settings) -> None:
    """Log to the state directory's log file only: a guard's stderr is its reason alone."""
    from discord_mcp.log import configure

    configure(
        program="discord-mcp-hook",
        home=settings.home,
        secrets=[settings.token.reveal()],
        stderr=False,
    )
