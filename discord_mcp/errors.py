"""Every exception discord-mcp raises on purpose, in one tree.

::

    DiscordMCPError                  base of everything below
    ├── ConfigError                  a missing or invalid setting; names the variable and the fix
    ├── DiscordError                 anything from talking to Discord
    │   ├── DiscordHTTPError         .status .code .message .method .route
    │   │   ├── BadRequest (400)     .errors: Discord's nested field errors
    │   │   ├── Unauthorized (401)   the token is wrong: every request stops
    │   │   ├── Forbidden (403)
    │   │   ├── NotFound (404)
    │   │   ├── RateLimited (429)    only when waiting would exceed the caller's bound
    │   │   └── DiscordServerError   5xx after the retries ran out
    │   ├── CloudflareBanned         a 429 without a JSON body, or asking for over an hour: a ban
    │   ├── DiscordTransportError    connect/read failures after the retries ran out
    │   ├── UnexpectedAnswer         a success whose body is not JSON, or not the shape asked
    │   ├── DownloadFailed           an attachment could not be fetched (status, size, time)
    │   └── GatewayError             the gateway refused us for good (bad token, intents, ...)
    ├── StateError                   the state directory
    │   ├── StateCorrupt             an unreadable file: quarantined, never read as empty
    │   ├── StateFull                the disk is full: nothing was half written
    │   └── StateBusy                a state lock stayed taken too long (a stuck process)
    ├── DecisionError
    │   ├── DecisionNotFound
    │   └── NotYourDecision          another project's (or another live session's) decision
    ├── MessageError                 a message, reaction or history read cannot be done as asked
    │   ├── FileRefused              a file an agent asked to send may not go (path, name, size)
    │   └── OutOfScope               a channel or thread that is not the project's
    └── AgentError                   the run engine and its CLIs
        └── RunError                 .code (seed 000 §14, e.g. E_QUEUE_FULL) .message: how to fix
            ├── JournalCorrupt       runs/events.ndjson has a gap or a bad line: .path .line
            └── SpawnError           a CLI could not be started (not found, exec failed)

Third-party exceptions (httpx, websockets) never escape the transport modules: they are
translated there, ``raise ... from exc``. Messages are sentences a person or an agent can act
on, and they never contain the bot token.
"""

from __future__ import annotations

from typing import Any


class DiscordMCPError(Exception):
    """Base of every exception raised on purpose by discord-mcp."""


class ConfigError(DiscordMCPError):
    """A setting is missing or invalid. The message names the variable and how to fix it."""

    def __init__(self, variable: str, problem: str, fix: str) -> None:
        self.variable = variable
        self.problem = problem
        self.fix = fix
        super().__init__(f"{variable}: {problem}. {fix}")


class DiscordError(DiscordMCPError):
    """Something went wrong talking to Discord."""


class DiscordHTTPError(DiscordError):
    """Discord answered with an error status.

    Attributes:
        status: the HTTP status.
        code: Discord's JSON error code (0 when the body had none).
        message: Discord's error message.
        method: the request method.
        route: the route template, e.g. ``/channels/{channel_id}/messages``.
    """

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        *,
        method: str,
        route: str,
        errors: dict[str, Any] | None = None,
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.method = method
        self.route = route
        self.errors = errors or {}
        super().__init__(self._describe())

    def _describe(self) -> str:
        text = f"{self.method} {self.route} failed with HTTP {self.status}"
        if self.code:
            text += f" (Discord error {self.code})"
        if self.message:
            text += f": {self.message[:300]}"
        details = _flatten_field_errors(self.errors)
        if details:
            text += " [" + "; ".join(details[:5]) + "]"
        hint = WHAT_TO_DO.get(self.code)
        if hint:
            text += f". {hint}"
        return text


class BadRequest(DiscordHTTPError):
    """HTTP 400: Discord rejected the request body (see ``errors`` for the fields)."""


