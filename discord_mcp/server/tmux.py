"""The asking agent's tmux pane: its title says a decision waits, and (opt-in) a late answer is
announced in it.

Only when the server runs inside tmux (``TMUX`` and ``TMUX_PANE`` set, as tmux sets them for
every process in a pane, so for the agent's CLI and the servers it starts). Nothing is ever
written to stdout (the MCP protocol's): tmux is told through its own commands, run from argv
lists (never a shell), their output captured.

- **Title.** While a decision this process asked is pending, the pane's title (tmux's
  ``pane_title``, shown by ``#{pane_title}`` in the status line or the pane border) says so:
  ``⏳ waiting for the owner: <question>``. When none is pending any more, the title it had
  before comes back, unless something else (the agent's CLI) retitled the pane meanwhile.
- **Nudge** (``DISCORD_MCP_TMUX_NUDGE=1``). An answer that arrives while the agent sits idle
  (no call waits on the decision, and this process, the asker, is alive) is typed into the
  pane once, followed by Enter, as the next thing the agent reads. The typed text is a fixed
  sentence with the decision id (which has a fixed form) telling the agent to call
  ``wait_decision``; the owner's words never are, because text typed into an agent's prompt is
  an instruction and Discord content is untrusted.

Decisions are watched through their files (another process may find the answer); one this
process asked and nobody waits on is also polled in Discord, as a waiting call would.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import subprocess
import time
from collections.abc import Awaitable, Callable, Mapping

from discord_mcp.decisions.service import SAFETY_POLL_S, DecisionService
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.errors import DecisionNotFound, DiscordError, StateError, Unauthorized
from discord_mcp.state.files import off_loop
from discord_mcp.state.leases import try_exclusive

log = logging.getLogger(__name__)

LOOK_EVERY_S = 0.5
"""How often the watched decisions' files are read (cheap: a few small files)."""
TMUX_TIMEOUT_S = 5.0
TITLE_PREFIX = "\u23f3 waiting for the owner: "
_PANE = re.compile(r"^%[0-9]+$")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f]")

Runner = Callable[[list[str]], Awaitable[tuple[int, str]]]


def nudge_text(decision_id: str) -> str:
    """The sentence typed into the pane: fixed, naming only the decision's id. (Not
    ``check_pending``: it hands out only answers whose asking session is gone, and this
    session is alive.)"""
    return (
        f"discord-mcp: your owner answered decision {decision_id} in Discord. Call "
        f'wait_decision with decision_id "{decision_id}" to read the answer.'
    )


def title_text(questions: list[str]) -> str:
    first = _UNSAFE.sub(" ", " ".join(questions[0].split()))
    if len(first) > 60:
        first = first[:59] + "…"
    more = f" (+{len(questions) - 1} more)" if len(questions) > 1 else ""
    return f"{TITLE_PREFIX}{first}{more}"


async def run_tmux(argv: list[str]) -> tuple[int, str]:
    """Run one tmux command; its exit status and stdout (never ours)."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(TMUX_TIMEOUT_S):
            out, _ = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        return -1, ""
    return process.returncode or 0, out.decode("utf-8", "replace")


class Pane:
    """One tmux pane, told through tmux's commands."""

    def __init__(self, pane_id: str, run: Runner = run_tmux) -> None:
        self.pane_id = pane_id
        self._run = run

    async def _tmux(self, *args: str) -> tuple[int, str]:
        try:
            return await self._run(["tmux", *args])
        except OSError as exc:  # no tmux binary after all
            log.warning("tmux could not run: %s", exc)
            return -1, ""

    async def title(self) -> str | None:
        status, out = await self._tmux("display-message", "-p", "-t", self.pane_id, "#{pane_title}")
        return out.rstrip("\n") if status == 0 else None

    async def set_title(self, title: str) -> bool:
        status, _ = await self._tmux("select-pane", "-t", self.pane_id, "-T", title)
        return status == 0

    async def type_line(self, text: str) -> bool:
        """Type ``text`` literally, then Enter."""
        status, _ = await self._tmux("send-keys", "-t", self.pane_id, "-l", "--", text)
        if status != 0:
            return False
        status, _ = await self._tmux("send-keys", "-t", self.pane_id, "Enter")
        return status == 0


