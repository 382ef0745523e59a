"""The control API under ``/_emulator``: act as Discord's users and script failures.

This is a public contract for tests, benchmarks and people; paths and fields only grow. It
is not reachable under ``/api/v10``, and only from its own origin (``outside.py``): bodies are
``application/json`` (415 otherwise), a browser's request from another site or origin is 403,
and with a control token (required beyond loopback) every request carries ``Authorization:
Bearer <token>`` (401 otherwise).

Any problem with a control request is a 400 ``{"error": "<sentence>"}``; when
Discord itself would refuse the action, ``"discord"`` carries Discord's error body too.

- ``GET /_emulator/state``: ``{"guild", "channels" (threads and DM channels included), "users",
  "stats", "faults", "gateway_sessions", "bot_user_id", "owner_user_id", "channel_id",
  "roles", "members", "bot_role_id", "bot_in_guild", "bot_permissions", "binding"}``.
  ``roles`` are role objects (``@everyone``, whose id is the guild's, then the bot's role),
  ``members`` member objects with their ``user`` (the guild's owner is ``guild.owner_id``, the
  ``owner`` user), and ``bot_permissions`` maps every channel and thread id to the bot's
  effective permissions there as a decimal string, as the REST routes enforce them.
  ``binding`` is ``{"host", "loopback": bool, "control_token": bool}``: where the emulator
  listens, and whether it asks for a control token; ``GET /_emulator/binding`` answers it
  without the token (``discord-mcp doctor`` reads it). ``stats`` always has
  ``rest_requests``, ``rest_429``, ``gateway_identifies``, ``gateway_resumes`` (IDENTIFY and
  RESUME payloads received), ``gateway_connections_open``, ``gateway_connections_total``,
  ``gateway_heartbeats``, ``gateway_dispatches``, ``interactions_failed``,
  ``interactions_acknowledged_twice`` (callbacks refused with 40060), ``outside_refused``
  (requests ``outside.py`` refused), and more counters.
  ``gateway_sessions`` lists ``{"session_id", "intents", "seq", "connected", "shard"}`` for
  every live session (connected or resumable).
- ``POST /_emulator/time`` ``{"advance": seconds}``: time passes (``control_time.py``).
- ``POST /_emulator/users`` ``{"username"}``: a new human member; answers the user (201).
- ``POST /_emulator/users/{user_id}`` ``{"accepts_dms": bool}``: that user's privacy setting
  for direct messages from the bot (default true; false makes the bot's messages to their DM
  channel fail with 50007 "Cannot send messages to this user"); answers ``{"user_id",
  "accepts_dms"}``. The bot opens a DM channel (type 1) with ``POST /users/@me/channels``;
  posting to it here as its recipient is the user's reply (nobody else may post there).
- ``POST /_emulator/channels/{channel_id}/messages`` ``{"author_id", "content"?,
  "message_reference"?: {"message_id", "type"?: 0 (a reply) or 1 (a forward, of a message in
  any channel: no content of its own, the original in ``message_snapshots``)},
  "attachments"?: [{"filename", "data_base64", "content_type"?, "description"?,
  "duration_secs"?, "waveform"?, "is_spoiler"?}],
  "voice_message"?: bool}``: posts as that user, with REST's validation and its thread rules
  (a thread id is a channel id); answers the message. Files and voice messages are described
  in ``control_files.py``; a message needs content or a file.
- ``GET /_emulator/channels/{channel_id}/messages``: every message, oldest first, as a JSON
  array of message objects (components and reactions included; ``me`` means the bot).
- ``POST /_emulator/reactions`` ``{"user_id", "channel_id", "message_id", "emoji",
  "remove"?: bool}``: that user adds (or removes) a reaction; answers the updated message (200).
- ``POST /_emulator/interactions`` (a user clicks a button, picks in a select or submits a
  modal; answers what the bot replied) and ``GET /_emulator/interactions/{interaction_id}``:
  described in ``control_interactions.py``.
- ``POST /_emulator/channels`` (a new announcement, forum, media or text channel): described
  in ``control_channels.py``.
- ``POST /_emulator/roles/{role_id}`` (a role's permissions), ``POST
  /_emulator/channels/{channel_id}/overwrites`` (a channel's permission overwrites) and ``POST
  /_emulator/members/{user_id}`` (a member's roles, the bot's membership): described in
  ``control_guild.py``. The control API itself is never subject to permissions.
- ``POST /_emulator/faults``: any of ``{"route": "POST /channels/{channel_id}/messages",
  "status": 500, "count": 1, "retry_after"?, "global"?, "cloudflare"?, "scope"?, "code"?,
  "message"?, "no_retry_after"?}`` (``no_retry_after``: a JSON 429 from Discord whose body
  lacks ``retry_after``, its ``Retry-After`` header alone saying the wait; ``cloudflare``:
  Cloudflare's HTML ban page, without ``Via``, its ``Retry-After`` the ban's rest),
  ``{"interactions_endpoint_url": "https://..." | null}`` (the portal's Interactions Endpoint
  URL: while set, interactions go there and never over the gateway, as on Discord),
  ``{"rate_limit_scale": 0.01}``, ``{"strict_archived_threads": true}``,
  ``{"clear": true}`` (drop pending route faults), ``{"message_content_intent_enabled":
  false}`` (the portal toggle: later IDENTIFYs with the intent get 4014, REST reads withhold
  content), ``{"identify_limit": 3}`` (a fresh ``session_start_limit`` of that total, and a
  working token again), ``{"token_reset": true}`` (as if the token was reset: every session
  closed with 4004, REST 401, until ``identify_limit`` is set), ``{"active_thread_limit": 3}``
  (the guild's cap on active threads, 1000 by default; past it, 160006),
  ``{"cloudflare_ban": bool}`` (start Cloudflare's ban now, as if too many invalid requests
  had been sent, or lift it), and ``{"gateway": {...}}``
  acting on open gateway connections, combined in one body. ``gateway`` takes
  ``"session_id"?: str`` (only the connection of that session; default: every open
  connection) and one or more of ``"stop_acks": bool`` (no more op 11 on those connections; a
  new connection ACKs again), ``"heartbeat_request": true`` (op 1 from the server),
  ``"invalid_session": bool`` (op 9 with that ``d``; false ends the session), ``"reconnect":
  true`` (op 7; closed with 4000 after a grace period), and one of ``"close": <code>`` (a close
  frame with that code: 1000-1003, 1007-1014 or 3000-4999) or ``"drop": true`` (the TCP
  connection ends without a close frame), applied in that order. With no matching connection
  the request is refused. Answers the resulting fault state (``GET /_emulator/faults`` reads
  it): the keys above plus ``"session_start_limit"`` and ``"gateway_connections":
  [{"session_id", "acks_stopped"}]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from discord_mcp.emulator import errors
from discord_mcp.emulator.config import MAX_RATE_LIMIT_SCALE
from discord_mcp.emulator.control_base import (
    ControlError,
    ControlledEmulator,
    discord_refusal,
    fail,
    read_object,
    text_field,
)
from discord_mcp.emulator.control_files import with_files
from discord_mcp.emulator.faults import RouteFault
from discord_mcp.emulator.outside import is_loopback
from discord_mcp.emulator.rest import ROUTE_NAMES


def control_routes(emulator: ControlledEmulator) -> list[Route]:
    """The ``/_emulator`` routes bound to one emulator."""
    state = emulator.state

    async def get_state(request: Request) -> Response:
        return JSONResponse(
            {
                "guild": state.guild.to_json(),
                "channels": [channel.to_json() for channel in state.channels.values()],
                "users": [user.to_json() for user in state.users.values()],
                "stats": emulator.stats_json(),
                "faults": emulator.fault_state(),
                "gateway_sessions": emulator.sessions.to_json(),
                "bot_user_id": state.bot.id,
                "owner_user_id": state.owner.id,
                "channel_id": state.channel.id,
                "roles": [role.to_json() for role in state.roles.values()],
                "members": [state.member_json(user_id) for user_id in state.members],
                "bot_role_id": state.bot_role.id,
                "bot_in_guild": state.bot_in_guild,
                "bot_permissions": {
                    channel.id: str(state.permissions_for(state.bot.id, channel))
                    for channel in state.channels.values()
                },
                "binding": _binding(emulator),
            }
        )

    async def get_binding(request: Request) -> Response:
        return JSONResponse(_binding(emulator))

    async def create_user(request: Request) -> Response:
        try:
            data = await read_object(request, {"username"}, {"username"})
            username = text_field(data, "username")
            if len(username) > 32:
                raise ControlError("'username' must be at most 32 characters")
        except ControlError as exc:
            return fail(exc)
        return JSONResponse(state.create_user(username).to_json(), status_code=201)

    async def set_user(request: Request) -> Response:
        try:
            data = await read_object(request, {"accepts_dms"}, {"accepts_dms"})
            accepts = data["accepts_dms"]
            if not isinstance(accepts, bool):
                raise ControlError("'accepts_dms' must be true or false")
            user_id = request.path_params["user_id"]
            try:
                state.set_accepts_dms(user_id, accepts)
            except errors.DiscordError as exc:
                raise discord_refusal(exc, "find this user") from None
        except ControlError as exc:
            return fail(exc)
        return JSONResponse({"user_id": user_id, "accepts_dms": accepts})

    async def post_message(request: Request) -> Response:
        channel_id = request.path_params["channel_id"]
        try:
            data = await read_object(request, _MESSAGE_FIELDS, {"author_id"})
            author_id = text_field(data, "author_id")
            if author_id not in state.users:
                raise ControlError(f"no user with id {author_id!r}; create one with /users")
            body = {"content": data["content"]} if "content" in data else {}
            if data.get("message_reference") is not None:
                body["message_reference"] = data["message_reference"]
            try:
                uploads = with_files(data, body)
            except ValueError as exc:
                raise ControlError(str(exc)) from None
            try:
                message, _ = state.create_message(channel_id, author_id, body, uploads=uploads)
            except errors.DiscordError as exc:
                raise discord_refusal(exc, "post this message") from None
        except ControlError as exc:
            return fail(exc)
        return JSONResponse(state.message_json(message))

    async def list_messages(request: Request) -> Response:
        try:
            history = state.history(request.path_params["channel_id"])
        except errors.DiscordError as exc:
            return fail(discord_refusal(exc, "list this channel"))
        return JSONResponse([state.message_json(m) for m in history])

    async def react(request: Request) -> Response:
        fields = {"user_id", "channel_id", "message_id", "emoji"}
        try:
            data = await read_object(request, fields | {"remove"}, fields)
            user_id, channel_id, message_id, emoji = (
                text_field(data, key) for key in ("user_id", "channel_id", "message_id", "emoji")
            )
            if user_id not in state.users:
                raise ControlError(f"no user with id {user_id!r}; create one with /users")
            remove = data.get("remove", False)
            if not isinstance(remove, bool):
                raise ControlError("'remove' must be true or false")
            try:
                if remove:
                    message = state.remove_reaction(channel_id, message_id, user_id, emoji)
                else:
                    message = state.add_reaction(channel_id, message_id, user_id, emoji)
            except errors.DiscordError as exc:
                raise discord_refusal(exc, "change this reaction") from None
        except ControlError as exc:
            return fail(exc)
        return JSONResponse(state.message_json(message))

    async def get_faults(request: Request) -> Response:
        return JSONResponse(emulator.fault_state())

    async def set_faults(request: Request) -> Response:
        try:
            data = await read_object(request, _FAULT_KEYS, set())
            _apply_faults(emulator, data)
        except ControlError as exc:
            return fail(exc)
        return JSONResponse(emulator.fault_state())

    return [
        Route("/state", get_state, methods=["GET"]),
        Route("/binding", get_binding, methods=["GET"]),
        Route("/users", create_user, methods=["POST"]),
        Route("/users/{user_id}", set_user, methods=["POST"]),
        Route("/channels/{channel_id}/messages", post_message, methods=["POST"]),
        Route("/channels/{channel_id}/messages", list_messages, methods=["GET"]),
        Route("/reactions", react, methods=["POST"]),
        Route("/faults", get_faults, methods=["GET"]),
        Route("/faults", set_faults, methods=["POST"]),
    ]


def _binding(emulator: ControlledEmulator) -> dict[str, Any]:
    host = emulator.guard.bound_host
    return {
        "host": host,
        "loopback": is_loopback(host),
        "control_token": emulator.guard.token is not None,
    }


_MESSAGE_FIELDS = {"author_id", "content", "message_reference", "attachments", "voice_message"}
_ROUTE_FAULT_KEYS = {
    "route",
    "status",
    "count",
    "retry_after",
    "global",
    "cloudflare",
    "scope",
    "code",
    "message",
    "no_retry_after",
}
_SETTING_KEYS = {
    "rate_limit_scale",
    "strict_archived_threads",
    "clear",
    "message_content_intent_enabled",
    "identify_limit",
    "token_reset",
    "gateway",
    "active_thread_limit",
    "cloudflare_ban",
    "interactions_endpoint_url",
}
_FAULT_KEYS = _ROUTE_FAULT_KEYS | _SETTING_KEYS
_GATEWAY_KEYS = {
    "session_id",
    "stop_acks",
    "heartbeat_request",
    "invalid_session",
    "reconnect",
    "close",
    "drop",
}


MAX_RETRY_AFTER = 86_400


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _apply_faults(emulator: ControlledEmulator, data: dict[str, Any]) -> None:
    """Validate the whole body first, then apply it, so a bad body changes nothing."""
    if not data:
        raise ControlError(f"give at least one of {sorted(_FAULT_KEYS)}")
    scale = data.get("rate_limit_scale")
    if scale is not None and not (_is_number(scale) and 0 < scale <= MAX_RATE_LIMIT_SCALE):
        raise ControlError(
            "'rate_limit_scale' must be a number greater than 0 and at most "
            f"{MAX_RATE_LIMIT_SCALE:g}"
        )
    strict = data.get("strict_archived_threads")
    if strict is not None and not isinstance(strict, bool):
        raise ControlError("'strict_archived_threads' must be true or false")
    clear = data.get("clear", False)
    if not isinstance(clear, bool):
        raise ControlError("'clear' must be true or false")
    for key in ("message_content_intent_enabled", "token_reset", "cloudflare_ban"):
        if key in data and not isinstance(data[key], bool):
            raise ControlError(f"{key!r} must be true or false")
    limit = data.get("identify_limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ControlError("'identify_limit' must be an integer of at least 0")
    threads = data.get("active_thread_limit")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)):
        threads = 0
    if "active_thread_limit" in data and (threads is None or threads < 1):
        raise ControlError("'active_thread_limit' must be an integer of at least 1")
    endpoint = data.get("interactions_endpoint_url")
    if endpoint is not None and not (
        isinstance(endpoint, str) and endpoint.startswith("https://") and len(endpoint) <= 2048
    ):
        raise ControlError("'interactions_endpoint_url' must be an https:// URL or null")
    fault = _route_fault(data) if "route" in data else None
    if fault is None and set(data) & (_ROUTE_FAULT_KEYS - {"route"}):
        raise ControlError("route fault fields need a 'route'")
    gateway = _gateway_fault(emulator, data["gateway"]) if "gateway" in data else None
    if clear:
        emulator.faults.clear()
    if scale is not None:
        emulator.limiter.scale = float(scale)
    if strict is not None:
        emulator.state.strict_archived_threads = strict
    if fault is not None:
        emulator.faults.add(fault)
    if "message_content_intent_enabled" in data:
        emulator.state.message_content_intent_enabled = data["message_content_intent_enabled"]
    if limit is not None:
        emulator.sessions.budget.set_total(limit)
    if threads is not None:
        emulator.state.active_thread_limit = threads
    if "cloudflare_ban" in data:
        emulator.limiter.ban(data["cloudflare_ban"])
    if "interactions_endpoint_url" in data:
        emulator.state.interactions_endpoint_url = endpoint
    if data.get("token_reset") is True:
        emulator.sessions.reset_token()
    elif data.get("token_reset") is False:
        emulator.sessions.budget.token_reset = False
    if gateway is not None:
        gateway()


def _is_close_code(value: Any) -> bool:
    """A code a close frame may carry (RFC 6455: not 1004-1006, 1015, or 1016-2999)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return False
    return 1000 <= value <= 1003 or 1007 <= value <= 1014 or 3000 <= value <= 4999


