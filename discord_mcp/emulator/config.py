"""What an emulator is started with, and what it reports about each REST exchange."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TOKEN = "emulator-bot-token.not-a-real-discord-token"  # noqa: S105 (a fixed fake)
"""The bot token an emulator accepts unless told otherwise (``Authorization: Bot <token>``)."""

MAX_RATE_LIMIT_SCALE = 1000.0
"""The slowest rate limits: windows 1000 times Discord's (larger ones overflow the clocks)."""

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8800
"""The port ``discord-mcp emulator`` listens on by default; tests use port 0 (any free port)."""


@dataclass(frozen=True)
class Exchange:
    """One request under ``/api/v10`` and the emulator's answer, as given to ``exchange_hook``.

    ``path`` is the raw (still percent-encoded) path after ``/api/v10``, for example
    ``/channels/123/messages``. ``request_json`` and ``response_json`` are the parsed bodies, or
    None when a body was empty or not JSON (204s, the Cloudflare HTML ban). ``response_headers``
    holds the headers the emulator set, with Discord's spelling (``X-RateLimit-Limit``,
    ``Retry-After``, ``Content-Type``...). ``request_content_type`` and ``request_body`` are the
    request as sent (for a ``multipart/form-data`` body, whose JSON is inside).
    """

    method: str
    path: str
    query: dict[str, str]
    request_json: Any | None
    status: int
    response_json: Any | None
    response_headers: dict[str, str]
    request_content_type: str = ""
    request_body: bytes = b""


ExchangeHook = Callable[[Exchange], None]


@dataclass(frozen=True)
class EmulatorConfig:
    """Settings of one emulator.

    - ``token``: the only bot token accepted. Beyond loopback it must not be the built-in
      :data:`DEFAULT_TOKEN` (``outside.check_binding``).
    - ``rate_limit_scale``: every rate-limit window (route buckets, the global limit, the
      invalid-request window) is multiplied by it, so tests can use 0.01 and wait milliseconds.
      It can be changed at run time through ``POST /_emulator/faults``.
    - ``exchange_hook``: called on the emulator's event loop for every ``/api/v10`` request,
      after the answer is decided. An exception in the hook is logged, never sent to the client.
    - ``global_limit``: requests per (scaled) second per bot before a global 429 (Discord: 50).
    - ``invalid_request_limit``: 401/403/429 answers per (scaled) 10 minutes before the
      emulator answers everything with Cloudflare's HTML ban (Discord: 10,000).
    - ``cloudflare_ban_seconds``: how long the ban lasts after the last request sent during it
      (about an hour on Discord), multiplied by ``rate_limit_scale``.
    - ``strict_archived_threads``: sending to an archived, unlocked thread fails with 50083
      instead of unarchiving it (the docs say it unarchives; some bots report otherwise).
    - ``interaction_deadline``: seconds an interaction may wait for its first callback (3). Not
      scaled by anything: set it directly.
    - ``gateway_heartbeat_scale``: multiplies the gateway's heartbeat interval (Discord's
      41250 ms; HELLO sends at least 1 ms) and, in proportion, the window of the 120-sends-per-
      60-s limit and the grace before a connection told to reconnect (op 7) is closed. A client
      that sends no heartbeat for 1.5 intervals is closed with 4000. Tests use 0.002-0.005
      (80-200 ms beats).
    - ``gateway_resume_timeout``: seconds a session stays resumable after its connection was
      lost or closed with a code other than 1000/1001 ("a few minutes" on Discord).
    - ``identify_limit``: ``session_start_limit.total``, the identifies allowed per 24 hours
      (1000); one more terminates every session and resets the token (REST then answers 401).
      Identifies closer together than 5 s (times ``rate_limit_scale``) get op 9 instead.
    - ``active_thread_limit``: active (unarchived) threads a guild may have (Discord: 1000);
      creating or reopening one past it is 160006. Changeable through ``POST /_emulator/faults``.
    - ``message_content_intent_enabled``: the Developer Portal's MESSAGE_CONTENT toggle. Off,
      an IDENTIFY asking for the intent is closed with 4014 and REST message reads withhold
      content as Discord does. Changeable at run time through ``POST /_emulator/faults``.
    - ``control_token``: when set, every control request and the owner's page need it
      (``Authorization: Bearer <token>``, or ``?token=`` on a GET; ``outside.py``). Required
      to serve beyond loopback.
    """

    token: str = DEFAULT_TOKEN
    rate_limit_scale: float = 1.0
    exchange_hook: ExchangeHook | None = field(default=None, compare=False)
    global_limit: int = 50
    invalid_request_limit: int = 10_000
    cloudflare_ban_seconds: float = 3600.0
    strict_archived_threads: bool = False
    interaction_deadline: float = 3.0
    gateway_heartbeat_scale: float = 1.0
    gateway_resume_timeout: float = 180.0
    identify_limit: int = 1000
    message_content_intent_enabled: bool = True
    active_thread_limit: int = 1000
    control_token: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.token or any(c.isspace() for c in self.token):
            raise ValueError("token must be a non-empty string without spaces")
        if not 0 < self.rate_limit_scale <= MAX_RATE_LIMIT_SCALE:
            raise ValueError(f"rate_limit_scale must be > 0 and at most {MAX_RATE_LIMIT_SCALE:g}")
        if self.global_limit < 1 or self.invalid_request_limit < 1:
            raise ValueError("global_limit and invalid_request_limit must be at least 1")
        if not self.cloudflare_ban_seconds > 0:
            raise ValueError("cloudflare_ban_seconds must be greater than 0")
        if not self.interaction_deadline > 0:
            raise ValueError("interaction_deadline must be greater than 0")
        if not self.gateway_heartbeat_scale > 0 or not self.gateway_resume_timeout > 0:
            raise ValueError("gateway_heartbeat_scale and gateway_resume_timeout must be > 0")
        if self.active_thread_limit < 1:
            raise ValueError("active_thread_limit must be at least 1")
        if self.control_token is not None and (
            len(self.control_token) < 8 or any(c.isspace() for c in self.control_token)
        ):
            raise ValueError("control_token must be at least 8 characters without spaces")
        if self.identify_limit < 0:
            raise ValueError("identify_limit must be 0 or more")
