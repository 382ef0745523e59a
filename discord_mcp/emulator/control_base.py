"""What the control routes (``control*.py``, ``feed.py``) share: the emulator as they see it,
and how a control request's body is read and a refusal answered (see ``control.py``'s
docstring for the contract).

The routes import this module and the emulator's parts; ``app.py`` imports the routes to mount
them, and nothing here or in a route imports ``app.py`` back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse

from discord_mcp.emulator import errors, json_body

if TYPE_CHECKING:
    from discord_mcp.emulator.faults import FaultBook
    from discord_mcp.emulator.gateway import Gateway
    from discord_mcp.emulator.interactions import InteractionDesk
    from discord_mcp.emulator.outside import OutsideGuard
    from discord_mcp.emulator.ratelimit import RateLimiter
    from discord_mcp.emulator.sessions import SessionRegistry
    from discord_mcp.emulator.state import State


class ControlledEmulator(Protocol):
    """The parts of one emulator the control routes act on (``app.Emulator`` has them)."""

    state: State
    desk: InteractionDesk
    faults: FaultBook
    limiter: RateLimiter
    sessions: SessionRegistry
    gateway: Gateway
    guard: OutsideGuard

    def stats_json(self) -> dict[str, Any]: ...

    def fault_state(self) -> dict[str, Any]: ...


class ControlError(Exception):
    """A control request that cannot be carried out; becomes a 400 (or its ``status``)."""

    status = 400

    def __init__(self, message: str, discord: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.discord = discord


def fail(exc: ControlError) -> JSONResponse:
    body: dict[str, Any] = {"error": exc.message}
    if exc.discord is not None:
        body["discord"] = exc.discord
    return JSONResponse(body, status_code=exc.status)


async def read_object(request: Request, allowed: set[str], required: set[str]) -> dict[str, Any]:
    raw = await request.body()
    try:
        data = json_body.loads(raw) if raw else None
    except json_body.Unreadable as exc:
        raise ControlError(f"the body is refused: {exc}") from None
    except ValueError:
        raise ControlError("the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise ControlError("the body must be a JSON object")
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ControlError(f"unknown field(s) {unknown}; allowed: {sorted(allowed)}")
    missing = sorted(required - set(data))
    if missing:
        raise ControlError(f"missing field(s) {missing}")
    return data


def text_field(data: dict[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str) or not value:
        raise ControlError(f"{key!r} must be a non-empty string")
    return value


def discord_refusal(exc: errors.DiscordError, action: str) -> ControlError:
    return ControlError(f"Discord would refuse to {action}: {exc.code} {exc.message}", exc.body())
