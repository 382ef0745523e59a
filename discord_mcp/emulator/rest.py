"""The REST v10 routes: templates, who may call them, and what each one does.

Application commands' routes are in ``rest_commands.py`` and listed here too; messages,
webhook messages and interaction responses take files (``uploads.py``, ``attachments.py``).

A handler gets a :class:`Call` (path parameters, query, parsed body, the state) and returns a
:class:`Reply` or raises :class:`~discord_mcp.emulator.errors.DiscordError`. Everything around
the handler (authentication, faults, rate limits, error bodies, the exchange hook) happens once,
in ``app.py``; what the bot may do in a channel is checked by the handlers through
``access.py``. Route names are ``"METHOD /template"`` with the parameter names of Discord's
OpenAPI spec; the control API's faults use the same names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from discord_mcp.emulator import access, errors
from discord_mcp.emulator.calls import Call, Reply, RestRoute
from discord_mcp.emulator.channel_kinds import POSTS_ONLY
from discord_mcp.emulator.guild import guild_json
from discord_mcp.emulator.idle import archived_public_threads
from discord_mcp.emulator.intents import application_flags, withhold_content
from discord_mcp.emulator.models import Channel, Message
from discord_mcp.emulator.permissions import (
    CREATE_PUBLIC_THREADS,
    MANAGE_CHANNELS,
    MANAGE_THREADS,
    READ_MESSAGE_HISTORY,
    VIEW_CHANNEL,
)
from discord_mcp.emulator.rest_commands import COMMAND_ROUTES
from discord_mcp.emulator.state import normalise_emoji
from discord_mcp.emulator.validation import (
    check_only_one,
    parse_limit,
    parse_snowflake_query,
)


def split_path(raw_path: str) -> list[str]:
    """Path segments, each percent-decoded on its own (an encoded ``/`` stays in its segment)."""
    return [unquote(segment) for segment in raw_path.strip("/").split("/")]


def major_parameter(params: dict[str, str]) -> str:
    """The top-level resource a bucket is counted for (channel, guild, or webhook and token)."""
    if "channel_id" in params:
        return params["channel_id"]
    if "guild_id" in params:
        return params["guild_id"]
    if "webhook_id" in params:
        return f"{params['webhook_id']}:{params.get('webhook_token', '')}"
    return ""


def _snowflake_param(value: str, not_found: Callable[[], errors.DiscordError]) -> str:
    # A path id that is not a number names nothing that exists.
    if not value.isdigit():
        raise not_found()
    return value


def _channel_id(call: Call) -> str:
    return _snowflake_param(call.params["channel_id"], errors.unknown_channel)


def _message_id(call: Call) -> str:
    return _snowflake_param(call.params["message_id"], errors.unknown_message)


def _seen(call: Call, *, read: int = 0) -> tuple[Channel, int]:
    """The path's channel and the bot's permissions there (50001 if it cannot see it)."""
    return access.visible_channel(call.state, _channel_id(call), read=read)


def _query_flag(call: Call, name: str) -> bool:
    return call.query.get(name, "false").lower() in ("true", "1")


# -- users, application, gateway -----------------------------------------------------------


def get_me(call: Call) -> Reply:
    user = call.state.bot.to_json()
    user.update(mfa_enabled=False, locale="en-US", verified=True, email=None, premium_type=0)
    return Reply(200, user)


def get_user(call: Call) -> Reply:
    user_id = _snowflake_param(call.params["user_id"], errors.unknown_user)
    return Reply(200, call.state.get_user(user_id).to_json())


def create_dm(call: Call) -> Reply:
    return Reply(200, call.state.open_dm(call.body).to_json())


def get_application(call: Call) -> Reply:
    state = call.state
    return Reply(
        200,
        {
            "id": state.bot.id,
            "name": state.bot.username,
            "icon": None,
            "description": "A local Discord for discord-mcp",
            "type": None,
            "bot": state.bot.to_json(),
            "bot_public": False,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "flags": application_flags(state.message_content_intent_enabled),
            "flags_new": str(application_flags(state.message_content_intent_enabled)),
            "redirect_uris": [],
            "interactions_endpoint_url": state.interactions_endpoint_url,
            "role_connections_verification_url": None,
            "owner": state.owner.to_json(),
            "approximate_guild_count": 1,
            "approximate_user_install_count": 0,
            "approximate_user_authorization_count": 0,
            "explicit_content_filter": 0,
            "team": None,
            "eligible_oauth2_scopes": ["bot", "applications.commands"],
        },
    )


def get_gateway_bot(call: Call) -> Reply:
    return Reply(
        200,
        {
            "url": f"ws://{call.host}/gateway",
            "shards": 1,
            "session_start_limit": call.budget.to_json(),
        },
    )


# -- guilds ---------------------------------------------------------------------------------


def get_guild(call: Call) -> Reply:
    access.guild_for_bot(call.state, call.params["guild_id"])
    return Reply(200, guild_json(call.state, with_counts=_query_flag(call, "with_counts")))


def list_active_threads(call: Call) -> Reply:
    """``GET /guilds/{guild_id}/threads/active``: every unarchived thread of the guild the bot can
    see (its parent is visible to it), newest first, and the bot's own thread memberships."""
    state = call.state
    access.guild_for_bot(state, call.params["guild_id"])
    threads = []
    for channel in state.channels.values():
        if not channel.is_thread or channel.archived or channel.parent_id is None:
            continue
        parent = state.channels.get(channel.parent_id)
        if parent is None or not state.permissions_for(state.bot.id, parent) & VIEW_CHANNEL:
            continue
        threads.append(channel)
    threads.sort(key=lambda c: int(c.id), reverse=True)
    members = [
        {
            "id": thread.id,
            "user_id": state.bot.id,
            "join_timestamp": thread.create_timestamp or state.now_iso(),
            "flags": 0,
        }
        for thread in threads
        if state.bot.id in thread.member_ids
    ]
    return Reply(
        200,
        {"threads": [t.to_json() for t in threads], "members": members, "has_more": False},
    )


