"""The owner's text commands (the fallback that works without slash commands).

In the channel: ``!start <project> [first prompt]``, ``!status``, ``!help``. In a run thread:
``!status``, ``!tool <claude|codex|gemini>``, ``!retry <job_id>``, ``!stop``, ``!help``.
"""

from __future__ import annotations

from dataclasses import dataclass

CHANNEL_COMMANDS = ("start", "status", "help")
THREAD_COMMANDS = ("status", "tool", "retry", "stop", "help")

CHANNEL_HELP = (
    "**discord-watch commands** (in this channel)\n"
    "`!start <project> [first prompt]`: open a run thread for a project; everything you write "
    "there is work for its agent\n"
    "`!status`: projects, running and queued jobs\n"
    "Anything else you write here goes to the agents' inbox."
)
THREAD_HELP = (
    "**In a run thread**: write to give the agent work (one job per message, in order).\n"
    "`!status`: this session · `!tool <claude|codex|gemini>`: switch from the next job · "
    "`!retry <job_id>`: run a failed job again · `!stop`: end the running job"
)


@dataclass(frozen=True, slots=True)
class Command:
    """A parsed ``!name args...``."""

    name: str
    args: tuple[str, ...]
    rest: str
    """Everything after the first argument, as typed (the first prompt of ``!start``)."""


def parse_command(text: str) -> Command | None:
    """The command in ``text``, or None when it is not one (then it is a normal message)."""
    stripped = text.strip()
    if not stripped.startswith("!") or len(stripped) < 2 or stripped[1].isspace():
        return None
    head, _, tail = stripped[1:].partition(" ")
    name = head.strip().lower()
    if not name.isalpha():
        return None
    args = tuple(tail.split())
    rest = ""
    if args:
        rest = tail.strip()[len(args[0]) :].strip()
    return Command(name=name, args=args, rest=rest)
