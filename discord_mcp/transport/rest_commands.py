"""Application commands and interaction answers: the REST calls the owner's slash commands need.

A part of :class:`~discord_mcp.transport.rest.RestClient` (it inherits these methods), kept in
its own module so ``rest.py`` stays readable; every call still goes through the one
:meth:`RestClient.request`. From Discord's documentation (interactions/application-commands,
interactions/receiving-and-responding):

- a guild's commands: ``GET /applications/{application.id}/guilds/{guild.id}/commands`` lists
  them, ``PUT`` on the same path overwrites the whole set (commands it does not name are
  deleted; the ones it names keep their id);
- an interaction is answered once, within 3 seconds, by ``POST
  /interactions/{interaction.id}/{interaction.token}/callback``: type 4 a message, type 5 "thinking"
  (deferred; the message follows by editing the original response), type 8 autocomplete
  choices (at most 25);
- within 15 minutes the interaction token also edits that original response (``PATCH
  /webhooks/{application.id}/{interaction.token}/messages/@original``) and posts follow-ups;
  ``GET`` on it reads it, and before anyone acknowledged the interaction the token names no
  webhook yet (10015 Unknown Webhook): how one machine sees whether another answered
  (:mod:`discord_mcp.team.probe`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from discord_mcp.transport.responses import MANY, ONE, Shape
from discord_mcp.transport.routes import Route
from discord_mcp.transport.wire import Message

CHANNEL_MESSAGE = 4
DEFERRED_CHANNEL_MESSAGE = 5
AUTOCOMPLETE_RESULT = 8
EPHEMERAL = 64
CHOICES_MAX = 25
CHOICE_MAX = 100
"""Characters of an autocomplete choice's name, and of a string value."""
NO_PINGS: dict[str, Any] = {"parse": []}
USER_PINGS: dict[str, Any] = {"parse": ["users"]}
"""The default of the decision cards' followups: a user mention may ping, nothing else."""


