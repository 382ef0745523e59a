"""The state directories ``bench/history.py`` compares: today's work alone, and the same after a
year of history, both made through the product's own stores (never hand-written files).

*Today* (in both): a project, three pending questions, an answer that arrived while no session
listened, a few questions answered today (done, moved to the archive as discord-watch moves
them), two runs with their folders and journal, the inbox, the watch cursors.

*A year* (before today's, in the second only): ``decisions`` questions and approvals asked
over the year, answered, handed over and shown, then moved to the archive by the store's own
sweep (the upgrade of a directory written before the archive existed goes the same way); ``runs``
runs, each a session of the journal with three turns and a run folder with its request,
session, result, logs and transcript; the cursors discord-watch keeps for every thread it
watched. Building skips fsyncs (:class:`DecisionStore` ``durable=False``, the journal's
injected ``fsync``): what is timed is reading, and a year of fsyncs would take an hour.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from discord_mcp.decisions.model import Decision
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.inbox import Inbox, InboxItem
from discord_mcp.runs import TOOLS
from discord_mcp.runs.folders.folders import RunFolder, new_run_id
from discord_mcp.runs.journal.journal import Journal
from discord_mcp.runs.journal.model import utc_iso
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.watch.cursors import Cursors
from discord_mcp.watch.recovery import Alive, snowflake_at

DAY = 86400.0
SESSIONS = 40
"""Agent sessions over the year (their labels are in the decisions they asked)."""


@dataclass(frozen=True)
class World:
    """Where the state lives and what it is about (the same for both directories)."""

    home: Path
    project: Path
    channel_id: str
    owner_id: str
    now: float

    @property
    def project_key(self) -> str:
        return str(self.project.resolve())


@dataclass(frozen=True)
class Today:
    """What the measurements act on: the same ids in both directories."""

    routed_thread: str
    """The thread of a question answered today: the owner writes a note in it."""
    archive_probe: Decision
    """A final question whose thread holds another, still pending one."""
    away: Decision
    """An answer that arrived while no session listened."""


def _thread(at: float, n: int) -> str:
    return str(int(snowflake_at(at)) + n)


def _question(world: World, at: float, n: int, **fields: object) -> Decision:
    thread = _thread(at, n)
    moment = datetime.fromtimestamp(at, UTC)
    stamp = moment.isoformat(timespec="milliseconds")
    values: dict[str, object] = {
        "id": f"{moment:%Y%m%d-%H%M%S}-{n:06x}",
        "project": "app",
        "project_key": world.project_key,
        "session": f"s{n % SESSIONS:07d}",
        "question": f"Merge the branch for issue {n} now, or wait for the review?",
        "context": "The tests pass on CI; the reviewer asked for one more look at the parser.",
        "options": ("Merge now", "Wait for the review", "Close it"),
        "channel_id": world.channel_id,
        "thread_id": thread,
        "card_message_id": str(int(thread) + 1),
        "thread_url": f"https://discord.com/channels/1/{thread}",
        "asked_at": stamp,
        "own_thread": True,
        "card_buttons": True,
        "owner_ids": (world.owner_id,),
        "asker_lease": f"{4000 + n % 500}-{n:08x}",
    }
    values.update(fields)
    return Decision(**values)  # type: ignore[arg-type]


def _answered(world: World, draft: Decision, at: float) -> Decision:
    return draft.replace(
        status="answered",
        answer=draft.options[0] if draft.options else "yes",
        selected_option=draft.options[0] if draft.options else None,
        selected_index=0 if draft.options else None,
        answered_by=world.owner_id,
        answered_by_name="owner",
        via="button",
        answered_at=datetime.fromtimestamp(at + 300, UTC).isoformat(timespec="milliseconds"),
        delivered=True,
        final_shown=True,
        asker_waiting=True,
        seen_message_id=str(int(draft.card_message_id) + 5),
    )


def _approval(world: World, draft: Decision, n: int) -> Decision:
    request = {
        "client": "claude",
        "tool_name": "Bash",
        "tool_input": {"command": f"npm run build -- --filter pkg-{n % 17}"},
        "session_id": f"cc-{n % SESSIONS:04d}",
        "cwd": str(world.project),
        "route": "hook",
        "event": "PermissionRequest",
        "fingerprint": f"{n:016x}",
        "subject": f"{n % 997:016x}",
    }
    return draft.replace(
        kind="approval",
        question="Run `npm run build`?",
        options=("Allow", "Deny"),
        approval=request,
        answer="allow",
        selected_option=None,
        selected_index=None,
        scope="once",
    )


def build_today(world: World) -> Today:
    """Today's work (module doc), in ``world.home``."""
    now = world.now
    registry = ProjectRegistry(world.home, allowed_roots=[world.project.parent])
    registry.add("app", world.project, TOOLS, "claude")
    store = DecisionStore(world.home, durable=False)
    for n in range(3):  # pending
        store.create(_question(world, now - 3600 * (n + 1), 900_001 + n))
    away = _answered(world, _question(world, now - 7200, 900_010), now - 7200).replace(
        delivered=False, asker_waiting=False
    )
    store.create(away)
    answered = [
        _answered(world, _question(world, now - 600 * (n + 2), 900_020 + n), now - 600 * (n + 2))
        for n in range(5)
    ]
    for decision in answered:
        store.create(decision)
    probe_thread = answered[0].thread_id
    store.create(  # still pending, in the thread of the first answered one
        _question(world, now - 60, 900_030, thread_id=probe_thread, own_thread=False)
    )
    store.sweep()
    cursors = Cursors(world.home)  # what discord-watch watched today
    cursors.watch(world.channel_id, start=snowflake_at(now - 24 * 3600))
    cursors.advance(world.channel_id, snowflake_at(now - 60))
    for decision in [*store.open_decisions(), *answered]:
        cursors.watch(decision.thread_id, parent_id=world.channel_id, start=None)
    for thread in runs(world, 2, start=now - 3 * 3600, span=3 * 3600, first=900_100):
        cursors.watch(thread, parent_id=world.channel_id, start=None)
    asyncio.run(cursors.flush())
    Inbox(world.home).add(
        [
            InboxItem(
                message_id=str(int(snowflake_at(now - 60 * n)) + n),
                channel_id=world.channel_id,
                thread_id=None,
                author_id=world.owner_id,
                author="owner",
                content=f"remember to update the changelog ({n})",
                timestamp=utc_iso(now - 60 * n),
            )
            for n in range(1, 6)
        ]
    )
    asyncio.run(Alive(world.home, wall=lambda: now).record(caught_up_at=now - 30, now=True))
    return Today(
        routed_thread=answered[1].thread_id, archive_probe=answered[0], away=store.load(away.id)
    )


