"""Registering the slash commands for the watched channel's guild, only when they changed.

At startup the daemon reads the guild's commands (``GET``) and compares them with
:func:`~discord_mcp.watch.control.spec.discord_commands`, field by field as far as we set them
(Discord adds ids, versions and defaults of its own); only a difference sends the bulk
overwrite (``PUT``). Restarting the daemon therefore costs one read, and Discord's daily limit
on command creations is never spent on an unchanged set.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.control.spec import discord_commands

log = logging.getLogger(__name__)

_COMMAND_KEYS = ("type", "name", "description", "default_member_permissions")
_OPTION_KEYS = ("type", "name", "description", "required", "autocomplete", "choices")


@dataclass(frozen=True)
class Registered:
    application_id: str
    guild_id: str
    changed: bool


async def register(rest: RestClient, channel_id: str, *, visible_to: str = "admins") -> Registered:
    """Make the guild's commands ours (bulk overwrite only when they differ).

    ``visible_to``: who Discord offers them to, ``admins`` or ``everyone``
    (:func:`~discord_mcp.watch.control.spec.discord_commands`).
    """
    application = await rest.get_current_application()
    application_id, guild_id = str(application["id"]), await rest.guild_of(channel_id)
    wanted = discord_commands(visible_to)
    current = await rest.list_guild_commands(application_id, guild_id)
    if same_commands(wanted, current):
        log.info("slash commands are up to date in guild %s", guild_id)
        return Registered(application_id, guild_id, changed=False)
    await rest.overwrite_guild_commands(application_id, guild_id, wanted)
    log.info("registered %d slash commands in guild %s", len(wanted), guild_id)
    return Registered(application_id, guild_id, changed=True)


def same_commands(
    wanted: Sequence[Mapping[str, Any]], current: Sequence[Mapping[str, Any]]
) -> bool:
    """Whether Discord's commands are ours (ignoring what Discord adds on its own)."""
    if len(wanted) != len(current):
        return False
    by_name = {str(c.get("name")): c for c in current}
    return all(
        str(w["name"]) in by_name and _command(w) == _command(by_name[str(w["name"])])
        for w in wanted
    )


def _command(command: Mapping[str, Any]) -> dict[str, Any]:
    data = _keep(command, _COMMAND_KEYS)
    data["type"] = data.get("type", 1)
    if data.get("default_member_permissions") is not None:
        data["default_member_permissions"] = str(data["default_member_permissions"])
    data["options"] = [_option(o) for o in command.get("options") or []]
    return data


def _option(option: Mapping[str, Any]) -> dict[str, Any]:
    data = _keep(option, _OPTION_KEYS)
    if data.get("choices"):
        data["choices"] = [{"name": c["name"], "value": c["value"]} for c in data["choices"]]
    data["options"] = [_option(o) for o in option.get("options") or []]
    return data


def _keep(source: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    # Missing, null, false and empty are one thing to Discord's defaults.
    return {k: source[k] for k in keys if source.get(k) not in (None, False, [], "")}