def list_archived_public_threads(call: Call) -> Reply:
    """``GET /channels/{channel_id}/threads/archived/public`` (READ_MESSAGE_HISTORY)."""
    channel, _ = _seen(call, read=READ_MESSAGE_HISTORY)
    if channel.is_thread or channel.is_dm:
        raise errors.wrong_channel_type()
    raw = call.query.get("limit", "50")
    limit = int(raw) if raw.isdigit() else 0
    if not 2 <= limit <= 100:
        raise errors.invalid_form(
            ("limit",), "NUMBER_TYPE_MAX", "int value should be between 2 and 100."
        )
    found = archived_public_threads(
        call.state, channel, before=call.query.get("before"), limit=limit
    )
    return Reply(200, found)


def list_roles(call: Call) -> Reply:
    access.guild_for_bot(call.state, call.params["guild_id"])
    return Reply(200, [role.to_json() for role in call.state.roles.values()])


def get_role(call: Call) -> Reply:
    access.guild_for_bot(call.state, call.params["guild_id"])
    role_id = _snowflake_param(call.params["role_id"], errors.unknown_role)
    return Reply(200, call.state.get_role(role_id).to_json())


def get_member(call: Call) -> Reply:
    access.guild_for_bot(call.state, call.params["guild_id"])
    user_id = _snowflake_param(call.params["user_id"], errors.unknown_member)
    call.state.get_member(user_id)
    return Reply(200, call.state.member_json(user_id))


# -- channels and threads -------------------------------------------------------------------


def get_channel(call: Call) -> Reply:
    channel, _ = _seen(call)
    return Reply(200, channel.to_json())


def update_channel(call: Call) -> Reply:
    channel, permissions = _seen(call)
    if channel.is_thread:
        access.check_thread_edit(call.state, channel, permissions, call.body)
    return Reply(200, call.state.update_channel(channel.id, call.body).to_json())


def delete_channel(call: Call) -> Reply:
    channel, permissions = _seen(call)
    access.require(permissions, MANAGE_THREADS if channel.is_thread else MANAGE_CHANNELS)
    return Reply(200, call.state.delete_channel(channel.id).to_json())


def create_thread_from_message(call: Call) -> Reply:
    channel, permissions = _seen(call)
    access.require(permissions, CREATE_PUBLIC_THREADS)
    thread = call.state.create_thread_from_message(
        channel.id, _message_id(call), call.state.bot.id, call.body
    )
    return Reply(201, thread.to_json())


def create_thread(call: Call) -> Reply:
    channel, permissions = _seen(call)
    access.require(permissions, access.thread_creation_permission(call.body))
    thread = call.state.create_thread(channel.id, call.state.bot.id, call.body)
    if channel.type in POSTS_ONLY:  # a forum's post answers with its first message too
        [first] = call.state.history(thread.id)
        return Reply(201, thread.to_json() | {"message": call.state.message_json(first)})
    return Reply(201, thread.to_json())


