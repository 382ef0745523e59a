"""Who may call ``discord-mcp serve --http``: the one check in front of the MCP endpoint.

Theory. The server listens on 127.0.0.1 by default, and a browser on this machine reaches
127.0.0.1 too: any web page can send it requests. Two browser tricks matter, and the MCP
specification asks Streamable HTTP servers to stop both:

- **DNS rebinding**: a page at ``http://evil.example:8765`` whose name is made to resolve to
  127.0.0.1 is same-origin to the browser, which then lets it read our answers. Only the
  ``Host`` header (``evil.example:8765``) tells. So a request is answered only when its
  ``Host`` names this server: a loopback name (``127.0.0.1``, ``localhost``, ``[::1]``) with
  the port it listens on, the address it is bound to, or a name the user allowed
  (``--allowed-host``, ``DISCORD_MCP_HTTP_ALLOWED_HOSTS``: ``name`` for any port, ``name:port``
  for one).
- **Cross-site requests**: a page elsewhere may still send a request to
  ``http://127.0.0.1:8765`` (with the right ``Host``); the browser adds its ``Origin``. A
  request with an ``Origin`` is answered only when that origin is this server's own
  (``http://`` + an allowed loopback name or the bound address, with the port) or one the user
  allowed (``--allowed-origin``, ``DISCORD_MCP_HTTP_ALLOWED_ORIGINS``). MCP clients that are not
  browsers send no ``Origin``.

Then, with a token (``--auth-token``, ``DISCORD_MCP_HTTP_TOKEN``; required beyond loopback),
``Authorization: Bearer <token>``: the scheme in any case, as HTTP says, the token compared in
constant time. A refusal is 403 (Host, Origin) or 401 (token) with one sentence, before
anything reaches the MCP server. Anything doubtful (two ``Host`` headers, a malformed one, an
``Origin`` of ``null``) is refused.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from discord_mcp.errors import ConfigError

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
ALLOWED_HOSTS_ENV = "DISCORD_MCP_HTTP_ALLOWED_HOSTS"
ALLOWED_ORIGINS_ENV = "DISCORD_MCP_HTTP_ALLOWED_ORIGINS"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _url_host(name: str) -> str:
    """``name`` as it is written in a ``Host`` header or a URL (IPv6 in brackets), lower case."""
    name = name.strip().lower()
    if ":" in name and not name.startswith("["):
        return f"[{name}]"
    return name


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, int | None] | None:
    """``name[:port]`` (``[v6][:port]``) as (name as written, port or None); None if malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[: end + 1], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    elif value.count(":") == 1:
        name, port_text = value.split(":")
    elif ":" in value:
        return None  # a bare IPv6 address: a Host header writes it in brackets
    else:
        name, port_text = value, None
    if not name or any(c in name for c in "/?#@ \t\\"):
        return None
    if port_text is None:
        return name, None
    if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return name, int(port_text)


def _origin(value: str) -> str | None:
    """An origin in one spelling (``scheme://host:port``, port always written); None if it is
    not a plain http(s) origin (``null``, a path, credentials...)."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.username or parts.password:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return None
    return f"{scheme}://{_url_host(parts.hostname)}:{port or _DEFAULT_PORTS[scheme]}"


@dataclass(frozen=True)
class HttpAccess:
    """Who the HTTP transport answers: where it listens, the names and origins the user allowed
    beyond its own, and the bearer token (None: none asked, only on loopback).

    Raises:
        ConfigError: an allowed name or origin that is not one (with the sentence to show).
    """

    host: str
    port: int
    token: str | None = field(default=None, repr=False)
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for entry in self.allowed_hosts:
            if "*" in entry or _split_host(entry) is None:
                raise ConfigError(
                    f"--allowed-host / {ALLOWED_HOSTS_ENV}",
                    f"{entry!r} is not a host name",
                    "Give a name or an address, optionally with :port (IPv6 in brackets; no "
                    "scheme, path or wildcard)",
                )
        for entry in self.allowed_origins:
            if _origin(entry) is None:
                raise ConfigError(
                    f"--allowed-origin / {ALLOWED_ORIGINS_ENV}",
                    f"{entry!r} is not an origin",
                    "Give http(s)://host[:port] (no path or wildcard)",
                )

    def hosts(self) -> tuple[frozenset[tuple[str, int]], frozenset[str]]:
        """(name, port) pairs answered exactly, and names answered on any port."""
        exact = {(_url_host(name), self.port) for name in LOOPBACK_HOSTS}
        if not _unspecified(self.host):
            exact.add((_url_host(self.host.strip("[]")), self.port))
        any_port: set[str] = set()
        for entry in self.allowed_hosts:
            name, port = _split_host(entry) or ("", None)
            if port is None:
                any_port.add(name)
            else:
                exact.add((name, port))
        return frozenset(exact), frozenset(any_port)

    def origins(self) -> frozenset[str]:
        """Origins whose pages may call: this server's own, and the ones the user allowed."""
        exact, _ = self.hosts()
        own = {f"http://{name}:{port}" for name, port in exact}
        given = {_origin(entry) for entry in self.allowed_origins}
        return frozenset(own | {origin for origin in given if origin})

    def answers_to(self) -> str:
        """The names it answers to, for a refusal's sentence."""
        exact, any_port = self.hosts()
        return ", ".join(sorted(f"{n}:{p}" for n, p in exact) + sorted(any_port))