def pane_from(environ: Mapping[str, str]) -> Pane | None:
    """The pane this process runs in, if it runs inside tmux."""
    pane_id = environ.get("TMUX_PANE", "").strip()
    if not environ.get("TMUX", "").strip() or not _PANE.match(pane_id):
        return None
    return Pane(pane_id)


def _nobody_waits(store: DecisionStore, decision_id: str) -> bool:
    """Whether no call (in any process) is waiting on the decision right now."""
    path = store.path(decision_id)
    probe = try_exclusive(path.with_name(path.name + ".wait"))
    if probe is None:
        return False
    probe.release()
    return True


class PaneWatcher:
    """Keeps the pane's title in step with this process's pending decisions, and nudges.

    Args:
        nudge: type a notice into the pane when an answer arrives while the agent is idle.
        poll_every: how often a pending decision nobody waits on is looked for in Discord.
        live: whether a gateway is live (idle decisions are then polled only as a safety net).
        clock: monotonic seconds (injectable).
    """

    def __init__(
        self,
        *,
        pane: Pane,
        service: DecisionService,
        nudge: bool,
        poll_every: float,
        live: Callable[[], bool] = lambda: False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._pane = pane
        self._service = service
        self._nudge = nudge
        self._poll_every = poll_every
        self._live = live
        self._clock = clock
        self._tracked: dict[str, float] = {}  # decision id -> when to poll it next
        self._idle_answers: set[str] = set()  # answered, undelivered, unwaited: seen once
        self._woken = asyncio.Event()
        self._ours: str | None = None  # the title we set
        self._before: str | None = None  # the title the pane had before

    def track(self, decision_id: str) -> None:
        """Watch a decision this process asked."""
        self._tracked.setdefault(decision_id, self._clock())
        self._woken.set()

    async def run(self) -> None:
        """Watch until cancelled; the pane's title is restored on the way out."""
        try:
            while True:
                await self.look()
                self._woken.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(LOOK_EVERY_S):
                        await self._woken.wait()
        finally:
            await self._restore()

    async def look(self) -> None:
        """Once: read the watched decisions, poll idle ones that are due, nudge, retitle."""
        store = self._service.store
        pending: list[str] = []
        for decision_id, poll_at in list(self._tracked.items()):
            try:
                decision = await off_loop(store.load, decision_id)
                if decision.status == "pending" and self._clock() >= poll_at:
                    if await off_loop(_nobody_waits, store, decision_id):
                        decision = await self._service.poll(decision)
                    self._tracked[decision_id] = self._clock() + self._poll_interval()
            except (DecisionNotFound, StateError) as exc:
                log.info("no longer watching decision %s: %s", decision_id, exc)
                del self._tracked[decision_id]
                continue
            except Unauthorized:
                raise
            except DiscordError as exc:
                log.warning("polling decision %s failed: %s", decision_id, exc)
                continue
            if decision.status == "pending":
                pending.append(decision.question)
                continue
            if await self._answered_while_idle(decision_id, decision.status, decision.delivered):
                await self._pane.type_line(nudge_text(decision_id))
                log.info("told the agent's tmux pane that %s was answered", decision_id)
            if decision_id not in self._idle_answers:
                del self._tracked[decision_id]
        if pending:
            await self._show(title_text(pending))
        else:
            await self._restore()

    async def _answered_while_idle(self, decision_id: str, status: str, delivered: bool) -> bool:
        """True once an answer nobody received has stayed so for two looks in a row.

        A call that just returned the answer marks it delivered a moment later: one look could
        fall in between, two looks half a second apart cannot.
        """
        if not self._nudge or status != "answered" or delivered:
            self._idle_answers.discard(decision_id)
            return False
        if not await off_loop(_nobody_waits, self._service.store, decision_id):
            self._idle_answers.discard(decision_id)
            return False
        if decision_id in self._idle_answers:
            self._idle_answers.discard(decision_id)
            return True
        self._idle_answers.add(decision_id)
        return False

    def _poll_interval(self) -> float:
        return max(self._poll_every, SAFETY_POLL_S) if self._live() else self._poll_every

    async def _show(self, title: str) -> None:
        if title == self._ours:
            return
        if self._ours is None:
            self._before = await self._pane.title()
        if await self._pane.set_title(title):
            self._ours = title

    async def _restore(self) -> None:
        if self._ours is None:
            return
        ours, self._ours = self._ours, None
        # The agent's CLI may have retitled the pane since: its title wins.
        if self._before is not None and await self._pane.title() == ours:
            await self._pane.set_title(self._before)
