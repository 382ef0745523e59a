"""The control API's clock: ``POST /_emulator/time`` ``{"advance": seconds}`` moves the
emulator's wall clock forward (0 to 30 days; never back), as if that much time had passed.

Messages and threads age with it: a message posted before is then that much older (the
old-message edit limit, 30046, applies past an hour), and threads idle past their
``auto_archive_duration`` are archived at once (``idle.py``); new snowflakes carry the new
time. Rate-limit windows, the interaction deadline and gateway heartbeats run on the monotonic
clock and are not moved. Answers ``{"time_offset": seconds ahead of the real clock, "wall":
the emulator's Unix time}``.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from discord_mcp.emulator.control_base import ControlError, ControlledEmulator, fail, read_object
from discord_mcp.emulator.idle import MAX_ADVANCE_S, advance


def time_routes(emulator: ControlledEmulator) -> list[Route]:
    """The ``/time`` route bound to one emulator."""

    async def post(request: Request) -> Response:
        try:
            data = await read_object(request, {"advance"}, {"advance"})
            seconds = data["advance"]
            if (
                isinstance(seconds, bool)
                or not isinstance(seconds, int | float)
                or not 0 <= seconds <= MAX_ADVANCE_S
            ):
                raise ControlError(f"'advance' must be a number of seconds, 0 to {MAX_ADVANCE_S:g}")
        except ControlError as exc:
            return fail(exc)
        offset = advance(emulator.state, float(seconds))
        return JSONResponse({"time_offset": offset, "wall": emulator.state.wall()})

    return [Route("/time", post, methods=["POST"])]
