"""How an ACP agent's turn ends when it does not end on its own (issue 34, seed 003): the
codes and the words its thread is told, and the prompt that carries a denial's note.

- ``E_AGENT_SILENT``: the watchdog ended a turn with no ``session/update`` for
  ``DISCORD_WATCH_ACP_IDLE_MINUTES`` (its session is closed, its thread archived).
- ``E_WATCH_STOPPED``: discord-watch itself stopped during the turn (its thread says why).
"""

from __future__ import annotations

from discord_mcp.errors import RunError, SpawnError
from discord_mcp.runs.adapters.base import truncate
from discord_mcp.runs.contract import PermissionAsk

SILENT_CODE = "E_AGENT_SILENT"
"""A turn the watchdog ended: no ``session/update`` for ``limits.agent_silence``."""
SHUTDOWN_CODE = "E_WATCH_STOPPED"
"""A turn ended because discord-watch itself stopped (its thread is told why)."""


def stop_message(
    reason: str, tool: str, *, timeout: float, silence: float, shutdown_reason: str
) -> str:
    """The failure message of a turn ended for ``reason`` (an error code)."""
    if reason == "E_CLI_TIMEOUT":
        return f"{tool} ran longer than its {timeout:g} s timeout and was stopped"
    if reason == "E_INTERRUPTED":
        return f"{tool} was interrupted by a newer message"
    if reason == SILENT_CODE:
        return (
            f"{tool} sent nothing for {silence / 60:g} minutes, so it was taken as hung (the "
            "watchdog, DISCORD_WATCH_ACP_IDLE_MINUTES): its process was ended and this "
            "session closed; reopen it to go on"
        )
    if reason == SHUTDOWN_CODE:
        return (
            f"{tool}'s turn was ended because {shutdown_reason}; write here again to go on "
            "(the agent starts again and loads this session)"
        )
    return f"{tool} was stopped on request"


def denial_prompt(question: PermissionAsk, note: str) -> str:
    """The prompt that carries the owner's note on a denied permission request (ACP has no
    field for a denial's reason)."""
    what = " ".join((question.title or question.kind).split())[:200]
    return (
        f"The owner denied your request ({what}) in Discord, saying: {note.strip()}\n\n"
        "Do not retry it as it is; take another approach or ask the owner."
    )


def describe_error(exc: BaseException) -> str:
    """A few words on why a request to the agent failed."""
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    if isinstance(exc, SpawnError | RunError):
        return exc.message
    return str(exc) or type(exc).__name__


def last_lines(text: str, limit: int = 400) -> str:
    """The last lines of an agent's stderr, on one line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return truncate(" | ".join(lines[-4:]), limit)