def _gateway_fault(emulator: ControlledEmulator, value: Any) -> Callable[[], None]:
    """Check a ``gateway`` fault; returns what applies it."""
    if not isinstance(value, dict):
        raise ControlError("'gateway' must be a JSON object")
    unknown = sorted(set(value) - _GATEWAY_KEYS)
    if unknown:
        raise ControlError(f"unknown gateway field(s) {unknown}; allowed: {sorted(_GATEWAY_KEYS)}")
    if not set(value) - {"session_id"}:
        raise ControlError(f"give at least one of {sorted(_GATEWAY_KEYS - {'session_id'})}")
    session_id = value.get("session_id")
    if session_id is not None and not isinstance(session_id, str):
        raise ControlError("'session_id' must be a string")
    for key in ("stop_acks", "invalid_session"):
        if key in value and not isinstance(value[key], bool):
            raise ControlError(f"{key!r} must be true or false")
    for key in ("heartbeat_request", "reconnect", "drop"):
        if key in value and value[key] is not True:
            raise ControlError(f"{key!r} can only be true")
    if "close" in value and not _is_close_code(value["close"]):
        raise ControlError("'close' must be a close code: 1000-1003, 1007-1014 or 3000-4999")
    if "close" in value and "drop" in value:
        raise ControlError("give 'close' or 'drop', not both")
    targets = emulator.gateway.targets(session_id)
    if not targets:
        where = "" if session_id is None else f" for session {session_id!r}"
        raise ControlError(f"no open gateway connection{where}")

    def apply() -> None:
        for connection in targets:
            if "stop_acks" in value:
                connection.acks_stopped = value["stop_acks"]
            if "heartbeat_request" in value:
                connection.request_heartbeat()
            if "invalid_session" in value:
                connection.invalidate(value["invalid_session"])
            if "reconnect" in value:
                connection.reconnect()
            if "close" in value:
                connection.close(value["close"], "Closed by the emulator's control API.")
            if "drop" in value:
                connection.drop()

    return apply


