"""Saying once, after a restart, that discord-watch was down: from when to when, and how many
messages it caught up on.

The daemon notes that it is alive in ``<state>/watch/alive.json`` (version 1, ``{"version":
1, "alive_at": "...Z"}``) every :data:`BEAT_S` seconds. At the next start the last note is when
it went down; after the first catch-up pass the channel is told, when the gap was longer than
:data:`QUIET_GAP_S` or messages were caught up.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from discord_mcp.errors import DiscordError, StateError
from discord_mcp.runs.journal.model import parse_iso, utc_iso
from discord_mcp.state.files import off_loop, read_json, write_json
from discord_mcp.transport.rest import RestClient

log = logging.getLogger(__name__)

VERSION = 1
BEAT_S = 20.0
QUIET_GAP_S = 60.0
"""A restart quicker than this, with nothing to catch up, is not worth a message."""
NO_PINGS: dict[str, Any] = {"parse": []}


class Downtime:
    def __init__(
        self,
        home: Path,
        *,
        wall: Callable[[], float],
        beat: float = BEAT_S,
        machine: str | None = None,
    ) -> None:
        self.machine = machine
        """Named in the notice: several machines may share the channel (issue 27)."""
        self.path = home / "watch" / "alive.json"
        self._wall = wall
        self._beat = beat
        self.started_at = wall()
        self.down_since = self._last_alive()

    def _last_alive(self) -> float | None:
        try:
            document = read_json(self.path, max_version=VERSION)
        except StateError:
            return None
        moment = parse_iso(str((document or {}).get("alive_at") or "")) if document else None
        return moment.timestamp() if moment else None

    async def beat(self) -> None:
        """Note that we are alive, until cancelled."""
        while True:
            try:
                await off_loop(
                    write_json, self.path, {"version": VERSION, "alive_at": utc_iso(self._wall())}
                )
            except StateError as exc:
                log.warning("noting that discord-watch is alive failed: %s", exc)
            await asyncio.sleep(self._beat)

    def notice(self, caught_up: int) -> str | None:
        """The message for the channel, or None when there is nothing worth saying."""
        if self.down_since is None:
            return None  # the first start: nothing was missed
        gap = self.started_at - self.down_since
        if gap < QUIET_GAP_S and caught_up == 0:
            return None
        messages = "message" if caught_up == 1 else "messages"
        where = f" on `{self.machine}`" if self.machine else ""
        return (
            f"\U0001f50c discord-watch{where} was down from {_utc(self.down_since)} to "
            f"{_utc(self.started_at)} ({_span(gap)}); caught up on {caught_up} {messages}."
        )

    async def announce(self, rest: RestClient, channel_id: str, caught_up: int) -> None:
        text = self.notice(caught_up)
        if text is None:
            return
        try:
            await rest.send_text(channel_id, text, allowed_mentions=NO_PINGS)
        except DiscordError as exc:
            log.warning("saying that discord-watch was down failed: %s", exc)


def _utc(seconds: float) -> str:
    return f"{dt.datetime.fromtimestamp(seconds, tz=dt.UTC):%Y-%m-%d %H:%M} UTC"


def _span(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes = rest // 60
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{seconds % 60:02d}s" if minutes else f"{seconds}s"
