"""What a pass of discord-watch reads, whatever the history behind it (issue 38).

- The threads it watches from its own state: run sessions active in the last week (or with a
  job), questions asked in the last week (done ones too, once per start); older ones rest
  (:func:`known_threads`).
- After each pass, what is done moves out of the open decisions (:func:`retire_done`; the
  first pass after an upgrade migrates the whole history).
- A message in a thread is routed by that thread's decisions, open or done, never by every
  decision ever asked (:func:`thread_decisions`).
- Resting threads (:mod:`.cursors`: archived, or silent for a week) are read only when they may
  have news (:func:`wake_resting`): Discord lists them as active (a message unarchived them),
  or, after the daemon was down long enough for one to be written in and archived again,
  Discord lists them among the threads archived since it was last alive (one listing per
  parent channel, whose length follows the downtime's activity, not the history); when a list
  cannot be had, all of them are read (nothing is missed on doubt).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DiscordError, StateError, Unauthorized
from discord_mcp.runs import SessionView
from discord_mcp.state.files import off_loop
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.cursors import REST_AFTER_S, Cursors

log = logging.getLogger(__name__)

DECISION_THREAD_DAYS = 7
"""Decision threads are watched this long after the question, for notes after the answer."""
ARCHIVED_MARGIN_S = 60.0
"""Threads archived this long before the daemon was last alive are listed too: Discord's clock
and this machine's may differ."""


async def known_threads(
    store: DecisionStore,
    sessions: Iterable[SessionView],
    channel: str,
    now: float,
    *,
    with_history: bool,
) -> list[tuple[str, str | None, str | None]]:
    """(thread, parent, start) of the threads to watch from our own state (module doc)."""
    found: list[tuple[str, str | None, str | None]] = []
    for session in sessions:
        if session.last_activity_at.timestamp() >= now - REST_AFTER_S or not at_rest(session):
            found.append((session.thread_id, channel, None))
    recent = datetime.now(UTC) - timedelta(days=DECISION_THREAD_DAYS)
    decisions = await store.aopen_decisions()
    if with_history:
        decisions += await off_loop(lambda: list(store.history(since=recent)))
    for decision in decisions:
        if decision.card_message_id and datetime.fromisoformat(decision.asked_at) >= recent:
            # Earlier messages in the thread are not ours; the card's own thread starts here.
            found.append((decision.thread_id, decision.channel_id, decision.card_message_id))
    return found


async def retire_done(store: DecisionStore) -> None:
    """Move what is done out of the open decisions (:mod:`~discord_mcp.decisions.archive`)."""
    try:
        moved = await store.asweep()
    except StateError as exc:
        log.warning("moving done decisions to the archive failed: %s", exc)
        return
    if moved:
        log.info("moved %d done decision%s to the archive", moved, "" if moved == 1 else "s")


async def thread_decisions(store: DecisionStore, channel_id: str, channel: str) -> list[Decision]:
    """What routing a message in ``channel_id`` reads: the decisions of its thread, open or
    done (:meth:`~discord_mcp.decisions.store.DecisionStore.in_thread`); none for the channel
    itself."""
    return [] if channel_id == channel else await store.ain_thread(channel_id)


async def wake_resting(
    cursors: Cursors,
    rest: RestClient,
    channel: str,
    *,
    down_since: float | None,
    guild_id: str | None,
) -> tuple[set[str] | None, str | None]:
    """Wake the resting threads this pass must read (module doc). ``down_since``: when the
    daemon was last alive, if it was down long enough for a resting thread to be written in
    and archived again meanwhile. Returns the threads Discord lists as active (None: unknown),
    and the guild's id once known."""
    resting = await cursors.load_resting()
    try:
        if guild_id is None:
            guild_id = await rest.guild_of(channel)
            if not guild_id:
                raise DiscordError(f"channel {channel} is in no server")
        listed = await rest.list_active_threads(guild_id)
    except Unauthorized:
        raise
    except (DiscordError, KeyError, TypeError) as exc:
        if resting:
            log.warning("could not list the active threads (%s): reading every resting one", exc)
        cursors.wake_all()
        return None, guild_id
    active = {str(t.get("id")) for t in listed if t.get("id")}
    for thread_id in active & set(resting):
        cursors.wake(thread_id)
    if down_since is not None and resting:
        await _wake_archived_since(cursors, rest, resting, down_since - ARCHIVED_MARGIN_S)
    return active, guild_id


async def _wake_archived_since(
    cursors: Cursors, rest: RestClient, resting: Mapping[str, Mapping[str, Any]], since: float
) -> None:
    """Wake the resting threads Discord archived at ``since`` or later (a message may have
    unarchived them while the daemon was down); every resting thread when that cannot be
    listed."""
    parents = sorted({str(c["parent_id"]) for c in resting.values() if c.get("parent_id")})
    archived: set[str] = set()
    try:
        for parent in parents:
            found = await rest.public_threads_archived_since(parent, since)
            archived.update(str(t.get("id")) for t in found)
    except Unauthorized:
        raise
    except (DiscordError, KeyError, TypeError) as exc:
        log.warning(
            "could not list the threads archived while down (%s): reading every resting one",
            exc,
        )
        cursors.wake_all()
        return
    woken = [thread_id for thread_id in list(resting) if thread_id in archived]
    for thread_id in woken:
        cursors.wake(thread_id)
    log.info(
        "down since %s: %d of the %d resting threads were archived since, reading them again",
        datetime.fromtimestamp(since + ARCHIVED_MARGIN_S, UTC).isoformat(timespec="seconds"),
        len(woken),
        len(resting) + len(woken),
    )


def at_rest(session: SessionView) -> bool:
    """A run session with no job running or queued."""
    return session.running_job_id is None and not session.queued_job_ids
