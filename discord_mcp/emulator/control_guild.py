"""The control API's permissions: change roles, a channel's overwrites, the bot's membership.

Permission values are Discord's: a decimal string of bits (an integer is accepted too), or
names from Discord's permission table (``"SEND_MESSAGES"``, ``"VIEW_CHANNEL"``...). The ids
to use are in ``GET /_emulator/state``: ``@everyone``'s role id is the guild's id, the bot's
role is ``bot_role_id``. Each change emits the dispatch Discord sends for it.

- ``POST /_emulator/roles/{role_id}`` with either ``{"permissions": "<bits>"}`` (the role's
  permissions become exactly that) or ``{"allow"?: ["NAME", ...], "deny"?: ["NAME", ...]}``
  (add the allowed bits, then take away the denied ones). Answers the role object.
  ``GUILD_ROLE_UPDATE``.
- ``POST /_emulator/channels/{channel_id}/overwrites`` ``{"permission_overwrites": [{"id",
  "type": 0 (role) | 1 (member), "allow"?: "<bits>", "deny"?: "<bits>"}, ...]}``: replaces the
  text channel's overwrites (an omitted or null ``allow``/``deny`` is ``"0"``; ids must be
  roles or members; threads have none, they follow their parent). Answers the channel
  object. ``CHANNEL_UPDATE``.
- ``POST /_emulator/members/{user_id}`` ``{"roles"?: ["<role id>", ...], "in_guild"?:
  bool}``: ``roles`` replaces the member's roles (never ``@everyone``, which every member has);
  ``in_guild`` is for the bot only: false removes it from the guild (``GUILD_DELETE``; every
  channel and guild route then answers 50001 and its gateway sessions hear nothing more of
  the guild), true brings it back with its role (``GUILD_CREATE``). Answers ``{"user_id",
  "in_guild", "member": <member object, or null outside the guild>}``. ``roles`` sends
  ``GUILD_MEMBER_UPDATE`` (to sessions with the GUILD_MEMBERS intent).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from discord_mcp.emulator import errors
from discord_mcp.emulator.control_base import (
    ControlError,
    ControlledEmulator,
    discord_refusal,
    fail,
    read_object,
)
from discord_mcp.emulator.permissions import ALL_PERMISSIONS, PERMISSION_BITS, Overwrite


def guild_routes(emulator: ControlledEmulator) -> list[Route]:
    """``/roles``, ``/channels/{id}/overwrites`` and ``/members`` routes bound to one emulator."""
    state = emulator.state

    async def set_role(request: Request) -> Response:
        try:
            data = await read_object(request, {"permissions", "allow", "deny"}, set())
            if not data:
                raise ControlError("give 'permissions', or 'allow' and/or 'deny'")
            if "permissions" in data and ("allow" in data or "deny" in data):
                raise ControlError("give 'permissions' or 'allow'/'deny', not both")
            try:
                role = state.get_role(request.path_params["role_id"])
                if "permissions" in data:
                    permissions = _bits(data["permissions"], "permissions")
                else:
                    permissions = role.permissions | _named(data.get("allow"), "allow")
                    permissions &= ~_named(data.get("deny"), "deny")
                role = state.set_role_permissions(role.id, permissions)
            except errors.DiscordError as exc:
                raise discord_refusal(exc, "change this role") from None
        except ControlError as exc:
            return fail(exc)
        return JSONResponse(role.to_json())

    async def set_overwrites(request: Request) -> Response:
        try:
            data = await read_object(request, {"permission_overwrites"}, {"permission_overwrites"})
            overwrites = _overwrites(data["permission_overwrites"])
            try:
                channel = state.set_overwrites(request.path_params["channel_id"], overwrites)
            except errors.DiscordError as exc:
                raise discord_refusal(exc, "set these overwrites") from None
        except ControlError as exc:
            return fail(exc)
        return JSONResponse(channel.to_json())

    async def set_member(request: Request) -> Response:
        user_id = request.path_params["user_id"]
        try:
            data = await read_object(request, {"roles", "in_guild"}, set())
            if not data:
                raise ControlError("give 'roles' and/or 'in_guild'")
            in_guild = data.get("in_guild")
            if in_guild is not None and not isinstance(in_guild, bool):
                raise ControlError("'in_guild' must be true or false")
            if in_guild is not None and user_id != state.bot.id:
                raise ControlError("only the bot's membership can change ('in_guild')")
            roles = data.get("roles")
            if roles is not None and (
                not isinstance(roles, list) or not all(isinstance(r, str) for r in roles)
            ):
                raise ControlError("'roles' must be a list of role ids (strings)")
            if roles is not None and in_guild is False:
                raise ControlError("a member removed from the guild has no roles to set")
            try:
                state.get_user(user_id)
                if roles is not None:
                    # Refuse bad roles before the membership changes.
                    for role_id in roles:
                        if role_id == state.everyone.id:
                            raise errors.unknown_role()
                        state.get_role(role_id)
                if in_guild is not None:
                    state.set_bot_in_guild(in_guild)
                if roles is not None:
                    state.set_member_roles(user_id, roles)
            except errors.DiscordError as exc:
                raise discord_refusal(exc, "change this member") from None
        except ControlError as exc:
            return fail(exc)
        present = user_id in state.members
        return JSONResponse(
            {
                "user_id": user_id,
                "in_guild": present,
                "member": state.member_json(user_id) if present else None,
            }
        )

    return [
        Route("/roles/{role_id}", set_role, methods=["POST"]),
        Route("/channels/{channel_id}/overwrites", set_overwrites, methods=["POST"]),
        Route("/members/{user_id}", set_member, methods=["POST"]),
    ]


def _bits(value: Any, key: str) -> int:
    """A permission value: a decimal string or an integer of defined bits."""
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ControlError(f"{key!r} must be permission bits as a decimal string")
    if value & ~ALL_PERMISSIONS:
        raise ControlError(f"{key!r} has bits Discord does not define")
    return value


def _named(value: Any, key: str) -> int:
    """Permission names (``["SEND_MESSAGES", ...]``) as bits; None is none."""
    if value is None:
        return 0
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise ControlError(f"{key!r} must be a list of permission names")
    unknown = sorted(set(value) - set(PERMISSION_BITS))
    if unknown:
        raise ControlError(f"unknown permission name(s) {unknown} in {key!r}")
    bits = 0
    for name in value:
        bits |= PERMISSION_BITS[name]
    return bits


def _overwrites(value: Any) -> list[Overwrite]:
    if not isinstance(value, list):
        raise ControlError("'permission_overwrites' must be a list of overwrite objects")
    result: list[Overwrite] = []
    for index, item in enumerate(value):
        where = f"permission_overwrites[{index}]"
        if not isinstance(item, dict):
            raise ControlError(f"{where} must be an object")
        unknown = sorted(set(item) - {"id", "type", "allow", "deny"})
        if unknown:
            raise ControlError(f"{where} has unknown field(s) {unknown}")
        overwrite_id = item.get("id")
        if not isinstance(overwrite_id, str) or not overwrite_id.isdigit():
            raise ControlError(f"{where}.id must be a role or user id (a string)")
        kind = item.get("type")
        if kind not in (0, 1) or isinstance(kind, bool):
            raise ControlError(f"{where}.type must be 0 (role) or 1 (member)")
        if any(o.id == overwrite_id for o in result):
            raise ControlError(f"{where}: a second overwrite for {overwrite_id}")
        allow = item.get("allow")
        deny = item.get("deny")
        result.append(
            Overwrite(
                overwrite_id,
                int(kind),
                allow=0 if allow is None else _bits(allow, f"{where}.allow"),
                deny=0 if deny is None else _bits(deny, f"{where}.deny"),
            )
        )
    return result
