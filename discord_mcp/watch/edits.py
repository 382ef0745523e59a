"""One edit budget per channel for the messages that are edited while a job runs.

Theory. Discord limits message edits per channel: the ``PATCH .../messages/{id}`` bucket, read
from its headers (commonly 5 per 5 s), whoever edits. A streaming job has two writers in its
thread, its live text (:mod:`.live_text`) and its status message (:mod:`.notifier`), and other
processes edit there too (an agent's progress card, a question's card once answered). Edited
separately at their own paces, the two writers asked for about 1.5 edits a second, more than the
bucket gives, queued behind each other, and left nothing for the others.

So this process's running edits go through one :class:`ChannelEdits`: each message's newest
text replaces the one still waiting (coalesced: only the newest text is ever sent), and each
channel's edits go one at a time, the message waiting longest first, as fast as the bucket
allows (the rate limiter waits on its headers, shared with every process of the state
directory) but always leaving :data:`KEEP` edit of each window to the writers that cannot wait
(:func:`~discord_mcp.transport.ledger.reserve`'s ``keep``).

Messages older than an hour have a much smaller edit allowance on Discord (30046 past it): a
running edit is never aimed at a message older than :data:`FRESH_FOR_S`; :meth:`ChannelEdits.old`
tells the writers to post a new one instead. Ages are read on Discord's clock
(:meth:`~discord_mcp.transport.rest.RestClient.discord_time`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from discord_mcp.errors import DiscordError, NotFound
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.snowflakes import made_at

log = logging.getLogger(__name__)

KEEP = 1
"""Edits of each window a running edit leaves to others."""
FRESH_FOR_S = 50 * 60.0
"""The oldest message a running edit is aimed at (Discord's stricter limit starts at an hour)."""
NO_PINGS: Mapping[str, Any] = {"parse": []}


@dataclass
class _Pending:
    content: str
    allowed_mentions: Mapping[str, Any]


class ChannelEdits:
    """The running edits of one process, one channel at a time (see the module doc).

    Args:
        rest: the REST client.
        keep: edits of each window left to others.
    """

    def __init__(self, rest: RestClient, *, keep: int = KEEP) -> None:
        self._rest = rest
        self._keep = keep
        self._pending: dict[str, dict[str, _Pending]] = {}
        """channel -> message -> its newest text (insertion order: who waits longest)."""
        self._sending: dict[str, str] = {}
        """channel -> the message whose edit is on its way."""
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._sent = asyncio.Event()
        self.edits = 0
        """Edits sent (for tests and the bench)."""

    def old(self, message_id: str) -> bool:
        """Whether ``message_id`` is too old to be edited while a job runs: post a new one."""
        made = made_at(message_id)
        return made is not None and self._rest.discord_time() - made > FRESH_FOR_S

    def put(
        self,
        channel_id: str,
        message_id: str,
        content: str,
        *,
        allowed_mentions: Mapping[str, Any] = NO_PINGS,
    ) -> None:
        """Show ``content`` in the message as soon as the channel's budget allows (a text still
        waiting for the same message is replaced); returns at once."""
        waiting = self._pending.setdefault(channel_id, {})
        # A newer text waits behind the other messages' (each message has its turn).
        waiting.pop(message_id, None)
        waiting[message_id] = _Pending(content, allowed_mentions)
        worker = self._workers.get(channel_id)
        if worker is None or worker.done():
            self._workers[channel_id] = asyncio.create_task(
                self._work(channel_id), name=f"edits-{channel_id}"
            )

    async def settle(self, channel_id: str, message_id: str) -> None:
        """Forget what waits for ``message_id`` and wait until no edit of it is on its way: the
        caller's own edit (a final status), or the message's deletion, comes after."""
        self._pending.get(channel_id, {}).pop(message_id, None)
        while self._sending.get(channel_id) == message_id:
            self._sent.clear()
            await self._sent.wait()

    def waiting(self, channel_id: str) -> int:
        """Edits waiting in ``channel_id`` (not counting one on its way)."""
        return len(self._pending.get(channel_id, {}))

    async def aclose(self) -> None:
        """Stop: what still waits is dropped (the daemon is stopping)."""
        workers, self._workers = list(self._workers.values()), {}
        self._pending.clear()
        for worker in workers:
            await cancel_and_wait(worker, within=5)

    async def _work(self, channel_id: str) -> None:
        waiting = self._pending.setdefault(channel_id, {})
        while waiting:
            message_id = next(iter(waiting))
            edit = waiting.pop(message_id)
            self._sending[channel_id] = message_id
            try:
                await self._rest.edit_message(
                    channel_id,
                    message_id,
                    content=edit.content,
                    allowed_mentions=edit.allowed_mentions,
                    keep=self._keep,
                )
                self.edits += 1
            except NotFound:
                waiting.pop(message_id, None)  # deleted: nothing more to show there
            except DiscordError as exc:
                log.warning("editing message %s in %s failed: %s", message_id, channel_id, exc)
            finally:
                self._sending.pop(channel_id, None)
                self._sent.set()
        with contextlib.suppress(KeyError):
            if not self._pending[channel_id]:
                del self._pending[channel_id]
