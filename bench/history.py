"""A year of history costs nothing (issue 38): the hot paths with a year behind them, beside the
same work on a state directory that holds only today's.

Two state directories (bench/history_state.py): *today* alone, and *a year*: the same today
after 100,000 decisions, 10,000 run folders and a year of journal and watch cursors, all made
through the product's own stores. Measured on both, alternating so both see the same machine:

- routing one incoming message: what discord-watch reads to route an owner's note in a thread
  (the thread's decisions, open or done; :func:`discord_mcp.watch.quiet.thread_decisions`)
  and the route, with a cold store (a daemon that just started);
- ``archive_if_done`` for a question whose thread is still in use (what it reads to decide);
- the SessionStart and Stop hooks, cold (a new process each, as the CLIs run them);
- the MCP server, spawn to ``tools/list`` answered;
- ``discord-watch``, spawn to ready (its first catch-up done, ``watch/alive.json``), against
  a local emulator; ``DISCORD_MCP_KEEP_RUNS=all`` so every start sees the same year;
- ``check_pending`` on a running server.

Budget: each median within 1.2x of today's alone (printed beside it). Exit 1 over budget, 2
when something measured does not work (a server that exits, a hook that fails).

    .venv/bin/python -m bench.history [--quick] [--repeats N] [--server-command CMD]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.history_state import World, build_today, build_year
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
from discord_mcp.config import Secret
from discord_mcp.decisions.store import DecisionStore
from discord_mcp.decisions.threads import archive_if_done
from discord_mcp.emulator import RunningEmulator, start_in_thread
from discord_mcp.runs.folders import is_run_id
from discord_mcp.runs.journal import load
from discord_mcp.transport.rest import RestClient
from discord_mcp.watch.quiet import thread_decisions
from discord_mcp.watch.routing import destination

BUDGET_RATIO = 1.2
QUICK = ["--decisions", "1000", "--runs", "100", "--repeats", "3"]
"""The quick mode (tests/test_benchmarks.py): a small year, few repeats."""
ROUTES_PER_SAMPLE = 50
WATCH = [sys.executable, "-c", "from discord_mcp.watch.cli import main; raise SystemExit(main())"]
READY_WITHIN_S = 120.0


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


def route_one(world: World, thread: str) -> float:
    """Seconds to route one owner's note in ``thread``, a cold store each time (mean of a few)."""
    message = {
        "id": str(int(thread) + 10_000),
        "channel_id": thread,
        "author": {"id": world.owner_id},
        "content": "and tag the release when it is merged",
        "type": 0,
    }

    async def routes() -> float:
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
        return (time.perf_counter() - start) / ROUTES_PER_SAMPLE

    return asyncio.run(routes())


def archive_check(world: World, decision_id: str) -> float:
    """Seconds for ``archive_if_done`` to find the thread still in use (a cold store each time,
    mean of a few)."""

    async def check() -> float:
        token = Secret("bench.token.value")  # never used: the thread is still in use
        async with RestClient(token, api_base="http://127.0.0.1:9/api/v10") as rest:
            took = 0.0
            for _ in range(ROUTES_PER_SAMPLE):
                store = DecisionStore(world.home)
                decision = store.load(decision_id)
                start = time.perf_counter()
                archived = await archive_if_done(store, rest, decision)
                took += time.perf_counter() - start
                if archived:
                    raise BenchFailure("archive_if_done archived a thread with a pending question")
        return took / ROUTES_PER_SAMPLE

    return asyncio.run(check())


