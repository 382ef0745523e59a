"""The emulator as an ASGI app (behind ``outside.py``'s guard against other sites): Discord
REST v10 under ``/api/v10``, the gateway websocket at
``/gateway`` (``gateway.py``), the control API under ``/_emulator`` (its live feed in
``feed.py``), attachments' bytes under ``/attachments`` and ``/media/attachments``
(``media.py``), and the owner's page at ``/`` (``page/``).

Every REST request passes through :meth:`Emulator.handle`, in this order: the Cloudflare ban
(which each request sent during it prolongs), route lookup (404/405), ``Authorization: Bot
<token>`` (401, also once the gateway's identify limit has reset the token), a scripted fault,
the global limit, the route's bucket, the old-message edit limit (30046), then the handler.
Threads idle past their ``auto_archive_duration`` are archived first (``idle.py``). Rate-limit
headers are added there, 401/403/429 answers are counted toward the ban, and
``exchange_hook`` sees the result.
"""

from __future__ import annotations

import dataclasses
import email.utils
import json
import logging
import math
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Mount, Route, WebSocketRoute

from discord_mcp.emulator import errors, json_body
from discord_mcp.emulator.calls import Call, Reply, RestRoute
from discord_mcp.emulator.config import EmulatorConfig, Exchange
from discord_mcp.emulator.control import control_routes
from discord_mcp.emulator.control_channels import channel_routes
from discord_mcp.emulator.control_commands import command_routes
from discord_mcp.emulator.control_guild import guild_routes
from discord_mcp.emulator.control_interactions import interaction_routes
from discord_mcp.emulator.control_time import time_routes
from discord_mcp.emulator.faults import FaultBook, RouteFault
from discord_mcp.emulator.feed import feed_routes
from discord_mcp.emulator.gateway import GATEWAY_PATH, Gateway
from discord_mcp.emulator.idle import archive_idle
from discord_mcp.emulator.interactions import InteractionDesk
from discord_mcp.emulator.media import media_routes
from discord_mcp.emulator.models import snowflake_time_ms
from discord_mcp.emulator.outside import OutsideGuard
from discord_mcp.emulator.page import page_routes
from discord_mcp.emulator.ratelimit import (
    OLD_EDITS,
    OLD_EDITS_CODE,
    OLD_EDITS_MESSAGE,
    OLD_MESSAGE_SECONDS,
    ROUTE_LIMITS,
    RateLimiter,
    limited_body,
    limited_headers,
)
from discord_mcp.emulator.rest import find_route, major_parameter, split_path
from discord_mcp.emulator.sessions import GatewayStats, SessionRegistry
from discord_mcp.emulator.state import State
from discord_mcp.emulator.uploads import Form, is_multipart, parse_form

API_PREFIX = "/api/v10"
_log = logging.getLogger(__name__)

_JSON = "application/json"
_HTML = "text/html; charset=UTF-8"
CLOUDFLARE_BAN_PAGE = (
    "<!DOCTYPE html>\n<html><head><title>Access denied | discord.com used Cloudflare to "
    "restrict access</title></head><body><h1>Error 1015</h1><h2>You are being rate limited."
    "</h2><p>The owner of this website (discord.com) has banned you temporarily from accessing "
    "this website.</p></body></html>\n"
)


@dataclass
class Stats:
    """REST counters that make a client's behaviour measurable (``GET /_emulator/state``);
    the gateway's are :class:`~discord_mcp.emulator.sessions.GatewayStats`."""

    rest_requests: int = 0
    rest_429: int = 0
    rest_401: int = 0
    rest_403: int = 0
    rest_5xx: int = 0
    cloudflare_bans: int = 0


@dataclass
class HtmlReply:
    status: int
    text: str
    headers: dict[str, str] = field(default_factory=dict)


