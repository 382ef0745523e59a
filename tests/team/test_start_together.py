"""Machines started at the same moment (after a power cut, or the budgets bench): within the
real Discord's buckets from their first request, and knowing each other within seconds."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from discord_mcp.emulator import Exchange, RunningEmulator
from discord_mcp.watch.app import run_daemon
from tests.support.people import People
from tests.support.slash import Slash
from tests.support.waiting import until
from tests.team.conftest import machine, running, up

NAMES = ("alpha", "bravo", "charlie")


async def test_machines_started_at_once_ask_guild_and_gateway_within_buckets_and_meet_in_seconds(
    make_emulator: Callable[..., RunningEmulator], roots: Path
) -> None:
    # At Discord's own speed. Every machine asks for the configured channel's guild and the
    # gateway's URL at start: asked once per machine (not once per start-up step, and not again
    # for each identify an op 9 refused), three machines stay within GET /channels/{id}'s 5 a
    # second and GET /gateway/bot's 5 in 5 seconds, which none of them can see the others spend.
    refused: Counter[str] = Counter()
    start_up = {"GET /channels/{id}", "GET /gateway/bot"}

    def seen(exchange: Exchange) -> None:
        route = f"{exchange.method} {re.sub(r'/[0-9]+', '/{id}', exchange.path)}"
        if exchange.status == 429 and route in start_up:
            refused[route] += 1

    discord = make_emulator(rate_limit_scale=1.0, exchange_hook=seen)
    people = People(discord)
    machines = [await machine(discord, roots, name) for name in NAMES]
    tasks = [
        asyncio.create_task(run_daemon(m.settings, spawner=m.spawner), name=m.name)
        for m in machines
    ]
    try:
        await until(lambda: up(people, machines), timeout=60, what="three machines up")
        slash = Slash(discord)
        await slash.ready(14)
        # Each learns of the others at its second presence read, seconds after its first.
        async with asyncio.timeout(30):
            while True:
                text = await slash.text("status")
                if all(f"`{n}`" in text for n in NAMES):
                    break
                await asyncio.sleep(0.5)
        for task in tasks:
            assert not task.done(), task
        assert refused == Counter()
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                async with asyncio.timeout(15):
                    await task
        people.close()


async def test_another_machines_run_thread_is_read_once_not_at_each_of_its_messages(
    make_emulator: Callable[..., RunningEmulator], roots: Path
) -> None:
    # Every machine sees every message of a busy run thread; one that is not its own was read
    # at each of them, and with three machines the thread's GET bucket (5 a second) ran out.
    reads: Counter[str] = Counter()

    def seen(exchange: Exchange) -> None:
        if exchange.method == "GET" and re.fullmatch(r"/channels/\d+", exchange.path):
            reads[exchange.path.rsplit("/", 1)[1]] += 1

    discord = make_emulator(rate_limit_scale=0.01, exchange_hook=seen)
    people = People(discord)
    try:
        laptop = await machine(discord, roots, "laptop", "app")
        server = await machine(discord, roots, "server", "web")
        slash = Slash(discord)
        async with running(discord, people, laptop, server):
            answer = await slash.text("start", project="web", prompt="look around")
            thread_id = answer.split("<#")[1].split(">")[0]
            await until(lambda: len(server.spawner.runs()) == 1)
            for number in range(2, 6):
                people.say(thread_id, f"and step {number}")
                await until(lambda n=number: len(server.spawner.runs()) == n)  # type: ignore[misc]
    finally:
        people.close()
    assert reads[thread_id] <= 2  # at most once by each machine