def hook(world: World, env: dict[str, str], event: str, payload: dict[str, Any]) -> float:
    """Seconds from spawning ``discord-mcp hook <event>`` to its exit."""
    start = time.perf_counter()
    done = subprocess.run(
        [*OURS, "hook", event],
        input=json.dumps(payload).encode(),
        env=env,
        cwd=world.project,
        capture_output=True,
        timeout=60,
        check=False,
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise BenchFailure(f"the {event} hook exited {done.returncode}: {done.stderr[-400:]!r}")
    return took


def server_start(argv: list[str], env: dict[str, str], world: World) -> float:
    start = time.perf_counter()
    with StdioServer(argv, {**env, "PROJECT_NAME": "bench"}, "discord-mcp") as server:
        server.list_tools(our_tools())
        return time.perf_counter() - start


PENDING_SAMPLES = 15
"""check_pending takes milliseconds: at least this many calls, so one slow call is no median."""
SWEPT = "the gateway holder removed"
SETTLE_S = 60.0


def _said(log: Path, line: str) -> int:
    try:
        return log.read_text(encoding="utf-8", errors="replace").count(line)
    except FileNotFoundError:
        return 0


def check_pending_calls(argv: list[str], env: dict[str, str], repeats: int) -> list[float]:
    """Seconds per ``check_pending`` call on one running server (after a first, untimed one)."""
    log = Path(env["DISCORD_MCP_HOME"]) / "logs" / "discord-mcp.log"
    before = _said(log, SWEPT)
    with StdioServer(argv, env, "discord-mcp") as server:
        server.list_tools(our_tools())
        # The gateway holder's one-off walk at start (temporary files of unfinished writes,
        # off the loop) is not a check_pending cost: measured once it is over (or after a bound).
        settle_by = time.monotonic() + SETTLE_S
        while _said(log, SWEPT) <= before and time.monotonic() < settle_by:
            time.sleep(0.05)
        times = []
        for n in range(repeats + 1):
            request = {
                "jsonrpc": "2.0",
                "id": 100 + n,
                "method": "tools/call",
                "params": {"name": "check_pending", "arguments": {}},
            }
            start = time.perf_counter()
            server.send([request])
            reply = server.reply(100 + n)
            took = time.perf_counter() - start
            if "result" not in reply or reply["result"].get("isError"):
                raise BenchFailure(f"check_pending failed: {str(reply)[:400]}")
            if n:
                times.append(took)
        return times


def watch_ready(world: World, env: dict[str, str]) -> float:
    """Seconds from spawning ``discord-watch run`` to its first catch-up recorded."""
    alive = world.home / "watch" / "alive.json"
    log = world.home.parent / "discord-watch.log"
    start_wall = time.time()
    start = time.perf_counter()
    with open(log, "ab") as err:
        daemon = subprocess.Popen(
            [*WATCH, "run"], env=env, cwd=world.project, stdout=subprocess.DEVNULL, stderr=err
        )
    try:
        while time.perf_counter() - start < READY_WITHIN_S:
            if daemon.poll() is not None:
                said = log.read_text(encoding="utf-8", errors="replace")[-600:]
                raise BenchFailure(f"discord-watch exited with {daemon.returncode}: {said}")
            if _caught_up_since(alive, start_wall):
                return time.perf_counter() - start
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


def side_by_side(
    name: str, repeats: int, today: Callable[[], float], year: Callable[[], float]
) -> tuple[str, float, float]:
    today(), year()  # warm the OS caches (and a daemon's first start) once each
    ours, theirs = [], []
    for _ in range(repeats):
        ours.append(today())
        theirs.append(year())
    return name, statistics.median(ours), statistics.median(theirs)


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
    add_server_option(parser)
    args = parse_arguments(parser, QUICK)
    repeats = args.repeats
    argv = server_argv(args.server_command)
    emulator = start_in_thread(rate_limit_scale=0.01)
    with tempfile.TemporaryDirectory() as scratch, emulator:
        root = Path(scratch)
        now = time.time()
        worlds = {}
        for name in ("today", "year"):
            project = root / name / "work" / "app"
            project.mkdir(parents=True)
            worlds[name] = World(
                root / name / "home", project, emulator.channel_id, emulator.owner_user_id, now
            )
        built = time.perf_counter()
        build_year(worlds["year"], args.decisions, args.runs)
        marks = {name: build_today(world) for name, world in worlds.items()}
        print(f"built in {time.perf_counter() - built:.0f} s:")
        for name, world in worlds.items():
            print(f"  {name:5}: {describe(world)}")
        envs = {name: env_for(world, emulator) for name, world in worlds.items()}
        mark = marks["today"]
        other = root / "work" / "other"  # a project with nothing open: the hook only reads
        other.mkdir(parents=True)
        elsewhere = {"session_id": "bench-other", "cwd": str(other)}
        stop_payload = {"session_id": "b3nch000", "cwd": "", "transcript_path": ""}

        def measures(name: str) -> dict[str, Callable[[], float]]:
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

        alone, after = measures("today"), measures("year")
        rows = [side_by_side(label, repeats, alone[label], after[label]) for label in alone]
        pending = {
            name: statistics.median(
                check_pending_calls(argv, envs[name], max(repeats, PENDING_SAMPLES))
            )
            for name in ("today", "year")
        }
        rows.append(("check_pending", pending["today"], pending["year"]))
    print(f"\nmedians of {repeats} (today alone | after a year | ratio, budget <= {BUDGET_RATIO}):")
    over = False
    for label, empty, full in rows:
        ratio = full / empty if empty else float("inf")
        verdict = "OK" if ratio <= BUDGET_RATIO else "OVER BUDGET"
        over = over or ratio > BUDGET_RATIO
        print(f"  {label:34} {_ms(empty)} | {_ms(full)} | {ratio:5.2f} {verdict}")
    return OVER_BUDGET if over else 0


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:9.2f} ms"


if __name__ == "__main__":
    run_main(main)
