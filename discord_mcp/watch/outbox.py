"""A job's final message as durable work: queued in the state directory, sent piece by piece.

Theory. When a job ends, Discord must be told several things in its thread: the streamed
preview goes, the status message shows the outcome, and the answer (often several 2000-character
pieces) is posted. Done inside one bounded notifier call, a rate-limit wait or a long answer
outlived the bound and the rest was dropped. So the end of a job is a :class:`Delivery`, written
to ``<state>/outbox/<id>.json`` before anything is sent, and sent by one worker step by step,
each step recorded as done when Discord confirmed it:

* ``delete`` (a preview message) and ``edit`` (the final status): a message that is gone, or that
  the bot may no longer touch, is done with (they are cosmetic);
* ``post``: one piece of the answer, with a nonce of its own kept in the file, so a retry after
  a crash within Discord's few minutes cannot post it twice.

A step that fails for a passing reason (a rate limit, Cloudflare's ban, a network or server
error) is tried again later, with a growing pause (:data:`RETRY_MAX_S` at most), by this daemon
or the next one; never cancelled by a timeout. A post Discord refuses for good (the thread was
deleted, the bot lost its permission) fails the delivery, which is logged. Only after
:data:`GIVE_UP_S` does a delivery stop being tried. Once every step is done (or the delivery
failed), ``on_done`` is told where the answer went (the run's ``result.json``); only then is the
file removed, so a daemon that stopped in between tells it at its next start.

Deliveries go in the order they were queued, one at a time; one that must wait does not hold the
others. Only the daemon writes the outbox (the engine lock makes it the only one).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from discord_mcp.errors import (
    BadRequest,
    DiscordError,
    DiscordHTTPError,
    Forbidden,
    NotFound,
    StateError,
)
from discord_mcp.state.files import ensure_dir, off_loop, read_json, write_json
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.transport.chunking import split_message
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.edits import ChannelEdits

log = logging.getLogger(__name__)

VERSION = 1
RETRY_FIRST_S = 2.0
RETRY_MAX_S = 300.0
GIVE_UP_S = 24 * 3600.0
"""A delivery still not done this long after it was queued is given up (and logged)."""
POST_WAIT_S = 60.0
"""How long one post may wait for its rate limit before it is tried again later instead."""

Op = Literal["delete", "edit", "post"]
State = Literal["queued", "posted", "failed"]


@dataclass
class Step:
    """One request of a delivery."""

    op: Op
    message_id: str | None = None
    """``delete``/``edit``: the message; ``post``: the message it made, once done."""
    content: str | None = None
    allowed_mentions: Mapping[str, Any] | None = None
    nonce: str | None = None
    done: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "message_id": self.message_id,
            "content": self.content,
            "allowed_mentions": dict(self.allowed_mentions or {}),
            "nonce": self.nonce,
            "done": self.done,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Step:
        op = data["op"]
        if op not in ("delete", "edit", "post"):
            raise ValueError(f"unknown step {op!r}")
        return cls(
            op=op,
            message_id=_text(data.get("message_id")),
            content=_text(data.get("content")),
            allowed_mentions=dict(data.get("allowed_mentions") or {}),
            nonce=_text(data.get("nonce")),
            done=bool(data.get("done")),
        )


@dataclass
class Delivery:
    """The end of one job in its thread (see the module doc)."""

    id: str
    channel_id: str
    steps: list[Step]
    queued_at: float
    job_id: str | None = None
    run_id: str | None = None
    state: State = "queued"
    attempts: int = 0
    next_at: float = 0.0
    error: str | None = None

    @property
    def posted(self) -> list[str]:
        """The answer's messages posted so far, in order."""
        return [s.message_id for s in self.steps if s.op == "post" and s.done and s.message_id]

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "id": self.id,
            "channel_id": self.channel_id,
            "job_id": self.job_id,
            "run_id": self.run_id,
            "queued_at": self.queued_at,
            "state": self.state,
            "attempts": self.attempts,
            "next_at": self.next_at,
            "error": self.error,
            "steps": [s.to_json() for s in self.steps],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Delivery:
        state = data.get("state", "queued")
        if state not in ("queued", "posted", "failed"):
            raise ValueError(f"unknown state {state!r}")
        return cls(
            id=str(data["id"]),
            channel_id=str(data["channel_id"]),
            steps=[Step.from_json(s) for s in data["steps"]],
            queued_at=float(data["queued_at"]),
            job_id=_text(data.get("job_id")),
            run_id=_text(data.get("run_id")),
            state=state,
            attempts=int(data.get("attempts") or 0),
            next_at=float(data.get("next_at") or 0.0),
            error=_text(data.get("error")),
        )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def answer_steps(
    content: str, allowed_mentions: Mapping[str, Any], *, nonce_prefix: str
) -> list[Step]:
    """The ``post`` steps of a message of any length: 2000-character pieces, code fences kept
    whole, each with its own nonce (at most 25 characters, as Discord takes them)."""
    pieces = split_message(content) or [content]
    return [
        Step("post", content=piece, allowed_mentions=allowed_mentions, nonce=f"{nonce_prefix}{n}")
        for n, piece in enumerate(pieces)
    ]