class Unauthorized(DiscordHTTPError):
    """HTTP 401: the bot token is wrong or was reset. Nothing more is sent with it."""

    def _describe(self) -> str:
        return (
            "Discord rejected the bot token (HTTP 401). Check DISCORD_BOT_TOKEN: copy it again "
            "from the Discord developer portal (Bot > Reset Token) into your .env"
        )


class Forbidden(DiscordHTTPError):
    """HTTP 403: the bot lacks a permission or access to the resource."""


class NotFound(DiscordHTTPError):
    """HTTP 404: the channel, message, interaction or webhook does not exist."""


class RateLimited(DiscordHTTPError):
    """HTTP 429 whose wait would exceed the caller's bound.

    Attributes:
        retry_after: seconds Discord asked us to wait.
        is_global: whether the global (per-bot) limit was hit.
    """

    def __init__(
        self,
        *,
        method: str,
        route: str,
        retry_after: float,
        is_global: bool,
        code: int = 0,
    ) -> None:
        self.retry_after = retry_after
        self.is_global = is_global
        super().__init__(429, code, "You are being rate limited.", method=method, route=route)

    def _describe(self) -> str:
        scope = "global" if self.is_global else "route"
        return (
            f"{self.method} {self.route} is rate limited ({scope}) for another "
            f"{self.retry_after:.1f}s, longer than this call may wait"
        )


class DiscordServerError(DiscordHTTPError):
    """HTTP 5xx, still failing after the bounded retries."""


class CloudflareBanned(DiscordError):
    """Cloudflare has banned this IP for a while: a 429 that is Cloudflare's error page (no
    ``Via`` header, not JSON), a 429 asking for a wait of over an hour (``asked``), or
    (``seconds`` given) a request held back because the ban is known and still on.

    Attributes:
        seconds: how long, at least, the ban is expected to last (None: it was just met).
        asked: the ``retry_after`` of over an hour that was taken as a ban, if that was it.
    """

    def __init__(
        self, method: str, route: str, *, seconds: float | None = None, asked: float | None = None
    ) -> None:
        self.method = method
        self.route = route
        self.seconds = seconds
        self.asked = asked
        if asked is not None:
            what = (
                f"Discord answered with a 429 asking for a wait of {asked:.0f} seconds, over an "
                "hour, which is handled as a ban of this IP for about an hour"
            )
        elif seconds is None:
            what = (
                "Discord's edge (Cloudflare) refused the request with its own 429 (not "
                "Discord's rate-limit answer): this IP is banned for a while, up to an hour"
            )
        else:
            what = (
                "not sent: Discord's edge (Cloudflare) banned this IP, and the ban should last "
                f"about {_duration(seconds)} more"
            )
        super().__init__(
            f"{method} {route}: {what}, usually after too many invalid requests (401/403/429). "
            "Meanwhile every process of this state directory waits (a request sent during the "
            "ban makes it longer); then one request checks whether it is over. Stop other bots "
            "that use this IP, and run `discord-mcp doctor` to see what was refused"
        )


class DiscordTransportError(DiscordError):
    """The connection to Discord failed (connect, read, timeout) after bounded retries."""


class UnexpectedAnswer(DiscordError):
    """Discord's success answer could not be used: an HTML page or other text where JSON
    belongs, or JSON of another shape (a list where an object belongs, an object without its
    ``id``). Something other than Discord may be answering (a proxy, a captive portal).

    Attributes:
        method, route, status: the request and the answer's HTTP status.
        what: what came instead, in a few words.
    """

    def __init__(self, method: str, route: str, status: int, what: str) -> None:
        self.method = method
        self.route = route
        self.status = status
        self.what = what
        super().__init__(
            f"{method} {route}: Discord answered HTTP {status} with {what}, not the answer it "
            "documents; something else may be answering in its place (a proxy, a captive "
            "portal, an outage page). Check the network and DISCORD_API_BASE, and whether the "
            "request took effect before sending it again"
        )


class DownloadFailed(DiscordError):
    """An attachment could not be downloaded from Discord's CDN; the message says why."""