def build_year(world: World, decisions: int, run_count: int, *, last_days: int = 365) -> None:
    """A year of history before today (module doc), in ``world.home``, day by day: each day's
    questions are asked and answered, its runs made, and at its end discord-watch's sweep
    moves what is done to the archive and its pass lets the day's threads rest (Discord has
    archived them: a question's thread once it is done, a run's after a day).

    ``last_days``: only the last days of that same year (the same decisions and runs, ids and
    times), e.g. the week discord-watch watches a decision's thread after its question."""
    start = world.now - 365 * DAY
    store = DecisionStore(world.home, durable=False)
    cursors = Cursors(world.home)
    asyncio.run(cursors.load_resting())
    per_day_decisions = decisions / 365
    per_day_runs = run_count / 365
    first_day = 365 - last_days
    made = round(per_day_decisions * first_day)
    ran = round(per_day_runs * first_day)
    for day in range(first_day, 365):
        day_start = start + day * DAY
        threads = []
        while made < min(decisions, round(per_day_decisions * (day + 1))):
            at = day_start + DAY * (made - per_day_decisions * day) / max(per_day_decisions, 1)
            draft = _question(world, at, made)
            decision = _answered(world, draft, at)
            if made % 10 == 0:  # a tenth are tool approvals
                decision = _approval(world, decision, made)
            store.create(decision)
            cursors.watch(
                decision.thread_id, parent_id=world.channel_id, start=draft.card_message_id
            )
            cursors.advance(decision.thread_id, decision.seen_message_id or draft.card_message_id)
            threads.append(decision.thread_id)
            made += 1
        count = round(per_day_runs * (day + 1)) - ran
        if count > 0:
            for thread in runs(world, count, start=day_start, span=DAY, first=ran):
                cursors.watch(thread, parent_id=world.channel_id, start=None)
            ran += count
        store.sweep(now=datetime.fromtimestamp(day_start + DAY, UTC))
        cursors.rest(day_start + DAY, active=set(), keep=lambda _thread: False)
    asyncio.run(cursors.flush())


