"""Reading Discord's answers for :mod:`discord_mcp.transport.rest`: error bodies into
:mod:`discord_mcp.errors`, 429 bodies into a wait, and the backoff between retries.

Only the REST client uses these; they live apart so the one request function stays readable.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, cast

import httpx

from discord_mcp.errors import (
    BadRequest,
    CloudflareBanned,
    DiscordHTTPError,
    DiscordServerError,
    Forbidden,
    NotFound,
    Unauthorized,
    UnexpectedAnswer,
)
from discord_mcp.transport.routes import Route


@dataclass(frozen=True, slots=True)
class Shape:
    """What a success answer must be: an object with ``keys``, or (``many``) a list of them."""

    many: bool = False
    keys: tuple[str, ...] = ("id",)

    def fits(self, body: Any) -> bool:
        items = body if self.many and isinstance(body, list) else [body]
        if self.many and not isinstance(body, list):
            return False
        return all(isinstance(i, dict) and all(k in i for k in self.keys) for i in items)

    def __str__(self) -> str:
        having = f" with {', '.join(repr(k) for k in self.keys)}" if self.keys else ""
        return f"a list of objects{having}" if self.many else f"an object{having}"


ONE = Shape()
"""One Discord object with its ``id`` (a message, a channel, a user)."""
MANY = Shape(many=True)
"""A list of them."""
OBJECT = Shape(keys=())
"""Any JSON object."""


def decoded(response: httpx.Response, route: Route, expect: Shape | None) -> Any:
    """A success answer's JSON (None for an empty body), checked against ``expect``.

    Raises:
        UnexpectedAnswer: the body is not JSON, or not of the shape expected.
    """
    body: Any = None
    if response.content:
        try:
            body = response.json()
        except ValueError:
            html = "html" in response.headers.get("content-type", "").lower() or (
                response.content.lstrip()[:1] == b"<"
            )
            what = "an HTML page" if html else "a body that is not JSON"
            raise UnexpectedAnswer(
                route.method, route.template, response.status_code, what
            ) from None
    if expect is not None and not expect.fits(body):
        raise UnexpectedAnswer(
            route.method,
            route.template,
            response.status_code,
            f"JSON of another shape ({_kind(body, expect)} where {expect} belongs)",
        )
    return body


def _kind(body: Any, expect: Shape) -> str:
    if body is None:
        return "nothing"
    if isinstance(body, dict):
        return "an object" if expect.many or not body else "an object without them"
    if isinstance(body, list):
        return "a list of other things" if expect.many else "a list"
    return f"a {type(body).__name__}"


def backoff(attempt: int) -> float:
    """Seconds before retry ``attempt`` (1, 2, ...): exponential, capped at 8 s, jittered."""
    return float(min(0.5 * 2 ** (attempt - 1), 8.0) * (0.5 + random.random()))  # noqa: S311


def json_body(response: httpx.Response) -> dict[str, Any] | None:
    """The response's JSON object, or None when it has none."""
    try:
        body = response.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


DEFAULT_RETRY_AFTER_S = 2.0
"""The wait for a JSON 429 that names none (no ``retry_after``, no ``Retry-After`` header, no
``X-RateLimit-Reset-After``): a limit, not a ban, so a short wait."""


def is_cloudflare_ban(response: httpx.Response) -> bool:
    """Whether a 429 is Cloudflare's ban rather than Discord's rate limit, by Cloudflare's own
    signs, as discord.py tells them: Discord's answers come through its proxy (a ``Via``
    header) with a JSON body; a ban is Cloudflare's error page (HTML, no ``Via``). A JSON 429
    that came through Discord but lacks ``retry_after`` is still a limit (:func:`parse_429`)."""
    if "via" not in response.headers:
        return True
    if "text/html" in response.headers.get("content-type", "").lower():
        return True
    return json_body(response) is None


def ban_seconds(response: httpx.Response) -> float | None:
    """How long Cloudflare says its ban lasts (its ``Retry-After`` header, in seconds), if it
    says so with a positive, finite number."""
    return _seconds(response.headers.get("retry-after"))


def _seconds(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds > 0 else None


def parse_429(response: httpx.Response, route: Route) -> tuple[float, bool]:
    """``(retry_after, is_global)`` from Discord's 429.

    The wait is the body's ``retry_after``; a JSON 429 without it (Discord documents the
    ``Retry-After`` header as just as good) waits what the ``Retry-After`` or
    ``X-RateLimit-Reset-After`` header says, else :data:`DEFAULT_RETRY_AFTER_S`.

    Raises:
        CloudflareBanned: the 429 is Cloudflare's ban (:func:`is_cloudflare_ban`).
    """
    body = json_body(response)
    if body is None or is_cloudflare_ban(response):
        raise CloudflareBanned(route.method, route.template)
    given = body.get("retry_after")
    if isinstance(given, int | float) and not isinstance(given, bool):
        retry_after = max(float(given), 0.0)
    else:
        retry_after = (
            _seconds(response.headers.get("retry-after"))
            or _seconds(response.headers.get("x-ratelimit-reset-after"))
            or DEFAULT_RETRY_AFTER_S
        )
    is_global = bool(body.get("global")) or response.headers.get("x-ratelimit-scope") == "global"
    return retry_after, is_global


def http_error(response: httpx.Response, route: Route) -> DiscordHTTPError:
    """The error for a non-2xx, non-429 response, with Discord's code, message and fields."""
    body = json_body(response) or {}
    code = body.get("code") if isinstance(body.get("code"), int) else 0
    message = body.get("message") if isinstance(body.get("message"), str) else ""
    errors = body.get("errors") if isinstance(body.get("errors"), dict) else None
    status = response.status_code
    kind: type[DiscordHTTPError] = {
        400: BadRequest,
        401: Unauthorized,
        403: Forbidden,
        404: NotFound,
    }.get(status, DiscordServerError if status >= 500 else DiscordHTTPError)
    return kind(
        status,
        cast(int, code),
        cast(str, message),
        method=route.method,
        route=route.template,
        errors=cast(dict[str, Any] | None, errors),
    )
