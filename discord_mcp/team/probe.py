"""Whether another machine answered an interaction: asked of Discord, at this machine's turn.

An interaction's token becomes a webhook once the interaction is acknowledged, whoever did it:
``GET /webhooks/{application id}/{token}/messages/@original`` then returns the response's
message (a reply, a "thinking" placeholder, the clicked card) or 10008 Unknown Message (an
acknowledgement without one: a modal, autocomplete choices). Before any acknowledgement the
token names no webhook: 10015 Unknown Webhook. Only that answer lets this machine answer; any
other (a network error, a rate limit that would make it wait) counts as "answered": a doubt
ends in silence, never in a second acknowledgement (40060).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from discord_mcp.errors import DiscordError, DiscordHTTPError
from discord_mcp.team.deadline import DEADLINE_S, PROBE_S
from discord_mcp.team.routing import SLOT_S, TEXT_SLOT_S, Turn

log = logging.getLogger(__name__)

UNKNOWN_WEBHOOK = 10015
PROBE_WAIT_S = 0.3
"""The longest a probe may wait for its rate-limit bucket before it counts as "answered"."""


class OriginalReader(Protocol):
    async def get_original_response(
        self, application_id: str, interaction_token: str, *, max_wait: float = ...
    ) -> Any: ...


async def acknowledged(rest: OriginalReader, interaction: dict[str, Any]) -> bool:
    """Whether someone acknowledged ``interaction`` (True in any doubt)."""
    application_id = str(interaction.get("application_id") or "")
    token = str(interaction.get("token") or "")
    if not application_id or not token:
        return True
    try:
        await rest.get_original_response(application_id, token, max_wait=PROBE_WAIT_S)
    except DiscordHTTPError as exc:  # a rate limit too: 429, code 0
        return exc.code != UNKNOWN_WEBHOOK
    except DiscordError as exc:
        log.warning(
            "could not tell whether interaction %s was answered: %s", interaction.get("id"), exc
        )
        return True
    return True


async def my_turn_came(
    rest: OriginalReader,
    interaction: dict[str, Any],
    turn: Turn,
    created: float,
    *,
    clock: Callable[[], float] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> bool:
    """Wait for ``turn``'s slot (seconds after ``created``, when Discord made the interaction,
    on ``clock``: the event loop's by default, :mod:`~discord_mcp.team.deadline`) and say
    whether this machine should acknowledge now: nobody did.

    A slot that comes too late to ask Discord first says yes without asking (the
    acknowledgement itself then decides: a refused one means another machine answered); one too
    late to acknowledge before :data:`~.deadline.DEADLINE_S` says no.
    """
    now = clock or asyncio.get_running_loop().time
    delay = created + SLOT_S[turn.slot] - now()
    if delay > 0:
        await sleep(delay)
    left = created + DEADLINE_S - now()
    if left <= 0:
        log.info(
            "interaction %s: turn %d came too late to answer", interaction.get("id"), turn.slot
        )
        return False
    if left < PROBE_S:
        return True
    return not await acknowledged(rest, interaction)


def text_delay(turn: Turn) -> float:
    """How long a ``!`` command's later turn waits for another machine's reply."""
    return TEXT_SLOT_S * turn.slot