class CommandCalls:
    """Application command and interaction calls; mixed into ``RestClient``."""

    async def request(
        self,
        route: Route,
        *,
        json: Any = None,
        params: Mapping[str, str | int] | None = None,
        max_wait: float = 30.0,
        expect: Shape | None = None,
    ) -> Any:
        raise NotImplementedError  # RestClient.request is the one that runs

    # ---- registering ------------------------------------------------------------------------

    async def list_guild_commands(self, application_id: str, guild_id: str) -> list[dict[str, Any]]:
        """The guild's application commands as Discord keeps them (ids, versions, defaults)."""
        route = Route.of(
            "GET",
            "/applications/{application_id}/guilds/{guild_id}/commands",
            application_id=application_id,
            guild_id=guild_id,
        )
        return cast(list[dict[str, Any]], await self.request(route, expect=MANY))

    async def overwrite_guild_commands(
        self, application_id: str, guild_id: str, commands: Sequence[Mapping[str, Any]]
    ) -> list[dict[str, Any]]:
        """Replace the guild's whole command set with ``commands``."""
        route = Route.of(
            "PUT",
            "/applications/{application_id}/guilds/{guild_id}/commands",
            application_id=application_id,
            guild_id=guild_id,
        )
        return cast(
            list[dict[str, Any]],
            await self.request(route, json=[dict(c) for c in commands], expect=MANY),
        )

    # ---- answering --------------------------------------------------------------------------

    async def _callback(self, interaction_id: str, token: str, body: dict[str, Any]) -> None:
        # Exempt from every rate limit, as Discord documents; bounded well inside 3 seconds.
        route = Route(
            "POST",
            "/interactions/{interaction_id}/{interaction_token}/callback",
            {"interaction_id": interaction_id, "interaction_token": token},
            rate_limited=False,
            global_limited=False,
        )
        await self.request(route, json=body, max_wait=2.5)

    async def reply_to_interaction(
        self, interaction_id: str, token: str, content: str, *, ephemeral: bool = True
    ) -> None:
        """Answer with a message (type 4); only its user sees it when ``ephemeral``."""
        data: dict[str, Any] = {"content": content, "allowed_mentions": dict(NO_PINGS)}
        if ephemeral:
            data["flags"] = EPHEMERAL
        await self._callback(interaction_id, token, {"type": CHANNEL_MESSAGE, "data": data})

    async def defer_interaction(
        self, interaction_id: str, token: str, *, ephemeral: bool = True
    ) -> None:
        """Say "thinking..." (type 5); the answer follows with :meth:`edit_interaction_reply`."""
        body: dict[str, Any] = {"type": DEFERRED_CHANNEL_MESSAGE}
        if ephemeral:
            body["data"] = {"flags": EPHEMERAL}
        await self._callback(interaction_id, token, body)

    async def suggest(
        self, interaction_id: str, token: str, choices: Sequence[tuple[str, str]]
    ) -> None:
        """Answer an autocomplete (type 8) with up to 25 ``(name, value)`` choices.

        A name longer than Discord's 100 characters is clipped (it is only shown); a choice
        whose value is longer is left out: a clipped value, once picked, would name something
        else than what was shown.
        """
        fitting = [(name, value) for name, value in choices if 0 < len(value) <= CHOICE_MAX]
        data = {
            "choices": [
                {"name": _clip(name or value, CHOICE_MAX), "value": value}
                for name, value in fitting[:CHOICES_MAX]
            ]
        }
        await self._callback(interaction_id, token, {"type": AUTOCOMPLETE_RESULT, "data": data})

    async def edit_interaction_reply(
        self, application_id: str, token: str, content: str
    ) -> dict[str, Any]:
        """Replace the text of the interaction's original response (after a defer, say)."""
        route = _webhook_route("PATCH", application_id, token, "/messages/@original")
        body = {"content": content, "allowed_mentions": dict(NO_PINGS)}
        return cast(dict[str, Any], await self.request(route, json=body, expect=ONE))

    async def follow_up(
        self, application_id: str, token: str, content: str, *, ephemeral: bool = True
    ) -> dict[str, Any]:
        """One more message for the interaction (within 15 minutes of it)."""
        body: dict[str, Any] = {"content": content, "allowed_mentions": dict(NO_PINGS)}
        if ephemeral:
            body["flags"] = EPHEMERAL
        route = _webhook_route("POST", application_id, token, "")
        return cast(dict[str, Any], await self.request(route, json=body, expect=ONE))

    # ---- the decision cards' interactions ---------------------------------------------------

    async def create_interaction_response(
        self,
        interaction_id: str,
        interaction_token: str,
        response_type: int,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        """Answer an interaction (must happen within 3 seconds of the click)."""
        body: dict[str, Any] = {"type": response_type}
        if data is not None:
            body["data"] = dict(data)
        await self._callback(interaction_id, interaction_token, body)

    async def create_followup(
        self,
        application_id: str,
        interaction_token: str,
        content: str,
        *,
        ephemeral: bool = False,
    ) -> Message:
        """A followup message for an interaction (within 15 minutes of it)."""
        body: dict[str, Any] = {"content": content, "allowed_mentions": dict(USER_PINGS)}
        if ephemeral:
            body["flags"] = EPHEMERAL
        route = _webhook_route("POST", application_id, interaction_token, "")
        return cast(Message, await self.request(route, json=body, expect=ONE))

    async def get_original_response(
        self, application_id: str, interaction_token: str, *, max_wait: float = 30.0
    ) -> Message:
        """The interaction's original response (10015 while nobody acknowledged it; 10008 when
        the acknowledgement made no message, such as a modal or autocomplete choices)."""
        route = _webhook_route("GET", application_id, interaction_token, "/messages/@original")
        return cast(Message, await self.request(route, max_wait=max_wait, expect=ONE))

    async def edit_original_response(
        self,
        application_id: str,
        interaction_token: str,
        *,
        content: str | None = None,
        components: Sequence[Mapping[str, Any]] | None = None,
    ) -> Message:
        """Edit the message an interaction responded with (or the clicked message, after 6/7)."""
        body: dict[str, Any] = {}
        if content is not None:
            body["content"] = content
        if components is not None:
            body["components"] = [dict(c) for c in components]
        route = _webhook_route("PATCH", application_id, interaction_token, "/messages/@original")
        return cast(Message, await self.request(route, json=body, expect=ONE))


def _webhook_route(method: str, application_id: str, token: str, suffix: str) -> Route:
    # Interaction followups use the webhook routes with the application id and the interaction
    # token; they are outside the global limit but have their own buckets.
    return Route(
        method,
        "/webhooks/{webhook_id}/{webhook_token}" + suffix,
        {"webhook_id": application_id, "webhook_token": token},
        global_limited=False,
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
