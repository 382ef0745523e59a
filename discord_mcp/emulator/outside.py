"""Who may reach the emulator: nobody outside drives it or reads it.

Theory. ``scripts/run`` leaves an emulator on ``127.0.0.1:8800`` while its user browses the
web, and its control API acts as the owner. A browser lets any page send a "simple" request
(``text/plain``, a form, no preflight) to any address, reads nothing back without CORS
headers, and sends the requesting page's ``Origin`` and ``Sec-Fetch-Site``. A page whose DNS
name is rebound to 127.0.0.1 is same-origin to the browser; only the ``Host`` header shows it.
So, for every request (the ASGI middleware :class:`OutsideGuard`, in this order):

1. ``Host``: bound to a loopback address, the emulator answers only to ``localhost``, a
   loopback address (``127.0.0.1``, ``[::1]``) or the bound name; anything else is 403 (DNS
   rebinding). Bound beyond loopback, a control token (below) and a bot token of the user's
   own are required instead (:func:`check_binding`): the built-in one is public.
2. The gateway websocket refuses a handshake whose ``Origin`` is another origin (a bot sends
   none; a web page cannot leave it out).
3. The control API (``/_emulator``): a browser's cross-origin request (``Origin`` not this
   origin, or ``Sec-Fetch-Site`` other than ``same-origin``/``none``) is 403 with a sentence,
   reads included (state, messages, the feed); a state-changing request must be
   ``application/json`` (415 otherwise), which a page on another origin cannot send without a
   CORS preflight that nothing here answers. No response carries CORS headers.
4. With a control token (``--control-token``, required beyond loopback), every control
   request and the owner's page need it: ``Authorization: Bearer <token>``, or ``?token=`` on
   a ``GET`` (the page's address, and its ``EventSource``, which cannot set headers). The page
   embeds the token in its HTML for its scripts; only a same-origin script can read it.

Discord's REST routes (``/api/v10``) keep Discord's own rule, the bot token: their clients are
not browsers, and a browser cannot add an ``Authorization`` header to a cross-origin request
without a preflight. Attachments are served so that they cannot run script here either
(``media.py``).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from discord_mcp.emulator.config import DEFAULT_TOKEN

CONTROL_PREFIX = "/_emulator"
_API_PREFIX = "/api/v10"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_SAME_SITE = frozenset({"same-origin", "none"})
_PUBLIC = frozenset({CONTROL_PREFIX + "/binding"})
"""Control routes readable without the control token: they tell nothing but how to connect."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) only reaches this machine."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_binding(host: str, control_token: str | None, token: str = DEFAULT_TOKEN) -> None:
    """Refuse to serve beyond loopback without a control token, or with the built-in bot token
    (it is printed in this project's documentation: anyone who reaches the emulator would read
    and post every message as the bot). Beyond loopback the bot token given is then the only
    one REST and the gateway's IDENTIFY accept.

    Raises:
        ValueError: with the sentence to show.
    """
    if is_loopback(host):
        return
    missing = []
    if not control_token:
        missing.append(
            "the control API acts as any user with no authentication: give a control token "
            "(--control-token)"
        )
    if token == DEFAULT_TOKEN:
        missing.append(
            "the built-in bot token is public, so anyone who reaches it would read and post "
            "every message as the bot: give a bot token of your own (--token)"
        )
    if missing:
        raise ValueError(
            f"{host} is reachable from other machines, and "
            + "; and ".join(missing)
            + "; or bind to 127.0.0.1"
        )


def beyond_loopback_notice(host: str) -> str:
    """What an emulator served beyond loopback protects, and what it does not."""
    return (
        f"{host} is reachable from other machines. Protected: the control API and the "
        "owner's page need the control token; Discord's routes (/api/v10) and the gateway "
        "accept only the bot token you gave. Not protected: everything travels as plain HTTP, "
        "so anyone on the network path can read it, tokens included; attachment links open "
        "for whoever holds one until they expire, as on Discord; and /_emulator/binding "
        "tells anyone where it listens."
    )


class OutsideGuard:
    """The checks above, around the emulator's whole ASGI app.

    ``bound_host`` is read at each request (the server sets it once the socket is bound).
    """

    def __init__(self, app: ASGIApp, *, bound_host: str = "127.0.0.1", token: str | None) -> None:
        self.app = app
        self.bound_host = bound_host
        self.token = token or None
        self.refused = 0
        """Requests refused so far (``stats.outside_refused`` in the control API's state)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is None:
            await self.app(scope, receive, _without_cors(send))
            return
        self.refused += 1
        if scope["type"] == "websocket":
            # Closing before accepting makes the server answer the handshake with 403.
            await send({"type": "websocket.close", "code": 1008})
        else:
            await _answer(send, *refusal)

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        path: str = scope["path"]
        host = headers.get("host", "")
        if is_loopback(self.bound_host) and not self._known_host(host):
            return 403, (
                f"the Host header {host!r} does not name this emulator (only "
                "localhost, 127.0.0.1 or [::1] do): a page whose DNS name points here "
                "cannot use it"
            )
        origin = headers.get("origin")
        own = f"http://{host}"
        if scope["type"] == "websocket":
            if origin is not None and origin.rstrip("/") != own:
                return 403, "another origin cannot open this gateway"
            return None
        if path == _API_PREFIX or path.startswith(_API_PREFIX + "/"):
            return None
        control = path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/")
        page = not control and not path.startswith(("/attachments/", "/media/", "/page/"))
        if control:
            site = headers.get("sec-fetch-site")
            if (origin is not None and origin.rstrip("/") != own) or (
                site is not None and site not in _SAME_SITE
            ):
                return 403, (
                    "the control API acts as Discord's users, so it answers only its own "
                    "page: this request came from another site or origin"
                )
        needs_token = (control and path not in _PUBLIC) or page
        if self.token is not None and needs_token and not self._has_token(scope, headers):
            return 401, (
                "this emulator needs its control token: send 'Authorization: Bearer <token>' "
                "(or open the page at the address the emulator printed, with ?token=)"
            )
        if control and scope["method"] not in _SAFE_METHODS:
            kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if kind != "application/json":
                return 415, (
                    f"the control API takes only application/json bodies (got {kind or 'none'!r})"
                )
        return None

    def _known_host(self, host: str) -> bool:
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        name = name.strip("[]").lower()
        # A loopback address written out is never a rebound DNS name; only names are checked.
        return is_loopback(name) or name == self.bound_host.strip("[]").lower()

    def _has_token(self, scope: Scope, headers: dict[str, str]) -> bool:
        assert self.token is not None
        given = headers.get("authorization", "")
        if given.startswith("Bearer ") and _same(given[7:], self.token):
            return True
        if scope["method"] in _SAFE_METHODS:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            return any(_same(value, self.token) for value in query.get("token", []))
        return False


def _same(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


def _without_cors(send: Send) -> Send:
    """Drop any CORS header on the way out: no other origin may read an answer."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = dict(message)
            message["headers"] = [
                (k, v)
                for k, v in message.get("headers", [])
                if not k.lower().startswith(b"access-control-")
            ]
        await send(message)

    return sending


async def _answer(send: Send, status: int, sentence: str) -> None:
    body = json.dumps({"error": sentence}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"x-content-type-options", b"nosniff"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
