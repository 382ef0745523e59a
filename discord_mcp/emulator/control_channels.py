"""The control API's channels: add a channel of another kind to the guild.

``POST /_emulator/channels`` ``{"type": 0 | 5 | 15 | 16, "name": "1-100 characters"}`` adds a
text (0), announcement (5), forum (15) or media (16) channel, with no permission overwrites, and
answers it (201; the bot sees it as ``GET /channels/{id}`` shows it). What each kind accepts is
in ``channel_kinds.py``; 400 ``{"error"}`` for anything else, as elsewhere in the control API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from discord_mcp.emulator.channel_kinds import CREATABLE
from discord_mcp.emulator.control import ControlError, _fail, _object

if TYPE_CHECKING:
    from discord_mcp.emulator.app import Emulator


def channel_routes(emulator: Emulator) -> list[Route]:
    """``/channels`` (creation) bound to one emulator."""

    async def create(request: Request) -> Response:
        try:
            data = await _object(request, {"type", "name"}, {"type", "name"})
            kind, name = data["type"], data["name"]
            if isinstance(kind, bool) or kind not in CREATABLE:
                raise ControlError(f"'type' must be one of {sorted(CREATABLE)}")
            if not isinstance(name, str) or not 1 <= len(name) <= 100:
                raise ControlError("'name' must be a string of 1 to 100 characters")
        except ControlError as exc:
            return _fail(exc)
        channel = emulator.state.create_channel(name, int(kind))
        return JSONResponse(channel.to_json(), status_code=201)

    return [Route("/channels", create, methods=["POST"])]
