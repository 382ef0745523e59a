"""The files of an answer: a decision answered with a screenshot hands the agent its path.

Judging records the answering reply's attachments on the decision (without paths; judging does
no I/O). When a tool returns the decision, :func:`answer_files` keeps them locally: already
kept files are found on disk; otherwise the reply is fetched again (its file links are signed
and expire after about a day, so the fresh copy carries fresh ones) and its files downloaded.
"""

from __future__ import annotations

import logging
from typing import Any

from discord_mcp.decisions.model import Decision
from discord_mcp.errors import DiscordError
from discord_mcp.files.store import OwnerFiles
from discord_mcp.state.files import off_loop
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)


async def answer_files(
    files: OwnerFiles, rest: RestClient, decision: Decision
) -> list[dict[str, Any]]:
    """The decision's answer files as entries, with local paths where they could be kept."""
    if not decision.attachments:
        return []
    message_id = decision.answer_message_id or ""
    kept = [await off_loop(files.recorded, message_id, a) for a in decision.attachments]
    if all(kept):
        return [k for k in kept if k is not None]
    try:
        message = await rest.get_message(decision.thread_id, message_id)
    except DiscordError as exc:
        log.warning("the files of decision %s could not be fetched: %s", decision.id, exc)
        why = f"the reply with this file could not be fetched again ({exc})"
        return [
            k or {**a, "path": None, "error": why}
            for k, a in zip(kept, decision.attachments, strict=True)
        ]
    return await files.keep(dict(message))
