"""The application's registered commands: global ones and the guild's, as Discord keeps them.

Command names are unique per type within a scope (global, or one guild): a ``POST`` with a
name already used is an upsert (200 instead of 201, same id); a bulk overwrite (``PUT``)
replaces the scope's whole set, keeping the id of each command it matches (by ``id``, else by
type and name) and deleting the rest; a ``PATCH`` replaces the fields it gives (40041 if the
new name is taken). A command's ``version`` changes only when its definition does, so a client
can tell whether a bulk overwrite changed anything. At most 100 CHAT_INPUT, 15 USER and 15
MESSAGE commands per scope (30032). An unknown command id is 10063. Bodies are checked by
``command_schema.py``; duplicate names in a bulk body are 50035 with
``APPLICATION_COMMANDS_DUPLICATE_NAME`` under the duplicate's index.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from discord_mcp.emulator import errors
from discord_mcp.emulator.command_schema import (
    CHAT_INPUT,
    MESSAGE_COMMAND,
    USER_COMMAND,
    CommandFields,
    parse_command,
)
from discord_mcp.emulator.errors import FormErrors
from discord_mcp.emulator.validation import array

SCOPE_LIMITS = {CHAT_INPUT: 100, USER_COMMAND: 15, MESSAGE_COMMAND: 15}
BULK_MAX = 130  # the spec's maxItems: 100 + 15 + 15


def unknown_command() -> errors.DiscordError:
    return errors.DiscordError(404, 10063, "Unknown application command")


def too_many_commands() -> errors.DiscordError:
    return errors.DiscordError(400, 30032, "Maximum number of application commands reached")


def name_taken() -> errors.DiscordError:
    return errors.DiscordError(400, 40041, "An application command with that name already exists")


@dataclass
class Command:
    """One registered command; ``guild_id`` is None for a global command."""

    id: str
    application_id: str
    guild_id: str | None
    version: str
    fields: CommandFields = field(default_factory=CommandFields)

    @property
    def name(self) -> str:
        return self.fields.name

    @property
    def type(self) -> int:
        return self.fields.type

    @property
    def options(self) -> list[dict[str, Any]]:
        return self.fields.options

    def definition(self) -> dict[str, Any]:
        """What the command is, without its identity: compared to decide a new version."""
        f = self.fields
        data: dict[str, Any] = {
            "type": f.type,
            "name": f.name,
            "name_localizations": f.name_localizations,
            "description": f.description,
            "description_localizations": f.description_localizations,
            "default_member_permissions": f.default_member_permissions,
            # Only global commands take contexts: Discord keeps none for a guild's command.
            "contexts": f.contexts if self.guild_id is None else None,
            "integration_types": f.integration_types or [0],
            "nsfw": f.nsfw,
        }
        if f.options:
            data["options"] = f.options
        if self.guild_id is None:
            data["dm_permission"] = f.dm_permission is not False
        return data

    def to_json(self) -> dict[str, Any]:
        """Discord's application command object."""
        data: dict[str, Any] = {
            "id": self.id,
            "application_id": self.application_id,
            "version": self.version,
        }
        if self.guild_id is not None:
            data["guild_id"] = self.guild_id
        return data | self.definition()


class CommandRegistry:
    """Every scope's commands. ``new_id`` makes snowflakes (ids and versions)."""

    def __init__(self, application_id: str, new_id: Callable[[], str]) -> None:
        self.application_id = application_id
        self._new_id = new_id
        self._scopes: dict[str | None, dict[str, Command]] = {None: {}}

    def scope(self, guild_id: str | None) -> list[Command]:
        """A scope's commands (None: the global ones), oldest first."""
        return list(self._scopes.get(guild_id, {}).values())

    def every(self) -> list[Command]:
        """The global commands, then each guild's."""
        return [command for scope in self._scopes.values() for command in scope.values()]

    def get(self, guild_id: str | None, command_id: str) -> Command:
        command = self._scopes.get(guild_id, {}).get(command_id)
        if command is None:
            raise unknown_command()
        return command

    def find(self, name: str, guild_id: str, kind: int = CHAT_INPUT) -> Command | None:
        """The command a user in ``guild_id`` picks by name: the guild's, else the global."""
        for scope in (guild_id, None):
            for command in self._scopes.get(scope, {}).values():
                if command.name == name and command.type == kind:
                    return command
        return None

    def create(self, guild_id: str | None, body: Any) -> tuple[Command, bool]:
        """Create or, for a name already used, overwrite a command; returns it and whether it
        is new."""
        problems = FormErrors()
        fields = parse_command(problems, (), body)
        problems.raise_if_any()
        scope = self._scopes.setdefault(guild_id, {})
        existing = _by_name(scope, fields.type, fields.name)
        if existing is not None:
            self._redefine(existing, fields)
            return existing, False
        if sum(c.type == fields.type for c in scope.values()) >= SCOPE_LIMITS[fields.type]:
            raise too_many_commands()
        command = self._new(guild_id, fields)
        scope[command.id] = command
        return command, True

    def edit(self, guild_id: str | None, command_id: str, body: Any) -> Command:
        command = self.get(guild_id, command_id)
        problems = FormErrors()
        given = parse_command(problems, (), body, partial=True, kind=command.type)
        problems.raise_if_any()
        merged = CommandFields(**vars(command.fields))
        for key in given.given & set(vars(merged)) - {"type", "id"}:
            setattr(merged, key, getattr(given, key))
        other = _by_name(self._scopes[guild_id], merged.type, merged.name)
        if other is not None and other is not command:
            raise name_taken()
        self._redefine(command, merged)
        return command

    def delete(self, guild_id: str | None, command_id: str) -> None:
        self.get(guild_id, command_id)
        del self._scopes[guild_id][command_id]

    def overwrite(self, guild_id: str | None, body: Any) -> list[Command]:
        """Replace a scope's commands with ``body`` (a list); returns the new set."""
        problems = FormErrors()
        items = array(problems, (), body if body is not None else [])
        problems.raise_if_any()
        assert items is not None
        if len(items) > BULK_MAX:
            raise too_many_commands()
        parsed = [parse_command(problems, (index,), item) for index, item in enumerate(items)]
        seen: set[tuple[int, str]] = set()
        for index, fields in enumerate(parsed):
            key = (fields.type, fields.name)
            if key in seen:
                problems.add(
                    (index,),
                    "APPLICATION_COMMANDS_DUPLICATE_NAME",
                    "Application command names must be unique",
                )
            seen.add(key)
        problems.raise_if_any()
        for kind, limit in SCOPE_LIMITS.items():
            if sum(f.type == kind for f in parsed) > limit:
                raise too_many_commands()
        old = self._scopes.get(guild_id, {})
        new_scope: dict[str, Command] = {}
        for fields in parsed:
            match = old.get(fields.id or "") or _by_name(old, fields.type, fields.name)
            if match is not None and match.id not in new_scope:
                self._redefine(match, fields)
                command = match
            else:
                command = self._new(guild_id, fields)
            new_scope[command.id] = command
        self._scopes[guild_id] = new_scope
        return list(new_scope.values())

    def _new(self, guild_id: str | None, fields: CommandFields) -> Command:
        command_id = self._new_id()
        return Command(command_id, self.application_id, guild_id, command_id, fields)

    def _redefine(self, command: Command, fields: CommandFields) -> None:
        before = command.definition()
        command.fields = fields
        if command.definition() != before:
            command.version = self._new_id()


def _by_name(scope: dict[str, Command], kind: int, name: str) -> Command | None:
    return next((c for c in scope.values() if c.type == kind and c.name == name), None)