def new_nonce_prefix() -> str:
    return secrets.token_hex(8) + "-"


OnDone = Callable[[Delivery], Awaitable[None]]


class Outbox:
    """The daemon's deliveries (see the module doc).

    Args:
        rest: the REST client.
        home: the state directory (None: memory only, for tests).
        edits: the running edits; a delivery's messages are settled there first, so no
            running edit lands after it.
        on_done: told of each delivery once it is posted or failed.
        wall: the wall clock (the file keeps wall times: they survive a restart).
    """

    def __init__(
        self,
        rest: RestClient,
        home: Path | None,
        *,
        edits: ChannelEdits | None = None,
        on_done: OnDone | None = None,
        wall: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._rest = rest
        self.directory = home / "outbox" if home is not None else None
        self._edits = edits
        self.on_done = on_done
        self._wall = wall
        self._sleep = sleep
        self._queue: dict[str, Delivery] = {}
        self._wake = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None
        self._loaded = False
        self.changed = asyncio.Event()
        """Set whenever a delivery moved on (tests and the bench wait on it)."""

    # -- what the notifier calls

    async def add(self, delivery: Delivery) -> None:
        """Queue ``delivery``: on disk first, then to the worker."""
        await self._save(delivery)
        self._queue[delivery.id] = delivery
        self.start()
        self._wake.set()

    def start(self) -> None:
        """Start the worker (at the daemon's start: what a previous daemon left is sent)."""
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work(), name="outbox")

    def pending(self, channel_id: str | None = None) -> list[Delivery]:
        """Deliveries not done yet (in ``channel_id``), oldest first."""
        return [
            d
            for d in self._queue.values()
            if d.state == "queued" and (channel_id is None or d.channel_id == channel_id)
        ]

    async def drained(self, channel_id: str, within: float) -> bool:
        """Wait (at most ``within``) until nothing is queued for ``channel_id``: what is posted
        there next comes after the answers before it."""
        try:
            async with asyncio.timeout(within):
                while self.pending(channel_id):
                    self.changed.clear()
                    await self.changed.wait()
        except TimeoutError:
            return False
        return True

    async def aclose(self) -> None:
        """Stop the worker; what is queued stays on disk for the next daemon."""
        if self._worker is not None:
            await cancel_and_wait(self._worker, within=5)
            self._worker = None

    # -- the worker

    async def _work(self) -> None:
        if not self._loaded:
            self._loaded = True
            for found in await off_loop(self._load):
                self._queue.setdefault(found.id, found)
        while True:
            self._wake.clear()
            now = self._wall()
            waiting = sorted(self._queue.values(), key=lambda d: d.queued_at)
            for delivery in waiting:
                if delivery.state == "queued" and delivery.next_at <= now:
                    await self._deliver(delivery)
                if delivery.state != "queued":
                    await self._finish(delivery)
                now = self._wall()
            later = [d.next_at for d in self._queue.values() if d.state == "queued"]
            if any(at <= self._wall() for at in later):
                continue
            pause = min(later) - self._wall() if later else None
            try:
                async with asyncio.timeout(pause):
                    await self._wake.wait()
            except TimeoutError:
                pass

    async def _deliver(self, delivery: Delivery) -> None:
        if self._edits is not None:
            for step in delivery.steps:
                if step.op != "post" and step.message_id:
                    await self._edits.settle(delivery.channel_id, step.message_id)
        for step in delivery.steps:
            if step.done:
                continue
            try:
                await self._do(delivery.channel_id, step)
            except (NotFound, Forbidden, BadRequest) as exc:
                if step.op != "post":
                    step.done = True  # gone, or no longer ours to touch: nothing to show
                    log.info("%s of message %s skipped: %s", step.op, step.message_id, exc)
                else:
                    delivery.state, delivery.error = "failed", str(exc)
                    log.warning(
                        "the answer of %s could not be posted in %s: %s",
                        delivery.job_id or delivery.id,
                        delivery.channel_id,
                        exc,
                    )
                    await self._save(delivery)
                    return
            except DiscordError as exc:  # passing: a rate limit, a ban, the network, a 5xx
                self._retry_later(delivery, exc)
                await self._save(delivery)
                return
            await self._save(delivery)
            self.changed.set()
        delivery.state = "posted"
        await self._save(delivery)

    async def _do(self, channel_id: str, step: Step) -> None:
        if step.op == "delete":
            assert step.message_id is not None
            await self._rest.delete_message(channel_id, step.message_id)
        elif step.op == "edit":
            assert step.message_id is not None
            await self._rest.edit_message(
                channel_id,
                step.message_id,
                content=step.content,
                allowed_mentions=step.allowed_mentions or {"parse": []},
            )
        else:
            sent = await self._rest.create_message(
                channel_id,
                step.content or None,
                allowed_mentions=step.allowed_mentions or {"parse": []},
                nonce=step.nonce,
            )
            step.message_id = str(sent["id"])
        step.done = True

    def _retry_later(self, delivery: Delivery, exc: DiscordError) -> None:
        delivery.attempts += 1
        now = self._wall()
        if now - delivery.queued_at > GIVE_UP_S:
            delivery.state, delivery.error = "failed", f"gave up after {delivery.attempts} tries"
            log.error("gave up on the answer of %s: %s", delivery.job_id or delivery.id, exc)
            return
        wait = min(RETRY_FIRST_S * 2 ** (delivery.attempts - 1), RETRY_MAX_S)
        if isinstance(exc, DiscordHTTPError) and exc.status == 429:
            wait = min(wait, RETRY_FIRST_S)  # the limiter knows the bucket: soon is fine
        delivery.next_at = now + wait
        delivery.error = str(exc)
        log.warning(
            "the answer of %s waits %.0f s (try %d): %s",
            delivery.job_id or delivery.id,
            wait,
            delivery.attempts,
            exc,
        )

    async def _finish(self, delivery: Delivery) -> None:
        """Tell where it went, then forget it (a failure to tell is told at the next start)."""
        if self.on_done is not None:
            try:
                await self.on_done(delivery)
            except Exception:
                log.exception("recording where the answer of %s went failed", delivery.id)
                return
        self._queue.pop(delivery.id, None)
        await self._remove(delivery)
        self.changed.set()

    # -- the files

    def _path(self, delivery_id: str) -> Path | None:
        return None if self.directory is None else self.directory / f"{delivery_id}.json"

    async def _save(self, delivery: Delivery) -> None:
        path = self._path(delivery.id)
        if path is None:
            return
        try:
            await off_loop(write_json, path, delivery.to_json())
        except StateError as exc:  # a full disk: the delivery goes on in memory
            log.warning("could not record the answer of %s on disk: %s", delivery.id, exc)

    async def _remove(self, delivery: Delivery) -> None:
        path = self._path(delivery.id)
        if path is not None:
            with contextlib.suppress(OSError):
                await off_loop(path.unlink, missing_ok=True)

    def _load(self) -> list[Delivery]:
        if self.directory is None or not self.directory.is_dir():
            return []
        found = []
        for path in sorted(ensure_dir(self.directory).glob("*.json")):
            try:
                document = read_json(path, max_version=VERSION)
                if document is not None:
                    found.append(Delivery.from_json(document))
            except StateError as exc:
                log.warning("an outbox file was set aside: %s", exc)
            except (KeyError, TypeError, ValueError) as exc:
                log.warning("an outbox file could not be read (%s): %s", path.name, exc)
        return found
