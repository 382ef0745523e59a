"""Reminders: questions left unanswered are brought back to the owner, as one digest.

When reminders are due, and what holds them, is :mod:`~discord_mcp.decisions.reminder_policy`.
Everything due at one moment goes out as **one** digest per channel ("3 questions are waiting:
..." with a jump link to each card), never one ping per question; a question due a little
later (within a quarter of its delay) rides along, so two questions asked a minute apart give
one digest, not two.

- Escalation (optional): when a question already got a channel reminder and is due again, the
  digest also goes to each owner by direct message. An owner who accepts no DMs from the bot
  (50007) is logged once per digest and skipped.
- Exactly one process sends reminders for a state directory: whoever holds
  ``reminders/sender.lock`` (an OS lock held for the process's life: the watch daemon, or a
  server when no daemon runs). The others try again now and then, so when the sender dies
  another takes over.
- A reminder is never sent twice, even across a crash. Each step is recorded before the next
  one in ``reminders/digest.json`` (version 1): the digest (its id, the decisions it covers,
  the channel's last message id before it), then the channel message once posted, then each
  DM. The digest's text carries its id. Then each decision records the reminder (``reminders``
  + 1, ``reminded_at`` = the digest's time, so marking twice is marking once) and the record is
  removed. A sender that finds a record left behind finishes it: it looks for the digest by its
  id in the channel (and each DM channel) after the recorded message before it posts anything.

Nothing here holds a state lock across a Discord request: the record is written, then Discord
is asked, then the record is written again.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from discord_mcp import i18n
from discord_mcp.config.reminders import ReminderSettings
from discord_mcp.decisions.cards import asked_stamp
from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.reminder_policy import ReminderPolicy
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import (
    DiscordError,
    DiscordHTTPError,
    RateLimited,
    StateCorrupt,
    StateError,
    Unauthorized,
)
from discord_mcp.state.files import move_aside, off_loop, read_json, write_json
from discord_mcp.state.leases import Hold, try_exclusive
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)

DIGEST_FORMAT = 1
"""Version of ``reminders/digest.json`` (a public contract; see CHANGELOG)."""
CHECK_EVERY_S = 30.0
"""The longest pause between two looks for due reminders (shorter for delays of seconds)."""
RIDE_ALONG = 0.25
"""A question due within this fraction of its delay joins a digest that goes out anyway."""
MAX_LISTED = 15
"""Questions named in one digest; the rest are counted."""
FIND_PAGES = 10
"""Pages of 100 messages searched for a digest left behind by a sender that died."""
DIGEST_LIMIT = 2000

Wall = Callable[[], datetime]


def digest_marker(digest_id: str) -> str:
    """The text every copy of a digest carries (how a sender finds one its predecessor sent)."""
    return f"reminder `{digest_id}`"


def jump_link(decision: Decision) -> str:
    """A link to the decision's card (Discord's message link: channel, thread, message)."""
    return f"{decision.thread_url}/{decision.card_message_id}"


def render_digest(digest_id: str, decisions: Sequence[Decision], language: str = "en") -> str:
    """The digest's text in ``language``, at most :data:`DIGEST_LIMIT` characters, its id always
    included (on its last line, so a mention line in front may split it, never the id)."""
    lang = language
    count = len(decisions)
    lines = [
        i18n.text(lang, "digest.head_one")
        if count == 1
        else i18n.text(lang, "digest.head_many", count=count)
    ]
    tail = f"-# {digest_marker(digest_id)} · {i18n.text(lang, 'digest.tail')}"
    budget = DIGEST_LIMIT - len(lines[0]) - len(tail) - 2
    for index, decision in enumerate(decisions[:MAX_LISTED]):
        question = " ".join(decision.question.split())
        if len(question) > 120:
            question = question[:119] + "…"
        line = i18n.text(
            lang,
            "digest.item",
            question=question,
            project=decision.project,
            asked=asked_stamp(decision, lang),
            urgent=i18n.text(lang, "digest.urgent") if decision.urgent else "",
            link=jump_link(decision),
        )
        if len(line) + 1 > budget:
            lines.append(i18n.text(lang, "digest.more", count=count - index))
            break
        budget -= len(line) + 1
        lines.append(line)
    else:
        if count > MAX_LISTED:
            lines.append(i18n.text(lang, "digest.more", count=count - MAX_LISTED))
    lines.append(tail)
    return "\n".join(lines)


class ReminderSender:
    """Sends due reminders for one state directory, if this process is its sender.

    Args:
        channel_id: where digests go for decisions that name no channel.
        owner_ids: who is mentioned (and DMed) for decisions that name no owners.
        wall: the current UTC time (injectable).
        sleep: how to wait between looks (injectable).
        language: ``DISCORD_MCP_LANGUAGE``; ``auto``: the language most of a digest's
            questions were asked in.
    """

    def __init__(
        self,
        *,
        home: Path,
        rest: RestClient,
        store: DecisionStore,
        channel_id: str,
        owner_ids: frozenset[str],
        policy: ReminderSettings,
        wall: Wall = lambda: datetime.now(UTC),
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        language: str = "auto",
    ) -> None:
        self._language = language
        self._rest = rest
        self._store = store
        self._channel_id = channel_id
        self._owner_ids = owner_ids
        self._policy = ReminderPolicy.of(policy)
        self._wall = wall
        self._sleep = sleep
        self._lock_path = home / "reminders" / "sender.lock"
        self._record_path = home / "reminders" / "digest.json"
        self._hold: Hold | None = None

    @property
    def is_sender(self) -> bool:
        """Whether this process holds the sender lock."""
        return self._hold is not None

    async def claim(self) -> bool:
        """Become the sender if nobody is (never waits); True if this process is it."""
        if self._hold is None:
            self._hold = await off_loop(try_exclusive, self._lock_path)
            if self._hold is not None:
                log.info("this process sends the reminders (%s)", self._lock_path.parent)
        return self._hold is not None

    def release(self) -> None:
        """Stop being the sender (another process may take over)."""
        if self._hold is not None:
            self._hold.release()
            self._hold = None

    async def run(self) -> None:
        """Become the sender when possible, then send what is due, until cancelled.

        Discord or state failures are logged and tried again at the next look; a rejected
        token stops reminders (every request would fail).
        """
        if not self._policy.enabled:
            return
        every = self._policy.check_every(CHECK_EVERY_S)
        try:
            while True:
                if await self.claim():
                    try:
                        await self.send_due()
                    except Unauthorized as exc:
                        log.error("reminders stop: %s", exc)
                        return
                    except (DiscordError, StateError) as exc:
                        log.warning("sending reminders failed (tried again later): %s", exc)
                await self._sleep(every)
        finally:
            self.release()

    # ---- one look ---------------------------------------------------------------------------

    async def send_due(self) -> list[str]:
        """Finish a digest left behind, then send one digest per channel of everything due now.

        Returns the ids of the decisions reminded by this call. Call it only as the sender.
        """
        reminded = await self._finish_left_behind()
        now = self._wall()
        pending = [d for d in await self._store.aopen_decisions() if d.status == "pending"]
        due = [d for d in pending if self._policy.due(d, now)]
        if not due:
            return reminded
        by_channel: dict[str, list[Decision]] = {}
        for decision in due:
            by_channel.setdefault(decision.channel_id or self._channel_id, []).append(decision)
        chosen = {d.id for d in due}
        for decision in pending:  # riders join a digest going to their channel anyway
            channel = by_channel.get(decision.channel_id or self._channel_id)
            if (
                channel is not None
                and decision.id not in chosen
                and self._rides_along(decision, now)
            ):
                channel.append(decision)
        for channel_id, decisions in by_channel.items():
            decisions.sort(key=lambda d: d.asked_at)
            reminded += await self._send(channel_id, decisions, now)
        return reminded

    def _rides_along(self, decision: Decision, now: datetime) -> bool:
        at = self._policy.next_due(decision)
        if at is None or self._policy.held_until(decision, now) is not None:
            return False
        delay = self._policy.delays[min(decision.reminders, len(self._policy.delays) - 1)]
        return (at - now).total_seconds() <= delay * RIDE_ALONG

    async def _send(self, channel_id: str, decisions: list[Decision], now: datetime) -> list[str]:
        owners = sorted({o for d in decisions for o in d.owner_ids} or self._owner_ids)
        channel = await self._rest.get_channel(channel_id)
        record: dict[str, Any] = {
            "version": DIGEST_FORMAT,
            "id": secrets.token_hex(4),
            "at": now.isoformat(timespec="milliseconds"),
            "channel_id": channel_id,
            "after": str(channel.get("last_message_id") or "0"),
            "decisions": [d.id for d in decisions],
            "owners": owners,
            "escalate": self._policy.escalate_dm and any(d.reminders >= 1 for d in decisions),
            "posted": None,
            "dms": {},
        }
        await self._save(record)
        return await self._carry_out(record, resumed=False)

    async def _finish_left_behind(self) -> list[str]:
        """A digest recorded by a sender that died before finishing it: finish it, once."""
        try:
            record = await off_loop(read_json, self._record_path, max_version=DIGEST_FORMAT)
        except StateCorrupt as exc:
            log.error("%s; its reminder may be sent again", exc)  # quarantined, reported
            return []
        if not record:
            return []
        if not _well_formed(record):
            moved = await off_loop(move_aside, self._record_path, "not a reminder record")
            log.error("%s is not a reminder record; moved to %s", self._record_path, moved)
            return []
        log.info("finishing reminder %s, left behind by a sender that stopped", record["id"])
        return await self._carry_out(record, resumed=True)

    async def _carry_out(self, record: dict[str, Any], *, resumed: bool) -> list[str]:
        """Post the digest, DM it if it escalates, record it on its decisions, drop the record.

        ``resumed``: a predecessor may have done any step already; look before posting.
        """
        wanted = set(record["decisions"])
        decisions = [d for d in await self._store.aopen_decisions() if d.id in wanted]
        open_ = [d for d in decisions if d.status == "pending"]
        if not open_:
            await off_loop(self._record_path.unlink, missing_ok=True)
            return []
        marker = digest_marker(record["id"])
        language = i18n.most_used(self._language, (d.language for d in open_))
        text = render_digest(record["id"], open_, language)
        if record["posted"] is None:
            found = None
            if resumed:
                found = await self._find(record["channel_id"], record["after"], marker)
            if found is None:
                owners = record["owners"]
                mentions = " ".join(f"<@{o}>" for o in owners)
                sent = await self._rest.send_text(
                    record["channel_id"],
                    f"{mentions}\n{text}" if mentions else text,
                    allowed_mentions={"users": owners},
                )
                found = sent[-1]["id"]  # the marker ends the text
            record["posted"] = found
            await self._save(record)
        if record["escalate"]:
            await self._direct(record, text, marker, resumed=resumed)
        await self._mark(record)
        await off_loop(self._record_path.unlink, missing_ok=True)
        log.info("reminded the owner of %d question(s) (%s)", len(open_), record["id"])
        return [d.id for d in open_]

    async def _direct(
        self, record: dict[str, Any], text: str, marker: str, *, resumed: bool
    ) -> None:
        """The digest by DM to each owner, once each; an owner who refuses DMs is skipped."""
        dms: dict[str, dict[str, Any]] = record["dms"]
        for owner in record["owners"]:
            entry = dms.get(owner)
            if entry is not None and entry["done"]:
                continue
            try:
                if entry is None:
                    channel = await self._rest.open_dm(owner)
                    entry = dms[owner] = {
                        "channel": channel["id"],
                        "after": str(channel.get("last_message_id") or "0"),
                        "done": False,
                    }
                    await self._save(record)
                elif resumed and await self._find(entry["channel"], entry["after"], marker):
                    entry["done"] = True
                    await self._save(record)
                    continue
                await self._rest.send_text(entry["channel"], text, allowed_mentions={"parse": []})
            except DiscordHTTPError as exc:
                if exc.status >= 500 or isinstance(exc, RateLimited | Unauthorized):
                    raise  # tried again at the next look, from the record
                log.warning("could not send the reminder to %s by DM: %s", owner, exc)
            if entry is None:
                entry = dms[owner] = {"channel": None, "after": "0", "done": True}
            entry["done"] = True
            await self._save(record)

    async def _mark(self, record: dict[str, Any]) -> None:
        at = record["at"]

        def mark(current: Decision) -> Decision | None:
            if current.status != "pending" or current.reminded_at == at:
                return None  # answered meanwhile, or marked before a crash
            return current.replace(reminders=current.reminders + 1, reminded_at=at)

        for decision_id in record["decisions"]:
            await self._store.aupdate(decision_id, mark)

    async def _find(self, channel_id: str, after: str, marker: str) -> str | None:
        """The id of the bot's message carrying ``marker`` posted after message ``after``."""
        for _ in range(FIND_PAGES):
            page = await self._rest.list_messages(channel_id, after=after, limit=100)
            for message in page:
                if message["author"].get("bot") and marker in message.get("content", ""):
                    return message["id"]
            if len(page) < 100:
                return None
            after = max((m["id"] for m in page), key=int)
        return None

    async def _save(self, record: dict[str, Any]) -> None:
        await off_loop(write_json, self._record_path, record)


def _well_formed(record: dict[str, Any]) -> bool:
    """Whether a ``digest.json`` holds what :meth:`ReminderSender._carry_out` reads."""
    strings = ("id", "at", "channel_id", "after")
    return (
        all(isinstance(record.get(key), str) for key in strings)
        and isinstance(record.get("decisions"), list)
        and isinstance(record.get("owners"), list)
        and isinstance(record.get("escalate"), bool)
        and (record.get("posted") is None or isinstance(record.get("posted"), str))
        and isinstance(record.get("dms"), dict)
        and all(
            isinstance(entry, dict) and isinstance(entry.get("done"), bool)
            for entry in record["dms"].values()
        )
    )