def trigger_typing(call: Call) -> Reply:
    channel, permissions = _seen(call)
    access.check_typing(channel, permissions)
    call.state.typing(channel.id, call.state.bot.id)
    return Reply(204)


# -- messages -----------------------------------------------------------------------------


def list_messages(call: Call) -> Reply:
    channel, permissions = _seen(call)
    channel_id = channel.id
    exclusive = check_only_one(call.query, ("around", "before", "after"))
    if exclusive is not None:
        raise exclusive
    limit = parse_limit(call.query.get("limit"), default=50)
    page = call.state.list_messages(
        channel_id,
        limit=limit,
        before=parse_snowflake_query("before", call.query.get("before")),
        after=parse_snowflake_query("after", call.query.get("after")),
        around=parse_snowflake_query("around", call.query.get("around")),
    )
    if not permissions & READ_MESSAGE_HISTORY:
        # Discord's docs: without READ_MESSAGE_HISTORY "no messages will be returned".
        return Reply(200, [])
    return Reply(200, [_read_message(call, m) for m in page])


def create_message(call: Call) -> Reply:
    channel, permissions = _seen(call)
    access.check_send(call.state, channel, permissions, call.body, files=bool(call.uploads))
    message, _ = call.state.create_message(
        channel.id, call.state.bot.id, call.body, uploads=call.uploads
    )
    data = call.state.message_json(message)
    if message.nonce is not None:
        # Discord echoes the nonce in the create response only; later reads omit it.
        data["nonce"] = message.nonce
    return Reply(200, data)


def get_message(call: Call) -> Reply:
    channel, _ = _seen(call, read=READ_MESSAGE_HISTORY)
    return Reply(200, _read_message(call, call.state.get_message(channel.id, _message_id(call))))


def _read_message(call: Call, message: Message) -> dict[str, Any]:
    """A message as a read shows it: content withheld while the portal's toggle is off (never
    in a DM)."""
    data = call.state.message_json(message)
    if call.state.message_content_intent_enabled or call.state.is_direct(message.channel_id):
        return data
    return withhold_content(data, call.state.bot.id)


def edit_message(call: Call) -> Reply:
    channel, permissions = _seen(call)
    access.check_edit(channel, permissions, files=bool(call.uploads))
    message = call.state.edit_message(
        channel.id, _message_id(call), call.state.bot.id, call.body, call.uploads
    )
    return Reply(200, call.state.message_json(message))


def delete_message(call: Call) -> Reply:
    channel, permissions = _seen(call)
    message = call.state.get_message(channel.id, _message_id(call))
    access.check_delete(call.state, message, permissions)
    call.state.delete_message(channel.id, message.id)
    return Reply(204)


# -- reactions ------------------------------------------------------------------------------


def add_own_reaction(call: Call) -> Reply:
    state = call.state
    channel, permissions = _seen(call)
    message = state.get_message(channel.id, _message_id(call))
    emoji = normalise_emoji(call.params["emoji_name"])
    access.check_reaction(message, emoji, permissions)
    state.add_reaction(channel.id, message.id, state.bot.id, emoji)
    return Reply(204)


def remove_own_reaction(call: Call) -> Reply:
    state = call.state
    channel, _ = _seen(call)
    state.remove_reaction(channel.id, _message_id(call), state.bot.id, call.params["emoji_name"])
    return Reply(204)


def list_reactions(call: Call) -> Reply:
    channel, _ = _seen(call, read=READ_MESSAGE_HISTORY)
    limit = parse_limit(call.query.get("limit"), default=25)
    users = call.state.reactors(
        channel.id,
        _message_id(call),
        call.params["emoji_name"],
        after=parse_snowflake_query("after", call.query.get("after")),
        limit=limit,
    )
    return Reply(200, [user.to_json() for user in users])


# -- interactions and their webhooks -------------------------------------------------------


def interaction_callback(call: Call) -> Reply:
    with_response = _query_flag(call, "with_response")
    result = call.desk.callback(
        call.params["interaction_id"],
        call.params["interaction_token"],
        call.body,
        with_response=with_response,
        uploads=call.uploads,
    )
    return Reply(204) if result is None else Reply(200, result)


def execute_webhook(call: Call) -> Reply:
    message = call.desk.followup(
        call.params["webhook_id"], call.params["webhook_token"], call.body, call.uploads
    )
    return Reply(200, message)


