"""Reading Discord's answers for :mod:`discord_mcp.transport.rest`: error bodies into
:mod:`discord_mcp.errors`, 429 bodies into a wait, and the backoff between retries.

Only the REST client uses these; they live apart so the one request function stays readable.
"""

from __future__ import annotations

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


def is_cloudflare_ban(response: httpx.Response) -> bool:
    """Whether a 429 is Cloudflare's ban rather than Discord's rate limit: its body is not
    Discord's JSON with ``retry_after`` (an HTML page, or a JSON notice without it)."""
    body = json_body(response)
    return body is None or not isinstance(body.get("retry_after"), int | float)


def parse_429(response: httpx.Response, route: Route) -> tuple[float, bool]:
    """``(retry_after, is_global)`` from a 429; a 429 without Discord's body is Cloudflare's.

    Raises:
        CloudflareBanned: the body is not Discord's rate-limit JSON.
    """
    body = json_body(response)
    if body is None or is_cloudflare_ban(response):
        raise CloudflareBanned(route.method, route.template)
    retry_after = max(float(body["retry_after"]), 0.0)
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
