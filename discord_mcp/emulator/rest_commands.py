"""The REST routes for application commands, global and the guild's (``commands.py``).

``/applications/{application_id}/commands[/{command_id}]`` and
``/applications/{application_id}/guilds/{guild_id}/commands[/{command_id}]``: ``GET`` lists
(or reads one), ``PUT`` overwrites the whole set, ``POST`` creates or upserts by name (201 new,
200 overwritten), ``PATCH`` edits, ``DELETE`` removes (204). An application id other than the
bot's is 403 50001 (a non-numeric one 404 10002 "Unknown Application"); a guild the bot is not
in is 50001 (another id 10004).
"""

from __future__ import annotations

from discord_mcp.emulator import access, errors
from discord_mcp.emulator.calls import Call, Reply, RestRoute


def _scope(call: Call) -> str | None:
    """The guild id of a guild route (checked), None for a global route."""
    application_id = call.params["application_id"]
    if not application_id.isdigit():
        raise errors.DiscordError(404, 10002, "Unknown Application")
    if application_id != call.state.bot.id:
        raise errors.missing_access()
    guild_id = call.params.get("guild_id")
    if guild_id is not None:
        access.guild_for_bot(call.state, guild_id)
    return guild_id


def _command_id(call: Call) -> str:
    command_id = call.params["command_id"]
    if not command_id.isdigit():
        raise errors.DiscordError(404, 10063, "Unknown application command")
    return command_id


def list_commands(call: Call) -> Reply:
    commands = call.state.commands.scope(_scope(call))
    return Reply(200, [command.to_json() for command in commands])


def overwrite_commands(call: Call) -> Reply:
    commands = call.state.commands.overwrite(_scope(call), call.body)
    return Reply(200, [command.to_json() for command in commands])


def create_command(call: Call) -> Reply:
    command, created = call.state.commands.create(_scope(call), call.body)
    return Reply(201 if created else 200, command.to_json())


def get_command(call: Call) -> Reply:
    return Reply(200, call.state.commands.get(_scope(call), _command_id(call)).to_json())


def edit_command(call: Call) -> Reply:
    command = call.state.commands.edit(_scope(call), _command_id(call), call.body)
    return Reply(200, command.to_json())


def delete_command(call: Call) -> Reply:
    call.state.commands.delete(_scope(call), _command_id(call))
    return Reply(204)


_GLOBAL = "/applications/{application_id}/commands"
_GUILD = "/applications/{application_id}/guilds/{guild_id}/commands"

COMMAND_ROUTES: tuple[RestRoute, ...] = tuple(
    RestRoute(method, base + suffix, handler)
    for base in (_GLOBAL, _GUILD)
    for method, suffix, handler in (
        ("GET", "", list_commands),
        ("PUT", "", overwrite_commands),
        ("POST", "", create_command),
        ("GET", "/{command_id}", get_command),
        ("PATCH", "/{command_id}", edit_command),
        ("DELETE", "/{command_id}", delete_command),
    )
)
