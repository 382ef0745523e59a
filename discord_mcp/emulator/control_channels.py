"""The control API's channels: add a channel to the guild.

``POST /_emulator/channels`` ``{"name": "1-100 characters", "topic"?: "0-1024 characters",
"type"?: 0 | 5 | 15 | 16}`` adds a text (0, the default), announcement (5), forum (15) or media
(16) channel, with no permission overwrites, and answers it (201; the bot sees it as ``GET
/channels/{id}`` shows it, and the owner's page lists it). What each kind accepts is in
``channel_kinds.py``; 400 ``{"error"}`` for anything else, as elsewhere in the control API.
A chat channel (issue 25) is such a text channel.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from discord_mcp.emulator.channel_kinds import CREATABLE
from discord_mcp.emulator.control_base import ControlError, ControlledEmulator, fail, read_object


def channel_routes(emulator: ControlledEmulator) -> list[Route]:
    """``/channels`` (creation) bound to one emulator."""

    async def create(request: Request) -> Response:
        try:
            data = await read_object(request, {"type", "name", "topic"}, {"name"})
            kind, name, topic = data.get("type", 0), data["name"], data.get("topic")
            if isinstance(kind, bool) or kind not in CREATABLE:
                raise ControlError(f"'type' must be one of {sorted(CREATABLE)}")
            if not isinstance(name, str) or not 1 <= len(name) <= 100:
                raise ControlError("'name' must be a string of 1 to 100 characters")
            if topic is not None and (not isinstance(topic, str) or len(topic) > 1024):
                raise ControlError("'topic' must be a string of at most 1024 characters")
        except ControlError as exc:
            return fail(exc)
        channel = emulator.state.create_channel(name, int(kind), topic=topic or None)
        return JSONResponse(channel.to_json(), status_code=201)

    return [Route("/channels", create, methods=["POST"])]
