"""A status card per task, edited in place while its status stays, posted anew when it changes.

Edits notify nobody; a new message is what makes a phone buzz, so a change of status
(``running`` -> ``needs_input``, ``done``, ...) posts a new card. Cards are recorded in
``progress/<project>/<task>.json`` so every process of the project edits the same card.

Nobody holds a lock while Discord is asked anything. Instead, a process about to post a card
records a *posting claim* on the task's file (who, which status, since when) under the file's
lock, posts, then records the card. Another process that finds a fresh claim for the same status
waits for the card instead of posting a second one; a claim older than :data:`CLAIM_STALE_S`
belongs to a process that died, and is taken over. Calls for one task within a process run one
after another (an asyncio lock, which blocks nothing else). A card the owner deleted is posted
anew. A card posted whose record could not be written (a full disk) is remembered by the process,
which edits it next time rather than posting it again.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from discord_mcp.config import Settings
from discord_mcp.errors import DecisionError, NotFound, StateCorrupt
from discord_mcp.notices import mention_prefix
from discord_mcp.state.files import locked, off_loop, read_json, write_json
from discord_mcp.transport.chunking import split_message
from discord_mcp.transport.rest import RestClient

TaskStatus = Literal["running", "blocked", "needs_input", "done", "failed"]

STATUS_ICONS: dict[str, str] = {
    "running": "\U0001f504",
    "blocked": "\u26d4",
    "needs_input": "\u2753",
    "done": "\u2705",
    "failed": "\u274c",
}
FORMAT_VERSION = 1
CLAIM_STALE_S = 30.0
"""A posting claim this old belongs to a process that died while posting (a post takes
seconds at most, rate-limit waits included)."""
CLAIM_POLL_S = 0.1
"""How often a call waiting for another process's card looks for it."""
_TASK_ID = re.compile(r"[^a-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class ProgressUpdate:
    """One ``report_progress`` call."""

    title: str
    summary: str
    details: tuple[str, ...] = ()
    status: TaskStatus = "running"
    task_id: str | None = None
    mention: bool = False
    channel_id: str | None = None
    """Where the card goes (a thread of the project, checked by the caller); None: the
    session's thread or the channel."""


def task_key(update: ProgressUpdate) -> str:
    """The card's key: the given task id, or the title, as a safe file name."""
    raw = (update.task_id or update.title).strip().lower()
    key = _TASK_ID.sub("-", raw).strip("-.")[:80]
    return key or "task"


def render_progress(update: ProgressUpdate, key: str) -> str:
    """The status card's text (at most 2000 characters)."""
    lines = [
        f"{STATUS_ICONS[update.status]} **{update.title.strip()[:200]}** · "
        f"{update.status.replace('_', ' ')}",
        update.summary.strip()[:1000],
    ]
    budget = 1900 - sum(len(line) + 1 for line in lines)
    for detail in update.details:
        line = f"• {detail.strip()[:300]}"
        if len(line) + 1 > budget:
            lines.append("• …")
            break
        lines.append(line)
        budget -= len(line) + 1
    stamp = datetime.now(UTC).strftime("%H:%M:%S UTC")
    lines.append(f"-# task `{key}` · updated {stamp}")
    return split_message("\n".join(lines))[0]


@dataclass(frozen=True, slots=True)
class _Card:
    channel_id: str
    message_id: str
    status: str


@dataclass(frozen=True, slots=True)
class _Plan:
    kind: Literal["edit", "post", "wait"]
    card: _Card | None = None


class ProgressBoard:
    """The status cards of one project, for one process.

    Args:
        wall: seconds since the epoch (claims are compared across processes).
        sleep: how to pause while another process posts (injectable).
    """

    def __init__(
        self,
        settings: Settings,
        rest: RestClient,
        *,
        wall: Callable[[], float] = time.time,
        sleep: Callable[[float], Any] = asyncio.sleep,
    ) -> None:
        self._settings = settings
        self._rest = rest
        self._wall = wall
        self._sleep = sleep
        self._claim = secrets.token_hex(6)
        self._tasks: dict[str, asyncio.Lock] = {}
        self._unrecorded: dict[str, _Card] = {}

    def path(self, key: str) -> Path:
        project = _TASK_ID.sub("-", self._settings.project_name.lower()).strip("-.") or "project"
        return self._settings.home / "progress" / project / f"{key}.json"

    async def report(self, update: ProgressUpdate) -> dict[str, Any]:
        """Create or update the task's card; a new message only when the status changes.

        Raises:
            DecisionError: a bad status or an empty title.
            DiscordError: Discord refused the edit or the post.
            StateError: the card's record cannot be written (a full disk, say).
        """
        if update.status not in STATUS_ICONS:
            raise DecisionError(
                f"status must be one of {', '.join(STATUS_ICONS)}, not {update.status!r}"
            )
        if not update.title.strip():
            raise DecisionError("title is empty: name the task")
        key = task_key(update)
        async with self._tasks.setdefault(key, asyncio.Lock()):
            card, created = await self._report(key, update)
        return {
            "ok": True,
            "task_id": key,
            "status": update.status,
            "message_id": card.message_id,
            "new_message": created,
        }

    async def _report(self, key: str, update: ProgressUpdate) -> tuple[_Card, bool]:
        path = self.path(key)
        content = render_progress(update, key)
        deadline = self._wall() + 2 * CLAIM_STALE_S
        while True:
            plan = await off_loop(self._plan, path, key, update.status, self._where(update))
            if plan.kind == "wait" and self._wall() < deadline:
                await self._sleep(CLAIM_POLL_S)
                continue
            if plan.kind == "edit" and plan.card is not None:
                try:
                    await self._rest.edit_message(
                        plan.card.channel_id,
                        plan.card.message_id,
                        content=content,
                        allowed_mentions={"parse": []},
                    )
                    return plan.card, False
                except NotFound:
                    # The owner deleted the card: forget it and post a new one.
                    await off_loop(self._forget, path, key, plan.card.message_id)
                    continue
            return await self._post(path, key, update, content), True

    def _where(self, update: ProgressUpdate) -> str:
        return update.channel_id or self._settings.thread_id or self._settings.channel_id

    def _plan(self, path: Path, key: str, status: str, channel_id: str) -> _Plan:
        """Under the file's lock: edit the recorded card, wait for another poster, or claim.

        A card is edited only where it is: a report into another thread posts a card there."""
        with locked(path):
            try:
                previous = read_json(path, max_version=FORMAT_VERSION) or {}
            except StateCorrupt:
                previous = {}  # quarantined and reported; a new card is posted
            unrecorded = self._unrecorded.get(key)
            if (
                unrecorded is not None
                and unrecorded.status == status
                and unrecorded.channel_id == channel_id
            ):
                return _Plan("edit", unrecorded)
            if (
                previous.get("status") == status
                and previous.get("message_id")
                and str(previous.get("channel_id")) == channel_id
            ):
                return _Plan(
                    "edit",
                    _Card(str(previous["channel_id"]), str(previous["message_id"]), status),
                )
            claim = previous.get("posting") or {}
            fresh = self._wall() - float(claim.get("since") or 0) < CLAIM_STALE_S
            if claim.get("by") not in (None, self._claim) and fresh:
                return _Plan("wait")
            previous.update(
                version=FORMAT_VERSION,
                task_id=key,
                posting={"by": self._claim, "status": status, "since": self._wall()},
            )
            write_json(path, previous)
            return _Plan("post")

    async def _post(self, path: Path, key: str, update: ProgressUpdate, content: str) -> _Card:
        prefix, allowed = mention_prefix(self._settings, update.mention)
        channel_id = self._where(update)
        try:
            message = await self._rest.create_message(
                channel_id, split_message(prefix + content)[0], allowed_mentions=allowed
            )
        except BaseException:
            await asyncio.shield(off_loop(self._release, path))
            raise
        card = _Card(channel_id, message["id"], update.status)
        self._unrecorded[key] = card  # until the record is on disk
        await off_loop(self._record, path, key, update, card)
        del self._unrecorded[key]
        return card

    def _record(self, path: Path, key: str, update: ProgressUpdate, card: _Card) -> None:
        with locked(path):
            write_json(
                path,
                {
                    "version": FORMAT_VERSION,
                    "task_id": key,
                    "title": update.title,
                    "status": card.status,
                    "channel_id": card.channel_id,
                    "message_id": card.message_id,
                },
            )

    def _release(self, path: Path) -> None:
        with locked(path):
            try:
                previous = read_json(path, max_version=FORMAT_VERSION)
            except StateCorrupt:
                return
            if previous and (previous.get("posting") or {}).get("by") == self._claim:
                del previous["posting"]
                write_json(path, previous)

    def _forget(self, path: Path, key: str, message_id: str) -> None:
        self._unrecorded.pop(key, None)
        with locked(path):
            try:
                previous = read_json(path, max_version=FORMAT_VERSION)
            except StateCorrupt:
                return
            if previous and str(previous.get("message_id")) == message_id:
                write_json(path, {"version": FORMAT_VERSION, "task_id": key})
