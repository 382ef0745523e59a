"""A year of history costs nothing (issue 38): the hot paths with a year behind them, beside the
same work on a state directory that holds only today's and the last week's.

Two state directories (bench/history_state.py), both with today's work: *the last week*,
which also holds the last 7 days of the year below (discord-watch watches a decision's thread
for a week after its question, by design: that work follows how busy the week was, not how
long the history is), and *a year*: 100,000 decisions, 10,000 run folders and a year of
journal and watch cursors, the same last week included, all made through the product's own
stores. What a year adds is then only the 51 older weeks, and a hot path that reads them shows.
Measured on both, alternating so both see the same machine:

- routing one incoming message: what discord-watch reads to route an owner's note in a thread
  (the thread's decisions, open or done; :func:`discord_mcp.watch.quiet.thread_decisions`)
  and the route, with a cold store (a daemon that just started);
- ``archive_if_done`` for a question whose thread is still in use (what it reads to decide);
- the SessionStart and Stop hooks, cold (a new process each, as the CLIs run them);
- the MCP server, spawn to ``tools/list`` answered;
- ``discord-watch``, spawn to ready (its first catch-up done, ``watch/alive.json``), against
  a local emulator; ``DISCORD_MCP_KEEP_RUNS=all`` so every start sees the same year;
- ``check_pending`` on a running server.

Two figures each, after a year beside the last week alone:

- the distinct files it opens under the state directory (bench/reads.py): budget, no more
  than the last week's (give or take 2 % or two files: a running process's background work).
  The machine's load cannot move this figure; a path that reads history opens more.
- its cost, the best of the repeats (noise only ever adds; ``timeit``'s rule): the CPU it took
  where that is counted (a process's start, a few routes), else its time (``check_pending``,
  a server called in turn with the other, so each pair sees the same machine); budget within
  1.2x of the last week's. A row over budget is measured again, up to three times, and judged
  on all its samples, so one busy second beside a test suite is not a verdict; a cost that
  grows with history stays over. The time each took is shown beside it.

Exit 1 over budget, 2 when something measured does not work (a server that exits, a hook that
fails).

    .venv/bin/python -m bench.history [--quick] [--repeats N] [--keep DIR] [--server-command CMD]

``--keep DIR`` builds the two state directories in DIR and leaves them there; a later run with
the same DIR and sizes measures them again without building (a full-size build takes the best
part of an hour here). A kept world older than :data:`KEEP_FOR_S` is built anew: its "today"
would no longer be today.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.history_state import Today, World, build_today, build_year
from bench.mcp_stdio import (
    OURS,
    OVER_BUDGET,
    BenchFailure,
    StdioServer,
    add_server_option,
    our_tools,
    parse_arguments,
    run_main,
    server_argv,
)
from bench.reads import Opens, counted_env, distinct, opened, process_cpu
from discord_mcp.config import Secret
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.decisions.threads import archive_if_done
from discord_mcp.emulator import RunningEmulator, start_in_thread
from discord_mcp.runs.folders.folders import is_run_id
from discord_mcp.runs.journal.journal import load
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.quiet import DECISION_THREAD_DAYS, thread_decisions
from discord_mcp.watch.routing import destination

BUDGET_RATIO = 1.2
AGAIN = 3
"""Rounds a row over its time budget is measured again before it is called over."""
QUICK = ["--decisions", "1000", "--runs", "100", "--repeats", "2"]
"""The quick mode (tests/test_benchmarks.py): a small year, few repeats."""
ROUTES_PER_SAMPLE = 50
WATCH = [sys.executable, "-c", "from discord_mcp.watch.cli import main; raise SystemExit(main())"]
READY_WITHIN_S = 120.0
KEEP_FOR_S = 12 * 3600.0
"""How long a world kept with ``--keep`` is measured again before it is built anew."""


def env_for(world: World, emulator: RunningEmulator) -> dict[str, str]:
    return {
        **os.environ,
        "DISCORD_BOT_TOKEN": emulator.token,
        "DISCORD_CHANNEL_ID": emulator.channel_id,
        "DISCORD_OWNER_IDS": emulator.owner_user_id,
        "DISCORD_API_BASE": emulator.api_base,
        "DISCORD_MCP_HOME": str(world.home),
        "DISCORD_WATCH_ROOTS": str(world.project.parent),
        "DISCORD_MCP_KEEP_RUNS": "all",
        "POLL_INTERVAL_SECONDS": "1",
    }


# ---- what is measured ------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    seconds: float
    opens: float
    """Files opened under the state directory (per operation)."""
    cpu: float | None = None
    """CPU seconds it took (user and system; None: too short for the clock that counts it)."""


_counter = 0


def _reads_file(world: World) -> Path:
    global _counter
    _counter += 1
    out = world.home.parent / f"reads-{_counter}.txt"
    out.unlink(missing_ok=True)  # a world kept from an earlier run (--keep) has its files
    return out


def route_one(world: World, thread: str) -> Sample:
    """Seconds to route one owner's note in ``thread``, a cold store each time (mean of a few)."""
    message = {
        "id": str(int(thread) + 10_000),
        "channel_id": thread,
        "author": {"id": world.owner_id},
        "content": "and tag the release when it is merged",
        "type": 0,
    }

    async def routes() -> tuple[float, float]:
        cpu = time.process_time()
        start = time.perf_counter()
        for _ in range(ROUTES_PER_SAMPLE):
            store = DecisionStore(world.home)
            decisions = await thread_decisions(store, thread, world.channel_id)
            route = destination(
                message,
                thread,
                decisions,
                channel=world.channel_id,
                owners={world.owner_id},
                run_thread=False,
            )
            if route.kind != "inbox" or route.project_key != world.project_key:
                raise BenchFailure(f"the note was routed as {route}, not to the project's inbox")
        took, cpu = time.perf_counter() - start, time.process_time() - cpu
        return took / ROUTES_PER_SAMPLE, cpu / ROUTES_PER_SAMPLE

    with Opens.instance().counting(world.home) as paths:
        took, cpu = asyncio.run(routes())
    return Sample(took, len(distinct(paths)), cpu)  # each route, a cold store: the same files


