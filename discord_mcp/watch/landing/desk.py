"""The daemon's side of reviewing and landing runs (issue 35): the changes card after a run's
last turn, its buttons, ``/diff``, and ``discord-watch merge|pr|discard`` from a shell.

Theory. When a run is at rest (its last job finished, nothing waiting) and its folder has
recorded the turn (the worktree committed, the patch written), its thread gets a changes card
(:mod:`.card`) below the answer. A click is answered within Discord's 3 seconds: a stranger is
refused privately (and logged); another machine's card is left to it; Discard first turns the
card into its confirmation (Discard it / Keep it); Show diff, Merge, Open PR and Discard it are
acknowledged at once (the card stays as it is), then done, and the outcome is said in the
thread and shown on the card. The shell's requests take the same path, so the card of a run
merged from a terminal says so too. Every landing goes through the engine
(:meth:`~discord_mcp.runs.engine.landed.EngineLanding.land`): journaled, and recorded in the run
folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from discord_mcp.decisions.interactive import ephemeral
from discord_mcp.errors import DiscordError, RunError, StateError
from discord_mcp.runs import JobView, SessionView
from discord_mcp.runs.engine.engine import RunEngine
from discord_mcp.runs.folders.folders import RunFolder, read_document
from discord_mcp.runs.git import worktrees
from discord_mcp.runs.git.command import GitFailed
from discord_mcp.state.files import off_loop
from discord_mcp.tasks import cancel_and_wait
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.landing import card as cards
from discord_mcp.watch.landing.diffs import patch_posts

log = logging.getLogger(__name__)

MESSAGE_COMPONENT = 3
DEFERRED_UPDATE_MESSAGE, UPDATE_MESSAGE = 6, 7
CARD_WITHIN_S = 90.0
"""How long the card waits for the run folder to record the last turn."""
NO_PINGS: dict[str, Any] = {"parse": []}
ACTIONS = {"merge": "merge", "pr": "pr", "discard-yes": "discard"}


class LandingDesk:
    """Cards, clicks and landings for one daemon.

    Args:
        engine: the run engine (its landings are journaled there).
        home: the state directory.
        rest: the REST client (None: local mode, nothing reaches Discord).
        machine: this machine's name (its cards name it; others' are left alone).
        owners: who may press the buttons.
        secrets: literal secrets a posted patch must not carry (the bot's token).
    """

    def __init__(
        self,
        engine: RunEngine,
        home: Path,
        *,
        rest: RestClient | None = None,
        machine: str = "",
        owners: frozenset[str] = frozenset(),
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.engine = engine
        self.home = home
        self.rest = rest
        self.machine = machine
        self.owners = owners
        self.secrets = secrets
        self._tasks: set[asyncio.Task[None]] = set()

    def _spawn(self, work: Any, name: str) -> None:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        for task in list(self._tasks):
            await cancel_and_wait(task, within=5)

    # -- the card

    def after_final(self, job: JobView, session: SessionView) -> None:
        """The notifier posted a job's final message: post the run's card once it is
        recorded (in the background: the notifier's call is bounded)."""
        if self.rest is None or session.run_id is None:
            return
        if session.running_job_id is not None or session.queued_job_ids:
            return  # more turns come: the card follows the last
        self._spawn(self._post_card(job, session), f"changes-card-{job.job_id}")

    async def _post_card(self, job: JobView, session: SessionView) -> None:
        assert self.rest is not None
        run_id = str(session.run_id)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CARD_WITHIN_S):
                await self.engine.recorder.recorded(job.job_id)
        try:
            shown = await self.card_of(run_id)
            if shown is None:
                return
            text, components = shown
            sent = await self.rest.send_text(
                session.thread_id, text, components=components, allowed_mentions=NO_PINGS
            )
        except (DiscordError, StateError, OSError) as exc:
            log.warning("posting the changes card of run %s failed: %s", run_id, exc)
            return
        await self._remember_card(run_id, session.thread_id, str(sent[-1]["id"]))

    async def card_of(
        self, run_id: str, *, extra: str | None = None
    ) -> tuple[str, list[dict[str, Any]]] | None:
        """The run's card and buttons as they stand now (None: nothing to show)."""
        record = await off_loop(worktrees.load, self.home, run_id)
        folder = RunFolder.of(self.home, run_id)
        has_patch = await off_loop(_has_patch, folder.patch)
        if record is not None:
            text = cards.card_text(record, extra=extra)
            return text, cards.components(record, run_id, self.machine, has_patch=has_patch)
        result = await off_loop(read_document, folder.result) or {}
        changes = result.get("changes") or {}
        if not has_patch or not changes.get("files"):
            return None
        return (
            cards.folder_card_text(run_id, changes),
            cards.components(None, run_id, self.machine, has_patch=True),
        )

    async def _remember_card(self, run_id: str, channel_id: str, message_id: str) -> None:
        def remember() -> None:
            record = worktrees.load(self.home, run_id)
            if record is not None:
                record["card"] = {"channel_id": channel_id, "message_id": message_id}
                worktrees.save(self.home, record)

        with contextlib.suppress(StateError, OSError):
            await off_loop(remember)

    async def _refresh_card(self, run_id: str, where: tuple[str, str] | None) -> None:
        """Show the run as it stands on its card (the one clicked, else the one posted)."""
        if self.rest is None:
            return
        if where is None:
            record = await off_loop(worktrees.load, self.home, run_id) or {}
            card = record.get("card") or {}
            if not card.get("channel_id") or not card.get("message_id"):
                return
            where = (str(card["channel_id"]), str(card["message_id"]))
        shown = await self.card_of(run_id)
        if shown is None:
            return
        text, components = shown
        try:
            await self.rest.edit_message(
                where[0], where[1], content=text, components=components, allowed_mentions=NO_PINGS
            )
        except DiscordError as exc:
            log.warning("updating the changes card of run %s failed: %s", run_id, exc)

    # -- clicks

    @staticmethod
    def handles(data: Mapping[str, Any]) -> bool:
        """Whether ``data`` is a click on a changes card."""
        body = data.get("data") or {}
        return data.get("type") == MESSAGE_COMPONENT and (
            cards.click_of(str(body.get("custom_id") or "")) is not None
        )

    async def on_interaction(self, data: dict[str, Any]) -> None:
        """Serve a click on a changes card; returns at once (the work goes on in a task)."""
        self._spawn(self._serve(data), f"landing-click-{data.get('id')}")

    async def _serve(self, data: dict[str, Any]) -> None:
        try:
            await self._click(data)
        except DiscordError as exc:
            log.warning("answering a click on a changes card failed: %s", exc)
        except Exception:
            log.exception("serving a click on a changes card failed")

    async def _click(self, data: dict[str, Any]) -> None:
        assert self.rest is not None
        found = cards.click_of(str((data.get("data") or {}).get("custom_id") or ""))
        if found is None:
            return
        run_id, part, machine = found
        if machine is not None and machine != self.machine:
            return  # another machine's run: it answers
        interaction, token = str(data["id"]), str(data["token"])
        member = data.get("member") if isinstance(data.get("member"), dict) else None
        user = (member or {}).get("user") or data.get("user") or {}
        user_id = str(user.get("id") or "")
        if user_id not in self.owners:
            log.warning("refused %s on run %s from %s", part, run_id, user_id)
            owners = ", ".join(f"<@{o}>" for o in sorted(self.owners))
            body = ephemeral(f"**E_OWNER_ONLY**: only {owners} can review and land runs.")
            await self.rest.create_interaction_response(interaction, token, 4, body["data"])
            return
        message = data.get("message") or {}
        where = (str(data.get("channel_id") or message.get("channel_id")), str(message.get("id")))
        record = await off_loop(worktrees.load, self.home, run_id)
        if part in ("discard", "discard-no"):
            await self._confirm(interaction, token, run_id, record, part == "discard")
            return
        await self.rest.create_interaction_response(interaction, token, DEFERRED_UPDATE_MESSAGE)
        if part == "diff":
            await self.show_diff(run_id, where[0])
            return
        with contextlib.suppress(RunError):  # said in the thread already
            await self.act(run_id, ACTIONS[part], by=user_id, via="button", card=where)

    async def _confirm(
        self,
        interaction: str,
        token: str,
        run_id: str,
        record: Mapping[str, Any] | None,
        asking: bool,
    ) -> None:
        """Discard asks first: the card becomes its question, and back."""
        assert self.rest is not None
        if record is None or (record.get("landed") or {}).get("action") in worktrees.LANDED_GONE:
            body = ephemeral(f"Run `{run_id}` has no worktree to discard any more.")
            await self.rest.create_interaction_response(interaction, token, 4, body["data"])
            return
        extra = cards.confirm_text(record) if asking else None
        text = cards.card_text(record, extra=extra)
        if asking:
            components = cards.confirm_components(run_id, self.machine)
        else:
            has_patch = await off_loop(_has_patch, RunFolder.of(self.home, run_id).patch)
            components = cards.components(record, run_id, self.machine, has_patch=has_patch)
        await self.rest.create_interaction_response(
            interaction,
            token,
            UPDATE_MESSAGE,
            {"content": text, "components": components, "allowed_mentions": NO_PINGS},
        )

    # -- doing it

    async def act(
        self,
        run_id: str,
        action: str,
        *,
        by: str,
        via: str,
        squash: bool = False,
        card: tuple[str, str] | None = None,
    ) -> dict[str, Any]:
        """Merge, open a PR for, or discard a run; say so in its thread and on its card.

        Raises:
            RunError: why nothing was done (said in the thread too).
        """
        session = self.engine.session_of_run(run_id)
        thread = session.thread_id if session is not None else (card[0] if card else None)
        try:
            done = await self.engine.land(run_id, action, by=by, via=via, squash=squash)
        except RunError as exc:
            await self._say(thread, f"⚠️ **{exc.code}**: {exc.message}")
            raise
        await self._refresh_card(run_id, card)
        who = f"<@{by}>" if by.isdigit() else f"**{by}**"
        await self._say(thread, f"{done.message} ({who}, {via}).")
        return {
            "run_id": run_id,
            "action": action,
            "message": done.message,
            "landed": dict(done.landed or {}),
        }

    async def _say(self, thread: str | None, text: str) -> None:
        if self.rest is None or thread is None or not thread.isdigit():
            return  # local mode: the run's thread is its run id, nothing reaches Discord
        with contextlib.suppress(DiscordError):
            await self.rest.send_text(thread, text[:1900], allowed_mentions=NO_PINGS)

    async def show_diff(self, run_id: str, channel_id: str) -> None:
        """Post the run's patch in ``channel_id`` (see :mod:`.diffs`)."""
        assert self.rest is not None
        await show_diff(self.rest, self.home, run_id, channel_id, self.secrets)


async def run_patch(home: Path, run_id: str) -> bytes:
    """The run's change now: its worktree's branch from where it started (committed at each
    turn's end), else its ``changes.patch`` (empty: none)."""
    record = await off_loop(worktrees.load, home, run_id)
    if record is not None and not record.get("removed_at"):
        with contextlib.suppress(GitFailed):
            return await worktrees.patch(record)
    try:
        return await off_loop(RunFolder.of(home, run_id).patch.read_bytes)
    except OSError:
        return b""


async def show_diff(
    rest: RestClient, home: Path, run_id: str, channel_id: str, secrets: tuple[str, ...]
) -> None:
    """Post run ``run_id``'s patch in ``channel_id``: code blocks, or attached files."""
    patch = await run_patch(home, run_id)
    result = await off_loop(read_document, RunFolder.of(home, run_id).result) or {}
    counts = cards.counts_of(result.get("changes"))
    head = f"**Diff of run `{run_id}`**{counts}"
    for post in patch_posts(run_id, patch, head=head, known_secrets=secrets):
        if post.files:
            await rest.create_message(
                channel_id, post.content or None, files=post.files, allowed_mentions=NO_PINGS
            )
        else:
            await rest.send_text(channel_id, post.content, allowed_mentions=NO_PINGS)


def _has_patch(path: Path) -> bool:
    try:
        return path.stat().st_size > 0
    except OSError:
        return False