def _route_fault(data: dict[str, Any]) -> RouteFault:
    route = data["route"]
    if route not in ROUTE_NAMES:
        raise ControlError(f"unknown route {route!r}; known routes: {sorted(ROUTE_NAMES)}")
    status = data.get("status")
    if isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599:
        raise ControlError("'status' must be an HTTP error status (400-599)")
    count = data.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ControlError("'count' must be an integer of at least 1")
    retry_after = data.get("retry_after")
    if retry_after is not None and not (
        _is_number(retry_after) and 0 <= retry_after <= MAX_RETRY_AFTER
    ):
        raise ControlError(f"'retry_after' must be a number of seconds from 0 to {MAX_RETRY_AFTER}")
    flags = {key: data.get(key, False) for key in ("global", "cloudflare", "no_retry_after")}
    if any(not isinstance(value, bool) for value in flags.values()):
        raise ControlError("'global', 'cloudflare' and 'no_retry_after' must be true or false")
    scope = data.get("scope")
    if scope is not None and scope not in ("user", "global", "shared"):
        raise ControlError("'scope' must be 'user', 'global' or 'shared'")
    if status != 429 and (retry_after is not None or any(flags.values()) or scope is not None):
        raise ControlError(
            "'retry_after', 'global', 'cloudflare', 'no_retry_after' and 'scope' need status 429"
        )
    code = data.get("code")
    if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
        raise ControlError("'code' must be an integer")
    message = data.get("message")
    if message is not None and not isinstance(message, str):
        raise ControlError("'message' must be a string")
    return RouteFault(
        route=route,
        status=status,
        remaining=count,
        retry_after=None if retry_after is None else float(retry_after),
        is_global=flags["global"],
        cloudflare=flags["cloudflare"],
        no_retry_after=flags["no_retry_after"],
        scope=scope,
        code=code,
        message=message,
    )