class Emulator:
    """One emulated Discord. ``app`` is the ASGI application; serve it with ``server.py``.

    Use it from the event loop that serves ``app`` (nothing here is thread-safe).
    """

    def __init__(self, config: EmulatorConfig | None = None) -> None:
        self.config = config or EmulatorConfig()
        self.state = State(
            strict_archived_threads=self.config.strict_archived_threads,
            message_content_intent_enabled=self.config.message_content_intent_enabled,
            active_thread_limit=self.config.active_thread_limit,
        )
        self.desk = InteractionDesk(self.state, deadline=self.config.interaction_deadline)
        self.limiter = RateLimiter(
            scale=self.config.rate_limit_scale,
            global_limit=self.config.global_limit,
            invalid_limit=self.config.invalid_request_limit,
            ban_seconds=self.config.cloudflare_ban_seconds,
        )
        self.faults = FaultBook()
        self.stats = Stats()
        self.gateway_stats = GatewayStats()
        self.sessions = SessionRegistry(
            self.state,
            resume_timeout=self.config.gateway_resume_timeout,
            identify_limit=self.config.identify_limit,
            stats=self.gateway_stats,
        )
        self.gateway = Gateway(self.state, self.sessions, self.config, lambda: self.limiter.scale)
        self.routes = Starlette(
            routes=[
                WebSocketRoute(GATEWAY_PATH, self.gateway),
                WebSocketRoute(GATEWAY_PATH + "/", self.gateway),
                Route(
                    API_PREFIX + "/{path:path}",
                    self._serve_rest,
                    methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
                ),
                Mount(
                    "/_emulator",
                    routes=control_routes(self)
                    + interaction_routes(self)
                    + guild_routes(self)
                    + channel_routes(self)
                    + feed_routes(self)
                    + time_routes(self)
                    + command_routes(self.state),
                ),
                *media_routes(self.state),
                *page_routes(self.config.control_token),
            ]
        )
        self.guard = OutsideGuard(self.routes, token=self.config.control_token)
        self.app = self.guard
        """The ASGI application: the routes behind :class:`OutsideGuard` (``outside.py``)."""

    @property
    def token(self) -> str:
        return self.config.token

    def stats_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self.stats) | dataclasses.asdict(self.gateway_stats)
        data["interactions_failed"] = self.desk.failed
        data["interactions_acknowledged_twice"] = self.desk.acknowledged_twice
        data["rest_invalid_requests"] = self.limiter.invalid_count()
        data["cloudflare_banned"] = self.limiter.banned()
        data["cloudflare_ban_remaining"] = round(self.limiter.ban_remaining(), 3)
        data["outside_refused"] = self.guard.refused
        return data

    def fault_state(self) -> dict[str, Any]:
        return {
            "rate_limit_scale": self.limiter.scale,
            "strict_archived_threads": self.state.strict_archived_threads,
            "route_faults": self.faults.to_json(),
            "message_content_intent_enabled": self.state.message_content_intent_enabled,
            "active_thread_limit": self.state.active_thread_limit,
            "interactions_endpoint_url": self.state.interactions_endpoint_url,
            "time_offset": self.state.time_offset,
            "token_reset": self.sessions.budget.token_reset,
            "session_start_limit": self.sessions.budget.to_json(),
            "gateway_connections": self.gateway.to_json(),
        }

    # -- the REST choke point -----------------------------------------------------------------

    async def _serve_rest(self, request: Request) -> Response:
        raw = request.scope.get("raw_path") or request.url.path.encode()
        # httpx's in-process transport puts the query string in raw_path; uvicorn does not.
        path = raw.split(b"?", 1)[0].decode("latin-1")[len(API_PREFIX) :]
        query = dict(request.query_params)
        try:
            body = await request.body()
        except ClientDisconnect:
            # The client went away mid-request (a process killed while sending): like Discord,
            # nothing happens and nobody is answered.
            return Response(status_code=400)
        request_json = _parse_json(body)
        outcome = self.handle(
            method=request.method,
            path=path,
            query=query,
            authorization=request.headers.get("authorization"),
            content_type=request.headers.get("content-type", ""),
            body=body,
            host=request.headers.get("host", "127.0.0.1"),
        )
        date = {"Date": email.utils.formatdate(self.state.wall(), usegmt=True)}
        if isinstance(outcome, HtmlReply):
            headers = {"Content-Type": _HTML} | outcome.headers | date
            response: Response = Response(outcome.text, outcome.status, headers=headers)
            response_json = None
        else:
            headers = dict(outcome.headers) | date
            if outcome.json is None:
                response = Response(None, outcome.status, headers=headers)
            else:
                headers["Content-Type"] = _JSON
                content = json.dumps(outcome.json, ensure_ascii=False, separators=(",", ":"))
                response = Response(content, outcome.status, headers=headers)
            response_json = outcome.json
        hook = self.config.exchange_hook
        if hook is not None:
            exchange = Exchange(
                method=request.method,
                path=path,
                query=query,
                request_json=request_json,
                status=response.status_code,
                response_json=response_json,
                response_headers=headers,
                request_content_type=request.headers.get("content-type", ""),
                request_body=body,
            )
            try:
                hook(exchange)
            except Exception:
                _log.exception("exchange_hook failed for %s %s", request.method, path)
        return response

    def handle(
        self,
        *,
        method: str,
        path: str,
        query: dict[str, str],
        authorization: str | None,
        content_type: str,
        body: bytes,
        host: str,
    ) -> Reply | HtmlReply:
        """Answer one REST request (see the module docstring for the order of checks)."""
        self.stats.rest_requests += 1
        archive_idle(self.state)
        if self.limiter.refuse_banned():  # and the ban's hour starts again
            self.stats.rest_429 += 1
            return self._ban_page()
        try:
            route, params = find_route(method, split_path(path))
        except errors.DiscordError as exc:
            return Reply(exc.status, exc.body())
        token_refused = authorization != f"Bot {self.config.token}"
        if route.needs_auth and (token_refused or self.sessions.budget.token_reset):
            return self._counted(Reply(401, errors.unauthorized().body()))
        fault = self.faults.take(route.name)
        if fault is not None:
            return self._fault_reply(route, params, fault)
        if route.global_limit:
            verdict = self.limiter.take_global()
            if not verdict.allowed:
                headers = limited_headers(verdict.reset_after, scope="global", is_global=True)
                return self._counted(
                    Reply(429, limited_body(verdict.reset_after, is_global=True), headers)
                )
        bucket_headers: dict[str, str] = {}
        limit = ROUTE_LIMITS.get(route.name)
        if limit is not None:
            verdict = self.limiter.take(limit, major_parameter(params))
            bucket_headers = verdict.headers(self.state.wall())
            if not verdict.allowed:
                headers = bucket_headers | limited_headers(
                    verdict.reset_after, scope="user", is_global=False
                )
                return self._counted(
                    Reply(429, limited_body(verdict.reset_after, is_global=False), headers)
                )
        refused = self._old_edit_refused(route, params, bucket_headers)
        if refused is not None:
            return self._counted(refused)
        reply = self._run(route, params, query, content_type, body, host)
        reply.headers = bucket_headers | reply.headers
        return self._counted(reply)

    def _ban_page(self) -> HtmlReply:
        """Cloudflare's ban: its HTML page, no ``Via``, ``Retry-After`` the ban's rest."""
        left = max(1, math.ceil(self.limiter.ban_remaining()))
        return HtmlReply(429, CLOUDFLARE_BAN_PAGE, {"Retry-After": str(left)})

    def _old_edit_refused(
        self, route: RestRoute, params: dict[str, str], bucket_headers: dict[str, str]
    ) -> Reply | None:
        """The edit of a message older than an hour past :data:`OLD_EDITS` (30046)."""
        if route.name != "PATCH /channels/{channel_id}/messages/{message_id}":
            return None
        message = self.state.messages.get(params.get("message_id", ""))
        if message is None or message.channel_id != params.get("channel_id"):
            return None
        age = self.state.wall() - snowflake_time_ms(message.id) / 1000
        if age <= OLD_MESSAGE_SECONDS:
            return None
        verdict = self.limiter.take(OLD_EDITS, major_parameter(params))
        if verdict.allowed:
            return None
        headers = bucket_headers | limited_headers(
            verdict.reset_after, scope="user", is_global=False
        )
        body = limited_body(verdict.reset_after, is_global=False)
        body.update(code=OLD_EDITS_CODE, message=OLD_EDITS_MESSAGE)
        return Reply(429, body, headers)

    def _run(
        self,
        route: RestRoute,
        params: dict[str, str],
        query: dict[str, str],
        content_type: str,
        body: bytes,
        host: str,
    ) -> Reply:
        try:
            form = _body_for(content_type, body)
            call = Call(
                self.state,
                self.desk,
                self.sessions.budget,
                params,
                query,
                form.body,
                host,
                form.uploads,
            )
            return route.handler(call)
        except errors.DiscordError as exc:
            return Reply(exc.status, exc.body())

    def _counted(self, reply: Reply) -> Reply:
        status = reply.status
        if status == 401:
            self.stats.rest_401 += 1
        if status == 403:
            self.stats.rest_403 += 1
        if status == 429:
            self.stats.rest_429 += 1
        if status >= 500:
            self.stats.rest_5xx += 1
        shared = reply.headers.get("X-RateLimit-Scope") == "shared"
        if status in (401, 403) or (status == 429 and not shared):
            self.limiter.record_invalid()
            if self.limiter.banned():
                self.stats.cloudflare_bans += 1
        return reply

    def _fault_reply(
        self, route: RestRoute, params: dict[str, str], fault: RouteFault
    ) -> Reply | HtmlReply:
        if fault.status == 429 and fault.cloudflare:
            self.stats.rest_429 += 1
            if fault.retry_after is not None:
                left = str(max(1, math.ceil(fault.retry_after)))
                return HtmlReply(429, CLOUDFLARE_BAN_PAGE, {"Retry-After": left})
            return HtmlReply(429, CLOUDFLARE_BAN_PAGE)
        if fault.status != 429:
            error = errors.generic(fault.status)
            body = {
                "message": fault.message if fault.message is not None else error.message,
                "code": fault.code if fault.code is not None else error.code,
            }
            return self._counted(Reply(fault.status, body))
        retry_after = (
            fault.retry_after if fault.retry_after is not None else 1.0 * self.limiter.scale
        )
        scope = fault.scope or ("global" if fault.is_global else "user")
        headers: dict[str, str] = {}
        limit = ROUTE_LIMITS.get(route.name)
        if limit is not None and not fault.is_global:
            # A scripted 429 shows the bucket as it stands: with Remaining > 0 it is what
            # Discord's docs call a sub-rate-limit.
            headers = self.limiter.peek(limit, major_parameter(params)).headers(self.state.wall())
        headers |= limited_headers(retry_after, scope=scope, is_global=fault.is_global)
        body = limited_body(
            retry_after, is_global=fault.is_global, with_retry_after=not fault.no_retry_after
        )
        if fault.code is not None:
            body["code"] = fault.code
        if fault.message is not None:
            body["message"] = fault.message
        return self._counted(Reply(429, body, headers))


def _parse_json(body: bytes) -> Any | None:
    if not body:
        return None
    try:
        return json_body.loads(body)
    except ValueError:
        return None


def _body_for(content_type: str, body: bytes) -> Form:
    """The JSON body of a request (and its files, if multipart); 50109 for broken JSON, 50035
    for another content type."""
    if not body:
        return Form(None, [])
    if is_multipart(content_type):
        return parse_form(content_type, body)
    if content_type.split(";", 1)[0].strip().lower() != _JSON:
        raise errors.invalid_form(
            (),
            "CONTENT_TYPE_INVALID",
            "Expected \"Content-Type\" header to be one of {'application/json', "
            "'multipart/form-data'}.",
        )
    try:
        return Form(json_body.loads(body), [])
    except ValueError:
        raise errors.invalid_json() from None
