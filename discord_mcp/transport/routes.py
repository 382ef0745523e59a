"""REST routes: a method, a path template and its parameters.

The template (not the filled-in path) names the rate-limit bucket, and the *major parameters*
(channel, guild, webhook id and token) split one bucket into independent limits: Discord limits
``POST /channels/1/messages`` and ``POST /channels/2/messages`` separately even though they share
a bucket hash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote

MAJOR_PARAMETERS = ("channel_id", "guild_id", "webhook_id", "webhook_token")
"""Discord's top-level resources; each value gets its own copy of a bucket."""


@dataclass(frozen=True, slots=True)
class Route:
    """One REST endpoint with its parameters filled in.

    Attributes:
        method: the HTTP method.
        template: the path template relative to the API base, e.g. ``/channels/{channel_id}``.
        params: the template's parameters.
        rate_limited: False only for interaction callbacks, which Discord exempts from every
            limit (they must answer within 3 seconds).
        global_limited: False for interaction followups, which are outside the global limit.
    """

    method: str
    template: str
    params: dict[str, str] = field(default_factory=dict)
    rate_limited: bool = True
    global_limited: bool = True

    @classmethod
    def of(cls, method: str, template: str, **params: str) -> Route:
        """Build a route; ``Route.of("GET", "/channels/{channel_id}", channel_id="1")``."""
        return cls(method, template, dict(params))

    @property
    def path(self) -> str:
        """The path with every parameter percent-encoded (emoji, tokens)."""
        return self.template.format_map({k: quote(v, safe="") for k, v in self.params.items()})

    @property
    def key(self) -> str:
        """Method and template: the bucket's name until Discord tells us its hash."""
        return f"{self.method} {self.template}"

    @property
    def major(self) -> str:
        """The major parameters' values, which split a bucket per resource."""
        return ":".join(self.params.get(name, "") for name in MAJOR_PARAMETERS)

    def __str__(self) -> str:
        return self.key
