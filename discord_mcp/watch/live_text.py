"""An agent's answer shown while it is written: messages in the run's thread, edited in place.

The engine hands over the whole text so far (:mod:`discord_mcp.runs.engine.streaming`); this posts
it as one message (more when it outgrows 2000 characters, split without breaking a code fence)
and edits those messages as the text grows: the first text at once, later changes at most once
every ``interval`` seconds per job, coalesced (only the newest text is ever sent). The edits
share the channel's edit budget with the job's status message (:mod:`.edits`): they go when
the bucket allows, leaving room for the writers that cannot wait. A preview older than
:data:`~.edits.FRESH_FOR_S` (Discord allows few edits of messages older than an hour) is
deleted and posted anew below. When the job ends the preview is deleted: the final answer is
posted as a new message (an edit notifies nobody).

Text from the agent is posted without pings, like everything else it writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from discord_mcp.errors import DiscordError
from discord_mcp.runs.engine.streaming import EDIT_INTERVAL_S, pieces
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.wire import Message
from discord_mcp.watch.edits import ChannelEdits

log = logging.getLogger(__name__)
NO_PINGS: dict[str, list[str]] = {"parse": []}
POST_WAIT_S = 30.0
"""How long a job's end waits for its preview's post still on its way (a rate limit may hold
it); longer than a request's own timeout, so it rarely decides anything."""


class LiveText:
    """One job's streamed answer in one thread."""

    def __init__(
        self,
        rest: RestClient,
        thread_id: str,
        *,
        interval: float = EDIT_INTERVAL_S,
        monotonic: Callable[[], float] = time.monotonic,
        edits: ChannelEdits | None = None,
    ) -> None:
        self._rest = rest
        self._own_edits = edits is None
        self._edits = edits if edits is not None else ChannelEdits(rest)
        self._thread_id = thread_id
        self._interval = interval
        self._monotonic = monotonic
        self._latest = ""
        self._shown: list[str] = []
        self._ids: list[str] = []
        self._sent_at: float | None = None
        self._flusher: asyncio.Task[None] | None = None
        self._post: asyncio.Future[Message] | None = None  # a post on its way
        self.edits = 0  # REST calls made (posts and edits), for tests and the bench

    @property
    def message_ids(self) -> tuple[str, ...]:
        return tuple(self._ids)

    def update(self, text: str) -> None:
        """Show ``text`` (the whole answer so far) as soon as the pace allows."""
        self._latest = text
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="live-text")

    async def _flush(self) -> None:
        while True:
            if self._sent_at is not None:
                wait = self._sent_at + self._interval - self._monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
            text = self._latest
            wanted = pieces(text)
            if wanted == self._shown:
                return
            self._sent_at = self._monotonic()
            await self._show(wanted)
            if self._latest == text:
                return

    async def _show(self, wanted: list[str]) -> None:
        if self._ids and self._edits.old(self._ids[0]):
            await self._remove()  # too old to edit on: the preview starts again below
        for index, piece in enumerate(wanted):
            try:
                if index < len(self._ids):
                    if index < len(self._shown) and self._shown[index] == piece:
                        continue
                    self._edits.put(
                        self._thread_id, self._ids[index], piece, allowed_mentions=NO_PINGS
                    )
                else:
                    self._ids.append(await self._posted(piece))
                self.edits += 1
            except DiscordError as exc:
                log.warning("streaming text to thread %s failed: %s", self._thread_id, exc)
                return
            if index < len(self._shown):
                self._shown[index] = piece
            else:
                self._shown.append(piece)

    async def _posted(self, piece: str) -> str:
        """Post one more message of the preview; its id. The post is shielded: a job that ends
        while it is on its way cancels this flush, not the post, whose message
        :meth:`_settle_post` then keeps."""
        post = self._post = asyncio.ensure_future(
            self._rest.create_message(self._thread_id, piece, allowed_mentions=NO_PINGS)
        )
        try:
            sent = await asyncio.shield(post)
        except DiscordError:
            self._post = None
            raise
        self._post = None
        return str(sent["id"])

    async def finish(self) -> None:
        """Stop streaming and remove the preview (the final answer replaces it)."""
        if self._flusher is not None:
            await cancel_and_wait(self._flusher, within=5)
        await self._settle_post()
        await self._remove()
        if self._own_edits:
            await self._edits.aclose()

    async def stop(self) -> tuple[str, ...]:
        """Stop streaming, leaving the preview in place: its messages, for whoever removes
        them (the job's final delivery, :mod:`.outbox`, which settles their edits first)."""
        if self._flusher is not None:
            await cancel_and_wait(self._flusher, within=5)
        await self._settle_post()
        return tuple(self._ids)

    async def _settle_post(self) -> None:
        """A post the stopped flush left on its way: its message is part of the preview
        (Discord may have it already, its id still coming back), so wait for it and keep it,
        or the preview would outlive the job that wrote it."""
        post, self._post = self._post, None
        if post is None:
            return
        try:
            sent = await asyncio.wait_for(post, POST_WAIT_S)
        except (DiscordError, TimeoutError) as exc:
            log.warning("a preview in thread %s may remain: its post %s", self._thread_id, exc)
            return
        self._ids.append(str(sent["id"]))

    async def _remove(self) -> None:
        for message_id in self._ids:
            await self._edits.settle(self._thread_id, message_id)
            with contextlib.suppress(DiscordError):
                await self._rest.delete_message(self._thread_id, message_id)
        self._ids.clear()
        self._shown.clear()
