"""Live events for decisions: what a process does with the gateway's events and clicks."""

from __future__ import annotations

import logging
from typing import Any

from discord_mcp.decisions.service import DecisionService
from discord_mcp.errors import DiscordError
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)


class DecisionEvents:
    """A :class:`~discord_mcp.relay.link.LiveHandler` for decisions.

    Replies and reactions go to the decision service; a click on a decision card is answered
    here, with the callback Discord requires within 3 seconds.
    """

    def __init__(self, service: DecisionService, rest: RestClient) -> None:
        self._service = service
        self._rest = rest

    async def on_event(self, name: str, data: dict[str, Any]) -> None:
        await self._service.on_event(name, data)

    async def on_interaction(self, data: dict[str, Any]) -> None:
        body = await self._service.answer_interaction(data)
        if body is None:
            return  # not a decision card's component
        try:
            await self._rest.create_interaction_response(
                str(data["id"]), str(data["token"]), int(body["type"]), body.get("data")
            )
        except DiscordError as exc:
            log.warning("answering a click failed: %s", exc)