class GatewayError(DiscordError):
    """The gateway refused the connection for good; the message says what to fix."""

    def __init__(self, message: str, *, close_code: int | None = None) -> None:
        self.close_code = close_code
        super().__init__(message)


class StateError(DiscordMCPError):
    """A problem with the state directory."""


class StateCorrupt(StateError):
    """A state file could not be read. It has been moved aside to ``moved_to``."""

    def __init__(self, path: str, reason: str, moved_to: str | None) -> None:
        self.path = path
        self.reason = reason
        self.moved_to = moved_to
        where = f"; it was moved to {moved_to}" if moved_to else ""
        super().__init__(f"state file {path} is unreadable ({reason}){where}")


class StateFull(StateError):
    """The disk holding the state directory is full; the write did not happen."""


class StateBusy(StateError):
    """A state file's lock stayed taken longer than any read-modify-write should take."""


class DecisionError(DiscordMCPError):
    """A decision cannot be handled as asked."""


class DecisionNotFound(DecisionError):
    """No decision with this id exists in the state directory."""

    def __init__(self, decision_id: str) -> None:
        self.decision_id = decision_id
        super().__init__(
            f"no decision with id {decision_id!r}: check the id returned by ask_decision, "
            "or call check_pending to list open decisions"
        )


class NotYourDecision(DecisionError):
    """A decision asked by another project, or by another session of this project that still
    runs: only the asker waits on it, cancels it and is handed its answer."""


class MessageError(DiscordMCPError):
    """A message, reaction or history read an agent asked for cannot be done as asked."""


class FileRefused(MessageError):
    """A file an agent asked to send may not go: outside the project, a secret's place, too big,
    or too many. The message says why and what to do."""


class OutOfScope(MessageError):
    """A channel or thread an agent named is not its project's: another channel, a thread under
    another channel, or the machines' presence thread (:mod:`discord_mcp.outbound.scope`)."""


class AgentError(DiscordMCPError):
    """The run engine or one of the agent CLIs failed."""


class RunError(AgentError):
    """A run-engine request cannot be done as asked.

    Attributes:
        code: a stable error code (``E_PROJECT_NOT_FOUND``, ``E_QUEUE_FULL``, ...; seed 000 §14).
        message: a sentence saying what is wrong and how to fix it.
    """

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}")


class JournalCorrupt(RunError):
    """The run journal cannot be replayed: a sequence gap or an unreadable line before the end.

    The engine refuses to start rather than run on a silently wrong state.
    """

    def __init__(self, path: str, line: int, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        super().__init__(
            "E_JOURNAL_CORRUPT",
            f"{path} line {line}: {problem}. The run engine will not start on a damaged "
            "journal: move the file aside (the jobs in it are then forgotten) or repair the line",
        )


class SpawnError(RunError):
    """An agent CLI could not be started (executable not found, exec failed)."""


def _duration(seconds: float) -> str:
    minutes = max(1, round(seconds / 60))
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


WHAT_TO_DO: dict[int, str] = {
    160006: (
        "The server has reached Discord's limit of 1000 active threads. Archive threads that "
        "are done (in the channel's thread list, right-click a thread > Close Thread); "
        "discord-mcp archives each question's own thread once it is answered, so this clears "
        "as old threads close. Then try again"
    ),
}
"""Discord error codes whose fix is ours to say, added to the error's sentence."""


def _flatten_field_errors(errors: dict[str, Any], prefix: str = "") -> list[str]:
    """Turn Discord's nested ``{"field": {"_errors": [...]}}`` tree into ``field: message``."""
    out: list[str] = []
    for key, value in errors.items():
        if key == "_errors" or not isinstance(value, dict):
            continue
        path = f"{prefix}.{key}" if prefix else key
        for item in value.get("_errors") or []:
            if isinstance(item, dict):
                out.append(f"{path}: {item.get('message', '')}")
        out.extend(_flatten_field_errors(value, path))
    return out