def archive_check(world: World, decision_id: str) -> Sample:
    """Seconds for ``archive_if_done`` to find the thread still in use (a cold store each time,
    mean of a few)."""

    async def check() -> tuple[float, float]:
        token = Secret("bench.token.value")  # never used: the thread is still in use
        async with RestClient(token, api_base="http://127.0.0.1:9/api/v10") as rest:
            took = cpu = 0.0
            for _ in range(ROUTES_PER_SAMPLE):
                store = DecisionStore(world.home)
                decision = store.load(decision_id)
                cpu_start, start = time.process_time(), time.perf_counter()
                archived = await archive_if_done(store, rest, decision)
                took += time.perf_counter() - start
                cpu += time.process_time() - cpu_start
                if archived:
                    raise BenchFailure("archive_if_done archived a thread with a pending question")
        return took / ROUTES_PER_SAMPLE, cpu / ROUTES_PER_SAMPLE

    with Opens.instance().counting(world.home) as paths:
        took, cpu = asyncio.run(check())
    return Sample(took, len(distinct(paths)), cpu)  # each check, a cold store: the same files


def hook(world: World, env: dict[str, str], event: str, payload: dict[str, Any]) -> Sample:
    """Seconds from spawning ``discord-mcp hook <event>`` to its exit."""
    reads = _reads_file(world)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [*OURS, "hook", event],
        input=json.dumps(payload).encode(),
        env=counted_env(env, reads),
        cwd=world.project,
        capture_output=True,
        timeout=60,
        check=False,
    )
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise BenchFailure(f"the {event} hook exited {done.returncode}: {done.stderr[-400:]!r}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Sample(took, len(distinct(opened(reads))), cpu)


def server_start(argv: list[str], env: dict[str, str], world: World) -> Sample:
    reads = _reads_file(world)
    start = time.perf_counter()
    counted = counted_env({**env, "PROJECT_NAME": "bench"}, reads)
    with StdioServer(argv, counted, "discord-mcp") as server:
        server.list_tools(our_tools())
        took = time.perf_counter() - start
        return Sample(took, len(distinct(opened(reads))), process_cpu(server.pid))


PENDING_SAMPLES = 15
"""check_pending takes milliseconds: at least this many calls, so one slow call is no median."""
SWEPT = "the gateway holder removed"
SETTLE_S = 60.0


def _said(log: Path, line: str) -> int:
    try:
        return log.read_text(encoding="utf-8", errors="replace").count(line)
    except FileNotFoundError:
        return 0


class PendingCalls:
    """``check_pending`` on one running server; :meth:`call` times one call (the first call, and
    the gateway holder's one-off walk at start, are left out)."""

    def __init__(self, world: World, argv: list[str], env: dict[str, str]) -> None:
        self._log = Path(env["DISCORD_MCP_HOME"]) / "logs" / "discord-mcp.log"
        self._swept_before = _said(self._log, SWEPT)
        self._reads = _reads_file(world)
        self._server = StdioServer(argv, counted_env(env, self._reads), "discord-mcp")
        self._calls = 0

    def __enter__(self) -> PendingCalls:
        self._server.list_tools(our_tools())
        # The gateway holder's one-off walk at start (temporary files of unfinished writes,
        # off the loop) is not a check_pending cost: measured once it is over (or after a bound).
        settle_by = time.monotonic() + SETTLE_S
        while _said(self._log, SWEPT) <= self._swept_before and time.monotonic() < settle_by:
            time.sleep(0.05)
        self.call()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.close()

    def call(self) -> Sample:
        self._calls += 1
        request_id = 100 + self._calls
        request = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "check_pending", "arguments": {}},
        }
        was = len(opened(self._reads))
        start = time.perf_counter()
        self._server.send([request])
        reply = self._server.reply(request_id)
        took = time.perf_counter() - start
        if "result" not in reply or reply["result"].get("isError"):
            raise BenchFailure(f"check_pending failed: {str(reply)[:400]}")
        return Sample(took, len(distinct(opened(self._reads)[was:])))