def _webhook_message(call: Call) -> tuple[str, str, str]:
    """Application id, interaction token, and ``@original`` or a followup's id."""
    message_id = call.params.get("message_id", "@original")
    if message_id != "@original":
        message_id = _message_id(call)
    return call.params["webhook_id"], call.params["webhook_token"], message_id


def edit_webhook_message(call: Call) -> Reply:
    application_id, token, message_id = _webhook_message(call)
    edited = call.desk.edit_original(application_id, token, call.body, message_id, call.uploads)
    return Reply(200, edited)


def get_webhook_message(call: Call) -> Reply:
    return Reply(200, call.desk.get_message(*_webhook_message(call)))


def delete_webhook_message(call: Call) -> Reply:
    call.desk.delete_message(*_webhook_message(call))
    return Reply(204)


_GUILD = "/guilds/{guild_id}"
_CHANNEL = "/channels/{channel_id}"
_MESSAGE = _CHANNEL + "/messages/{message_id}"
_WEBHOOK = "/webhooks/{webhook_id}/{webhook_token}"

ROUTES: tuple[RestRoute, ...] = (
    RestRoute("GET", "/users/@me", get_me),
    RestRoute("GET", "/users/{user_id}", get_user),
    RestRoute("POST", "/users/@me/channels", create_dm),
    RestRoute("GET", "/applications/@me", get_application),
    RestRoute("GET", "/oauth2/applications/@me", get_application),
    RestRoute("GET", "/gateway/bot", get_gateway_bot),
    RestRoute("GET", _GUILD, get_guild),
    RestRoute("GET", _GUILD + "/roles", list_roles),
    RestRoute("GET", _GUILD + "/threads/active", list_active_threads),
    RestRoute("GET", _GUILD + "/roles/{role_id}", get_role),
    RestRoute("GET", _GUILD + "/members/{user_id}", get_member),
    RestRoute("GET", _CHANNEL, get_channel),
    RestRoute("PATCH", _CHANNEL, update_channel),
    RestRoute("DELETE", _CHANNEL, delete_channel),
    RestRoute("POST", _CHANNEL + "/threads", create_thread),
    RestRoute("GET", _CHANNEL + "/threads/archived/public", list_archived_public_threads),
    RestRoute("POST", _CHANNEL + "/typing", trigger_typing),
    RestRoute("GET", _CHANNEL + "/messages", list_messages),
    RestRoute("POST", _CHANNEL + "/messages", create_message),
    RestRoute("GET", _MESSAGE, get_message),
    RestRoute("PATCH", _MESSAGE, edit_message),
    RestRoute("DELETE", _MESSAGE, delete_message),
    RestRoute("POST", _MESSAGE + "/threads", create_thread_from_message),
    RestRoute("PUT", _MESSAGE + "/reactions/{emoji_name}/@me", add_own_reaction),
    RestRoute("DELETE", _MESSAGE + "/reactions/{emoji_name}/@me", remove_own_reaction),
    RestRoute("GET", _MESSAGE + "/reactions/{emoji_name}", list_reactions),
    RestRoute(
        "POST",
        "/interactions/{interaction_id}/{interaction_token}/callback",
        interaction_callback,
        needs_auth=False,
        global_limit=False,
    ),
    RestRoute("POST", _WEBHOOK, execute_webhook, needs_auth=False, global_limit=False),
    *(
        RestRoute(method, _WEBHOOK + path, handler, needs_auth=False, global_limit=False)
        for path in ("/messages/@original", "/messages/{message_id}")
        for method, handler in (
            ("GET", get_webhook_message),
            ("PATCH", edit_webhook_message),
            ("DELETE", delete_webhook_message),
        )
    ),
    *COMMAND_ROUTES,
)

ROUTE_NAMES = frozenset(route.name for route in ROUTES)


def find_route(method: str, segments: list[str]) -> tuple[RestRoute, dict[str, str]]:
    """The route for ``method`` and path ``segments``, or raise 404/405 as Discord does.

    Literal segments win over parameters (``/users/@me`` before ``/users/{user_id}``).
    """
    matches = [(route, params) for route in ROUTES if (params := route.match(segments)) is not None]
    if not matches:
        raise errors.not_found()
    for route, params in sorted(matches, key=lambda m: len(m[1])):
        if route.method == method:
            return route, params
    raise errors.method_not_allowed()