def runs(world: World, count: int, *, start: float, span: float, first: int) -> list[str]:
    """``count`` runs of three turns each, in the journal and in their folders; their threads."""
    clock = _Clock(start)
    journal = Journal(
        world.home / "runs",
        wall_clock=clock,
        monotonic=clock,
        snapshot_every_events=50_000,
        snapshot_every_seconds=3600.0,
        fsync=lambda _fd: None,
    )
    journal.open()
    threads = []
    prompt = "Fix the failing tests in the parser module and explain the change. " * 2
    excerpt = "I fixed the off-by-one in the tokenizer and added a regression test. " * 4
    for n in range(count):
        at = start + span * n / max(1, count)
        clock.now = at
        thread = _thread(at, first + n + 500_000)
        run_id = new_run_id(at)
        journal.append(
            "SessionCreated",
            {"thread_id": thread, "project_name": "app", "tool": "claude", "run_id": run_id},
        )
        folder = RunFolder.of(world.home, run_id)
        folder.make()
        folder.write(
            folder.request,
            {
                "run_id": run_id,
                "project": "app",
                "engine": "claude",
                "mode": "new",
                "session_id": None,
                "message": prompt,
                "created_at": utc_iso(at),
                "constraints": {"allow_network": False, "timeout_s": None},
            },
        )
        turns = []
        for turn in range(1, 4):
            number = journal.state.job_counter + 1
            job = f"job_{number:07d}"
            message = str(int(thread) + turn)
            journal.append(
                "JobEnqueued",
                {
                    "job_id": job,
                    "number": number,
                    "thread_id": thread,
                    "message_id": message,
                    "author": world.owner_id,
                    "prompt": prompt,
                    "attempt": 1,
                    "retry_of": None,
                    "dedupe_key": f"{thread}:{message}",
                },
            )
            journal.append(
                "JobStarted",
                {"job_id": job, "tool": "claude", "project_name": "app", "resume_key": None},
            )
            journal.append(
                "JobProcessStarted", {"job_id": job, "pid": 40000, "start_time": 1, "boot_id": "b"}
            )
            journal.append(
                "JobCompleted",
                {
                    "job_id": job,
                    "state": "success",
                    "session_key": f"session-{thread}",
                    "session_key_action": "set",
                    "result_excerpt": excerpt,
                    "usage": {"input_tokens": 1200, "output_tokens": 300, "total_tokens": 1500},
                    "cost_usd": 0.0123,
                    "exit_code": 0,
                    "duration": 42.5,
                },
            )
            folder.stdout(turn).write_text('{"type": "result", "result": "done"}\n', "utf-8")
            folder.stderr(turn).write_text("", "utf-8")
            turns.append({"turn": turn, "job_id": job, "status": "completed", "summary": excerpt})
        folder.events.write_text(f"# Run {run_id}\n\n{prompt}\n\n{excerpt}\n", "utf-8")
        folder.write(
            folder.session,
            {
                "run_id": run_id,
                "engine": "claude",
                "session_id": f"session-{thread}",
                "state": "completed",
                "pid": None,
                "created_at": utc_iso(at),
                "last_active_at": utc_iso(at + 600),
            },
        )
        folder.write(
            folder.result,
            {"run_id": run_id, "status": "completed", "engine": "claude", "turns": turns},
        )
        threads.append(thread)
    journal.snapshot()
    journal.close()
    return threads


class _Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
