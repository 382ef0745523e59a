"""The live feed: ``GET /_emulator/feed``, the emulated world's changes as Server-Sent Events.

This is part of the control API (a public contract; events and fields only grow). The owner's
page (``page/``) is built on it, and anyone can watch it with ``curl -N``. Each event is one
SSE frame, ``event: <name>``, ``id: <n>`` (1, 2, 3... per connection) and one ``data:`` line
of JSON:

- ``snapshot`` (always first): ``{"guild", "bot_user_id", "owner_user_id", "channel_id",
  "channels" (threads included), "users", "messages"}``. ``messages`` holds every message of
  every channel and thread, oldest first, ephemeral ones included (see ``visible_to``). The
  snapshot and the subscription are taken at the same instant: nothing is missed or repeated
  between the snapshot and the events after it.
- ``message``: a message was created or edited, or its reactions changed (``MESSAGE_CREATE``,
  ``MESSAGE_UPDATE``, ``MESSAGE_REACTION_ADD``/``REMOVE``); ``data`` is the message as it
  stands when the frame is sent, so frames are idempotent: apply the latest one.
- ``message_delete``: ``{"id", "channel_id"}``.
- ``channel``: a thread or a DM channel (type 1, with ``recipients``) was created, a thread
  changed, or a channel's settings changed; ``data`` is the channel object as it stands.

Messages are the control API's message objects (``GET /_emulator/channels/{id}/messages``)
with two additions: each reaction has ``user_ids`` (who added it, in order), and an ephemeral
message (flag 64, a reply only its user sees) has ``visible_to``: the id of the user whose
interaction it answers. Interaction responses reach the feed as the messages they create
(type 4, 5, followups) or edit (type 7); a modal (type 9) is in the answer to the ``POST
/_emulator/interactions`` that opened it. A comment line (``: keep-alive``) is sent after 15
quiet seconds. A client that reconnects gets a fresh ``snapshot``. When the emulator stops,
its feeds end (the stream closes; ``EventSource`` clients try to reconnect).
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive

from discord_mcp.emulator.control_base import ControlledEmulator
from discord_mcp.emulator.models import FLAG_EPHEMERAL, Message
from discord_mcp.emulator.store import Event

KEEPALIVE_SECONDS = 15.0
_MESSAGE_EVENTS = {"MESSAGE_CREATE", "MESSAGE_UPDATE"}
_REACTION_EVENTS = {"MESSAGE_REACTION_ADD", "MESSAGE_REACTION_REMOVE"}
_CHANNEL_EVENTS = {"THREAD_CREATE", "THREAD_UPDATE", "CHANNEL_CREATE", "CHANNEL_UPDATE"}


def feed_routes(emulator: ControlledEmulator) -> list[Route]:
    """The ``/feed`` route bound to one emulator (mounted under ``/_emulator``)."""

    async def feed(request: Request) -> Response:
        queue: asyncio.Queue[Event] = asyncio.Queue()
        unsubscribe = emulator.state.subscribe(queue.put_nowait)
        # Taken in the same step as the subscription: the events queued from now on are
        # exactly the changes after this snapshot.
        snapshot = _snapshot(emulator)
        stop = asyncio.Event()
        _open.setdefault(request.app, set()).add(stop)

        def closed() -> None:
            unsubscribe()
            _open.get(request.app, set()).discard(stop)

        return StreamingResponse(
            _frames(emulator, queue, snapshot, _Ends(request.receive, stop), closed),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    return [Route("/feed", feed, methods=["GET"])]


_open: weakref.WeakKeyDictionary[object, set[asyncio.Event]] = weakref.WeakKeyDictionary()


def close_feeds(app: object) -> None:
    """End every open feed of this ASGI app (the server is stopping): their streams finish
    cleanly instead of being cancelled when the server gives up waiting for them."""
    for stop in list(_open.get(app, ())):
        stop.set()


class _Ends:
    """What ends a feed: the client going away, or the server stopping."""

    def __init__(self, receive: Receive, stop: asyncio.Event) -> None:
        self._receive = receive
        self._stop = stop
        self.tasks: set[asyncio.Future[Any]] = set()

    def start(self) -> None:
        self.tasks = {asyncio.ensure_future(self._gone()), asyncio.ensure_future(self._stop.wait())}

    async def _gone(self) -> None:
        while (await self._receive())["type"] != "http.disconnect":
            pass

    def cancel(self) -> None:
        for task in self.tasks:
            task.cancel()


async def _frames(
    emulator: ControlledEmulator,
    queue: asyncio.Queue[Event],
    snapshot: dict[str, Any],
    ends: _Ends,
    closed: Callable[[], None],
) -> AsyncIterator[str]:
    ends.start()
    try:
        seq = 1
        yield _frame("snapshot", seq, snapshot)
        while True:
            getter = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait(
                {getter, *ends.tasks},
                timeout=KEEPALIVE_SECONDS,
                return_when=asyncio.FIRST_COMPLETED,
            )
            if getter not in done:
                getter.cancel()  # Queue.get gives nothing up when cancelled
            if done & ends.tasks:
                return
            if not done:
                yield ": keep-alive\n\n"
                continue
            # Rendered now, not when the event was emitted: by the time the queue hands it
            # over, whatever emitted it has finished (an interaction's callback has recorded
            # its response message, so ``visible_to`` is known).
            translated = translate(emulator, getter.result())
            if translated is not None:
                seq += 1
                yield _frame(translated[0], seq, translated[1])
    finally:
        ends.cancel()
        closed()


def _frame(name: str, seq: int, data: dict[str, Any]) -> str:
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {name}\nid: {seq}\ndata: {payload}\n\n"


def translate(emulator: ControlledEmulator, event: Event) -> tuple[str, dict[str, Any]] | None:
    """The feed frame for a state event, or None for events the feed does not carry."""
    state = emulator.state
    if event.type in _MESSAGE_EVENTS or event.type in _REACTION_EVENTS:
        key = "id" if event.type in _MESSAGE_EVENTS else "message_id"
        message = state.messages.get(str(event.data.get(key)))
        return None if message is None else ("message", page_message(emulator, message))
    if event.type == "MESSAGE_DELETE":
        return "message_delete", {"id": event.data["id"], "channel_id": event.data["channel_id"]}
    if event.type in _CHANNEL_EVENTS:
        channel = state.channels.get(str(event.data.get("id")))
        return None if channel is None else ("channel", channel.to_json())
    return None


def page_message(emulator: ControlledEmulator, message: Message) -> dict[str, Any]:
    """A message as the feed carries it: reactions with ``user_ids``, ``visible_to``."""
    data = emulator.state.message_json(message)
    if message.reactions:
        for shown, reaction in zip(data["reactions"], message.reactions, strict=True):
            shown["user_ids"] = list(reaction.user_ids)
    if message.flags & FLAG_EPHEMERAL:
        data["visible_to"] = _shown_to(emulator, message.id)
    return data


def _shown_to(emulator: ControlledEmulator, message_id: str) -> str | None:
    for interaction in emulator.desk.interactions():
        if message_id == interaction.original_message_id or message_id in interaction.followup_ids:
            return interaction.user_id
    return None


def _snapshot(emulator: ControlledEmulator) -> dict[str, Any]:
    state = emulator.state
    messages = sorted(state.messages.values(), key=lambda m: int(m.id))
    return {
        "guild": state.guild.to_json(),
        "bot_user_id": state.bot.id,
        "owner_user_id": state.owner.id,
        "channel_id": state.channel.id,
        "channels": [channel.to_json() for channel in state.channels.values()],
        "users": [user.to_json() for user in state.users.values()],
        "messages": [page_message(emulator, m) for m in messages],
    }
