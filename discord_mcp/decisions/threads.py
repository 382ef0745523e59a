"""Archiving a question's thread once it is done, so threads never pile up against Discord's cap.

Discord allows 1000 active threads per server (error 160006 past that); at a hundred questions
a day, threads left active for their week would reach it. So a question's *own* thread (one it
opened, :attr:`Decision.own_thread`) is archived once nothing is left to happen there: every
question asked in it is final and its card shows the outcome. An archived thread stays in the
channel's thread list under "archived", keeps its history, and reopens by itself when someone
writes in it (the bot's own later messages reopen it through 50083:
:meth:`~discord_mcp.transport.rest.RestClient.create_message`).

Never archived: a thread no question opened (a run's thread, any thread an agent named with
``thread_id``; the run may still use it), and a thread with an open card.
"""

from __future__ import annotations

import logging

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DiscordError, DiscordHTTPError, Unauthorized
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)

THREAD_ARCHIVED = 50083


def done_with(thread_id: str, decisions: list[Decision]) -> bool:
    """Whether the thread is a question's own and nothing in it is open any more."""
    here = [d for d in decisions if d.thread_id == thread_id]
    if not any(d.own_thread for d in here):
        return False
    return all(d.is_final and (d.final_shown or not d.card_message_id) for d in here)


async def archive_if_done(store: DecisionStore, rest: RestClient, decision: Decision) -> bool:
    """Archive ``decision``'s thread if it is done with (see the module doc); True if archived.

    A failure is logged, never raised: the thread then simply stays active for its day.
    """
    if not decision.thread_id or not decision.is_final:
        return False
    if not done_with(decision.thread_id, await store.ain_thread(decision.thread_id)):
        return False
    try:
        await rest.archive_thread(decision.thread_id)
    except Unauthorized:
        raise
    except DiscordHTTPError as exc:
        if exc.code != THREAD_ARCHIVED:  # archived already: nothing to do
            log.warning("could not archive the thread of decision %s: %s", decision.id, exc)
        return False
    except DiscordError as exc:
        log.warning("could not archive the thread of decision %s: %s", decision.id, exc)
        return False
    log.info("archived the thread of decision %s: its question is done", decision.id)
    return True