def access_from(
    environ: Mapping[str, str],
    *,
    host: str,
    port: int,
    token: str | None,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
) -> HttpAccess:
    """The access of ``serve --http``: the flags' names and origins, and the environment's.

    Raises:
        ConfigError: a name or origin that is not one.
    """

    def listed(name: str) -> list[str]:
        return [item.strip() for item in environ.get(name, "").split(",") if item.strip()]

    return HttpAccess(
        host=host,
        port=port,
        token=token,
        allowed_hosts=(*allowed_hosts, *listed(ALLOWED_HOSTS_ENV)),
        allowed_origins=(*allowed_origins, *listed(ALLOWED_ORIGINS_ENV)),
    )


class HttpGuard:
    """The checks above, as ASGI middleware around the whole HTTP app."""

    def __init__(self, app: ASGIApp, access: HttpAccess) -> None:
        self.app = app
        self.access = access
        self._exact, self._any_port = access.hosts()
        self._origins = access.origins()
        self._token = access.token.encode() if access.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            if scope["type"] == "websocket":  # nothing here speaks websocket
                await send({"type": "websocket.close", "code": 1008})
            return
        refusal = self.refusal(scope.get("headers") or [])
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, sentence = refusal
        headers = [(b"content-type", b"application/json")]
        if status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="discord-mcp"'))
        body = json.dumps({"error": sentence}).encode()
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def refusal(self, raw_headers: Iterable[tuple[bytes, bytes]]) -> tuple[int, str] | None:
        """(status, sentence) when a request with these headers is refused, else None."""
        headers: dict[bytes, list[bytes]] = {}
        for name, value in raw_headers:
            headers.setdefault(name.lower(), []).append(value)
        if not self._host_allowed(headers.get(b"host", [])):
            return 403, (
                "discord-mcp refuses this request because its Host header names no address "
                f"this server answers to ({self.access.answers_to()}); a page whose DNS name "
                "points here cannot use it, and a name of your own can be allowed with "
                "--allowed-host or DISCORD_MCP_HTTP_ALLOWED_HOSTS."
            )
        origins = headers.get(b"origin", [])
        if origins and not self._origin_allowed(origins):
            return 403, (
                "discord-mcp refuses this request because it comes from a web page of another "
                "origin; an origin of your own can be allowed with --allowed-origin or "
                "DISCORD_MCP_HTTP_ALLOWED_ORIGINS."
            )
        if self._token is not None and not self._bearer_ok(headers.get(b"authorization", [])):
            return 401, (
                "discord-mcp needs its bearer token on every request: send "
                "'Authorization: Bearer <token>' with the token the server was started with."
            )
        return None

    def _host_allowed(self, values: list[bytes]) -> bool:
        if len(values) != 1:
            return False
        parsed = _split_host(values[0].decode("latin-1"))
        if parsed is None:
            return False
        name, port = parsed
        return name in self._any_port or (name, port or 80) in self._exact

    def _origin_allowed(self, values: list[bytes]) -> bool:
        if len(values) != 1:
            return False
        origin = _origin(values[0].decode("latin-1"))
        return origin is not None and origin in self._origins

    def _bearer_ok(self, values: list[bytes]) -> bool:
        assert self._token is not None
        if len(values) != 1:
            return False
        parts = values[0].strip().split(None, 1)
        if len(parts) != 2 or parts[0].lower() != b"bearer":
            return False
        return hmac.compare_digest(parts[1].strip(), self._token)
