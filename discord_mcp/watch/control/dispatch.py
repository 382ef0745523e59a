"""The one dispatcher behind the slash commands and the ``!`` text commands.

Every command is checked the same way, whichever way it came: only the owners' user ids may
use it (``default_member_permissions`` hides the slash commands from other members, but that is
a courtesy, never the check), and a handler's :class:`~discord_mcp.errors.RunError` becomes
the owner's reply: its code and its sentence.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from discord_mcp.errors import DiscordError, RunError, StateError
from discord_mcp.runs.folders.error_codes import discord_failure
from discord_mcp.watch.commands import Command
from discord_mcp.watch.control import (
    chat,
    diff,
    logs,
    pending,
    project_new,
    projects,
    schedules,
    sessions,
    start,
    steering,
    usage,
)
from discord_mcp.watch.control import (
    help as help_command,
)
from discord_mcp.watch.control.base import Controls, Handler, Reply, Request
from discord_mcp.watch.control.spec import BY_PATH, from_text

log = logging.getLogger(__name__)

HANDLERS: dict[str, Handler] = {
    "project add": projects.add,
    "project new": project_new.new,
    "project list": projects.list_,
    "project status": projects.status,
    "project remove": projects.remove,
    "start": start.start,
    "session list": sessions.list_,
    "session close": sessions.close,
    "session open": sessions.open_,
    "session reopen": sessions.reopen,
    "session rename": sessions.rename,
    "status": sessions.status,
    "tool": steering.tool,
    "model": steering.model,
    "retry": steering.retry,
    "stop": steering.stop,
    "cancel": steering.cancel,
    "logs": logs.logs,
    "diff": diff.diff,
    "usage": usage.usage,
    "pending": pending.pending,
    "schedule add": schedules.add,
    "schedule list": schedules.list_,
    "schedule remove": schedules.remove,
    "chat add": chat.add,
    "chat list": chat.list_,
    "chat remove": chat.remove,
    "help": help_command.help_,
}
assert set(HANDLERS) == set(BY_PATH), "every declared command has exactly one handler"


def error_text(code: str, message: str) -> str:
    return f"**{code}**: {message}"


class Dispatcher:
    """Runs one owner command; never raises for a command that went wrong."""

    def __init__(self, controls: Controls) -> None:
        self.controls = controls

    def is_owner(self, user_id: str) -> bool:
        return user_id in self.controls.settings.owner_ids

    def refusal(self) -> Reply:
        owners = ", ".join(f"<@{o}>" for o in sorted(self.controls.settings.owner_ids))
        return Reply(error_text("E_OWNER_ONLY", f"only {owners} can command runs."))

    async def dispatch(self, request: Request) -> Reply:
        if not self.is_owner(request.user_id):
            log.warning(
                "refused /%s from %s in %s", request.command, request.user_id, request.channel_id
            )
            return self.refusal()
        handler = HANDLERS.get(request.command)
        if handler is None:
            return Reply(error_text("E_UNKNOWN_COMMAND", f"there is no command {request.command}"))
        try:
            # A session at rest for long had retired: the command finds it as it was.
            await self.controls.engine.revive(str(request.get("session") or request.channel_id))
            return await handler(self.controls, request)
        except RunError as exc:
            return Reply(error_text(exc.code, exc.message))
        except DiscordError as exc:
            log.warning("/%s failed talking to Discord: %s", request.command, exc)
            return Reply(error_text(*discord_failure(exc)))
        except StateError as exc:
            log.warning("/%s failed on the state directory: %s", request.command, exc)
            return Reply(error_text("E_STATE", str(exc)))
        except Exception:  # a bug must still get the owner an answer, and never the loop
            log.exception("/%s failed", request.command)
            return Reply(error_text("E_INTERNAL", "the command failed; the daemon's log says why"))

    async def text(
        self,
        message: dict[str, Any],
        command: Command,
        files: Sequence[Mapping[str, Any]] = (),
    ) -> Reply:
        """A ``!`` command from the owner's message; ``files``: its attachments, kept locally
        (``!start app look at this`` with a screenshot gives the first job the screenshot)."""
        author = message.get("author") or {}
        try:
            spec, options = from_text(command)
        except RunError as exc:
            return Reply(error_text(exc.code, exc.message))
        return await self.dispatch(
            Request(
                command=spec.path,
                options=options,
                user_id=str(author.get("id") or ""),
                user_name=user_name(author),
                channel_id=str(message.get("channel_id") or ""),
                via="text",
                message_id=str(message.get("id") or ""),
                files=tuple(files),
            )
        )


def user_name(user: dict[str, Any]) -> str:
    return str(user.get("global_name") or user.get("username") or user.get("id") or "?")