def watch_ready(world: World, env: dict[str, str]) -> Sample:
    """Seconds from spawning ``discord-watch run`` to its first catch-up recorded."""
    alive = world.home / "watch" / "alive.json"
    reads = _reads_file(world)
    log = world.home.parent / "discord-watch.log"
    start_wall = time.time()
    start = time.perf_counter()
    with open(log, "ab") as err:
        daemon = subprocess.Popen(
            [*WATCH, "run"],
            env=counted_env(env, reads),
            cwd=world.project,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        while time.perf_counter() - start < READY_WITHIN_S:
            if daemon.poll() is not None:
                said = log.read_text(encoding="utf-8", errors="replace")[-600:]
                raise BenchFailure(f"discord-watch exited with {daemon.returncode}: {said}")
            if _caught_up_since(alive, start_wall):
                took = time.perf_counter() - start
                return Sample(took, len(distinct(opened(reads))), process_cpu(daemon.pid))
            time.sleep(0.005)
        said = log.read_text(encoding="utf-8", errors="replace")[-600:]
        raise BenchFailure(f"discord-watch was not ready within {READY_WITHIN_S:.0f} s: {said}")
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()


def _caught_up_since(alive: Path, since: float) -> bool:
    try:
        document = json.loads(alive.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    stamp = document.get("caught_up_at")
    if not isinstance(stamp, str):
        return False
    return datetime.fromisoformat(stamp).timestamp() >= since


# ---- the run ---------------------------------------------------------------------------------


OPENS_SLACK = 0.02
"""A running process's count is read at a moment (tools/list answered, caught up) while its
background tasks go on, so it moves by a file or two from one start to the next; history read
on a hot path adds one file per old run or decision: hundreds even in the quick mode."""


def opens_slack(alone: float) -> float:
    return max(2.0, OPENS_SLACK * alone)


@dataclass
class Row:
    label: str
    week: list[Sample]
    year: list[Sample]

    def seconds(self) -> tuple[float, float]:
        return min(s.seconds for s in self.week), min(s.seconds for s in self.year)

    def opens(self) -> tuple[float, float]:
        return min(s.opens for s in self.week), min(s.opens for s in self.year)

    def by_cpu(self) -> bool:
        return all(s.cpu is not None for s in (*self.week, *self.year))

    def cost(self) -> tuple[float, float]:
        """What the time budget judges: CPU seconds where they are counted (the machine's load
        barely moves them), else the time it took."""
        if not self.by_cpu():
            return self.seconds()
        return min(s.cpu or 0.0 for s in self.week), min(s.cpu or 0.0 for s in self.year)

    def ratio(self) -> float:
        alone, after = self.cost()
        return after / alone if alone else float("inf")

    def over_in_time(self) -> bool:
        return self.ratio() > BUDGET_RATIO

    def over_in_opens(self) -> bool:
        alone, after = self.opens()
        return after > alone + opens_slack(alone)


def side_by_side(
    row: Row, repeats: int, week: Callable[[], Sample], year: Callable[[], Sample]
) -> Row:
    """``repeats`` samples of each, alternating, so both see the same machine; which goes
    first alternates too (the second of a pair finds caches the first warmed, or a CPU the
    first left busy)."""
    for turn in range(repeats):
        if turn % 2:
            row.year.append(year())
            row.week.append(week())
        else:
            row.week.append(week())
            row.year.append(year())
    return row


def describe(world: World) -> str:
    store = DecisionStore(world.home)
    runs = [n for n in os.listdir(world.home / "runs") if is_run_id(n)]
    loaded = load(world.home / "runs")
    cursors = json.loads((world.home / "watch" / "cursors.json").read_text(encoding="utf-8"))
    return (
        f"{store.done_count()} done decisions, {len(store.open_decisions())} open, "
        f"{len(runs)} run folders, {len(loaded.state.sessions)} run sessions and "
        f"{loaded.seq} journal events, {len(cursors.get('channels') or {})} watched threads"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--decisions", type=int, default=100_000, help="decisions in the year")
    parser.add_argument("--runs", type=int, default=10_000, help="run folders in the year")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="build the worlds in DIR and keep them; a later run with the same DIR and sizes "
        "measures them again without building",
    )
    add_server_option(parser)
    args = parse_arguments(parser, QUICK)
    repeats = args.repeats
    argv = server_argv(args.server_command)
    emulator = start_in_thread(rate_limit_scale=0.01)
    with contextlib.ExitStack() as stack:
        stack.enter_context(emulator)
        if args.keep is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        else:
            root = args.keep.resolve()
        sizes = {"decisions": args.decisions, "runs": args.runs}
        worlds, marks = kept_worlds(root, sizes, emulator) if args.keep else (None, None)
        if worlds is None or marks is None:
            worlds, marks = build_worlds(root, sizes, emulator, keep=args.keep is not None)
        else:
            print(f"measuring the worlds kept in {root} (built {_age(worlds['year'].now)} ago):")
        for name, world in worlds.items():
            print(f"  {name:5}: {describe(world)}")
        envs = {name: env_for(world, emulator) for name, world in worlds.items()}
        mark = marks["week"]
        other = root / "work" / "other"  # a project with nothing open: the hook only reads
        other.mkdir(parents=True, exist_ok=True)
        elsewhere = {"session_id": "bench-other", "cwd": str(other)}
        stop_payload = {"session_id": "b3nch000", "cwd": "", "transcript_path": ""}

        def measures(name: str) -> dict[str, Callable[[], Sample]]:
            world, env = worlds[name], envs[name]
            return {
                "routing one incoming message": lambda: route_one(world, mark.routed_thread),
                "archive_if_done": lambda: archive_check(world, mark.archive_probe.id),
                "SessionStart hook, cold": lambda: hook(world, env, "session-start", elsewhere),
                "Stop hook, cold": lambda: hook(
                    world, env, "stop", {**stop_payload, "cwd": str(world.project)}
                ),
                "MCP server, spawn to tools/list": lambda: server_start(argv, env, world),
                "discord-watch, spawn to ready": lambda: watch_ready(world, env),
            }

        alone, after = measures("week"), measures("year")
        rows = []
        for label in alone:
            alone[label](), after[label]()  # warm the OS caches (and a first start) once each
            rows.append(side_by_side(Row(label, [], []), repeats, alone[label], after[label]))
        pending = Row("check_pending", [], [])
        rows.append(pending)
        with (
            PendingCalls(worlds["week"], argv, envs["week"]) as week_server,
            PendingCalls(worlds["year"], argv, envs["year"]) as year_server,
        ):
            # Both run at once and are called in turn: each pair sees the same machine.
            calls = max(repeats, PENDING_SAMPLES)
            side_by_side(pending, calls, week_server.call, year_server.call)
            for _ in range(AGAIN):
                again = [row for row in rows if row.over_in_time()]
                if not again:
                    break
                print(f"measured again (over the time budget): {', '.join(r.label for r in again)}")
                for row in again:
                    if row is pending:
                        side_by_side(pending, calls, week_server.call, year_server.call)
                    else:
                        side_by_side(row, repeats, alone[row.label], after[row.label])
    return verdict(rows)


MANIFEST = "kept-world.json"


def build_worlds(
    root: Path, sizes: dict[str, int], emulator: RunningEmulator, *, keep: bool
) -> tuple[dict[str, World], dict[str, Today]]:
    """Build the last week and the year in ``root`` (module doc); with ``keep``, note what was
    built so a later run can measure it again (:func:`kept_worlds`)."""
    if keep and root.exists():
        (root / MANIFEST).unlink(missing_ok=True)  # a half-built world is never reused
        for name in ("week", "year"):
            shutil.rmtree(root / name, ignore_errors=True)
    now = time.time()
    worlds = {}
    for name in ("week", "year"):
        project = root / name / "work" / "app"
        project.mkdir(parents=True)
        worlds[name] = World(
            root / name / "home", project, emulator.channel_id, emulator.owner_user_id, now
        )
    built = time.perf_counter()
    build_year(worlds["year"], sizes["decisions"], sizes["runs"])
    build_year(worlds["week"], sizes["decisions"], sizes["runs"], last_days=DECISION_THREAD_DAYS)
    marks = {name: build_today(world) for name, world in worlds.items()}
    print(f"built in {time.perf_counter() - built:.0f} s:")
    if keep:
        manifest = {
            **sizes,
            "now": now,
            "channel_id": emulator.channel_id,
            "owner_id": emulator.owner_user_id,
            "marks": {
                name: {
                    "routed_thread": mark.routed_thread,
                    "archive_probe": mark.archive_probe.id,
                    "away": mark.away.id,
                }
                for name, mark in marks.items()
            },
        }
        (root / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return worlds, marks


def kept_worlds(
    root: Path, sizes: dict[str, int], emulator: RunningEmulator
) -> tuple[dict[str, World] | None, dict[str, Today] | None]:
    """The worlds a run with ``--keep`` built in ``root``, if they are of these sizes, for
    this emulator's channel and not older than :data:`KEEP_FOR_S`; else (None, None)."""
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    same = (
        isinstance(manifest, dict)
        and all(manifest.get(key) == value for key, value in sizes.items())
        and manifest.get("channel_id") == emulator.channel_id
        and manifest.get("owner_id") == emulator.owner_user_id
        and isinstance(manifest.get("now"), float)
        and time.time() - manifest["now"] < KEEP_FOR_S
    )
    if not same:
        print(f"the world kept in {root} is not of these sizes or too old: building it anew")
        return None, None
    worlds, marks = {}, {}
    for name in ("week", "year"):
        world = World(
            root / name / "home",
            root / name / "work" / "app",
            emulator.channel_id,
            emulator.owner_user_id,
            manifest["now"],
        )
        ids = manifest["marks"][name]
        store = DecisionStore(world.home)
        worlds[name] = world
        marks[name] = Today(
            routed_thread=ids["routed_thread"],
            archive_probe=store.load(ids["archive_probe"]),
            away=store.load(ids["away"]),
        )
    return worlds, marks


def _age(since: float) -> str:
    minutes = (time.time() - since) / 60
    return f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h"


def verdict(rows: list[Row]) -> int:
    for world in ("week", "year"):
        if not any(sample.opens for row in rows for sample in getattr(row, world)):
            raise BenchFailure(f"no file was counted as opened ({world}): bench/reads is broken")
    print(
        "\nthe last week alone | after a year, each the best of its samples:"
        "\n  distinct files opened under the state directory (budget: no more after a year, give or"
        f" take {OPENS_SLACK:.0%} or 2 files for a running process's background work)"
        f"\n  CPU it took, or where too short to count, time (budget: <= {BUDGET_RATIO}x)"
        "\n  and the time it took (shown, not judged: the machine's load moves it most)"
    )
    over = False
    for row in rows:
        (opens_alone, opens_after), (alone, after) = row.opens(), row.cost()
        wall_alone, wall_after = row.seconds()
        opens_verdict = "OVER BUDGET" if row.over_in_opens() else "OK"
        time_verdict = "OVER BUDGET" if row.over_in_time() else "OK"
        over = over or row.over_in_opens() or row.over_in_time()
        kind = "cpu " if row.by_cpu() else "time"
        print(
            f"  {row.label:34} {opens_alone:6.1f} | {opens_after:6.1f} files {opens_verdict:11}"
            f" {kind} {_ms(alone)} | {_ms(after)} | {row.ratio():5.2f}x {time_verdict:11}"
            f" time {_ms(wall_alone)} | {_ms(wall_after)}  ({len(row.week)} samples)"
        )
    return OVER_BUDGET if over else 0


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:9.2f} ms"


if __name__ == "__main__":
    run_main(main)
