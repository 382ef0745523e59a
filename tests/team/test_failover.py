"""A machine that dies is replaced from the next command on, within Discord's 3 seconds; machines
bursting messages at once lose none, and meet Discord's 429s only as its headers could not
predict them (other machines spending the same bucket), each retried once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from discord_mcp.config import Secret
from discord_mcp.emulator import Exchange, RunningEmulator
from discord_mcp.transport.ledger import LedgerState
from discord_mcp.transport.rest import RestClient
from discord_mcp.transport.shared_ledger import ledger_path, shared_limiter
from tests.support.people import People
from tests.support.settings import env_for
from tests.support.slash import Slash
from tests.support.waiting import until
from tests.support.waiting import until_sync as wait_for
from tests.team.conftest import machine, presence_records, running

WATCH = [sys.executable, "-c", "from discord_mcp.watch.cli import main; raise SystemExit(main())"]


@pytest.fixture
def daemons(tmp_path: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.terminate()
    for process in started:
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def start(
    discord: RunningEmulator, root: Path, name: str, daemons: list[subprocess.Popen[bytes]]
) -> subprocess.Popen[bytes]:
    env = env_for(discord, root / name, DISCORD_MCP_MACHINE=name, DISCORD_WATCH_ROOTS=str(root))
    with (root / f"{name}.log").open("wb") as log:  # the child keeps its own copy
        process = subprocess.Popen(
            WATCH, env={**os.environ, **env}, cwd=root, stdout=log, stderr=subprocess.STDOUT
        )
    daemons.append(process)
    return process


def test_when_the_machine_that_answers_dies_the_next_one_answers_the_next_command(
    discord: RunningEmulator, people: People, tmp_path: Path, daemons: list[subprocess.Popen[bytes]]
) -> None:
    slash = Slash(discord)

    def status() -> dict[str, object]:
        return asyncio.run(slash.run("status"))

    laptop = start(discord, tmp_path, "laptop", daemons)
    wait_for(lambda: "laptop" in presence_records(people))
    start(discord, tmp_path, "server", daemons)
    wait_for(lambda: "server" in presence_records(people))
    asyncio.run(slash.ready(14))

    def answered_by_laptop_listing_server() -> bool:
        report = status()
        text = asyncio.run(slash.answer(report))
        return "on `laptop`" in text and "`server`" in text

    wait_for(answered_by_laptop_listing_server)
    before = people.state()["stats"]
    laptop.send_signal(signal.SIGKILL)
    laptop.wait(timeout=10)
    # laptop's record still says it is live (for up to 3 minutes): server waits for its turn,
    # sees nobody answered, and answers, within Discord's 3 seconds.
    first = status()
    second = status()
    after = people.state()["stats"]
    for report in (first, second):
        assert report["acknowledged"] is True
        assert report["expired"] is False
        assert "discord-watch** on `server`" in asyncio.run(slash.answer(report))
    assert after["interactions_acknowledged_twice"] == before["interactions_acknowledged_twice"]
    assert after["interactions_failed"] == before["interactions_failed"]


class Burst:
    """The messages' requests (by nonce) and their 429s, counted from Discord's side."""

    def __init__(self) -> None:
        self.tries: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()

    def __call__(self, exchange: Exchange) -> None:
        if exchange.method == "POST" and exchange.path.endswith("/messages"):
            nonce = str((exchange.request_json or {}).get("nonce") or "")
            self.tries[nonce] += 1
            if exchange.status == 429:
                self.refused[nonce] += 1


async def send_all_at_once(discord: RunningEmulator, homes: dict[str, Path], each: int) -> None:
    """Every machine sends ``each`` messages to the channel at once, through its own state
    directory's rate-limit ledger (``homes``: name -> state directory), as its processes do."""
    token = Secret(discord.token)

    async def machine(name: str) -> None:
        limiter = shared_limiter(homes[name], token)
        async with RestClient(token, api_base=discord.api_base, limiter=limiter) as rest:
            await asyncio.gather(
                *(rest.send_text(discord.channel_id, f"{name} {i}") for i in range(each))
            )

    await asyncio.gather(*(machine(n) for n in homes))


def sharers(home: Path, token: str) -> int:
    """How many machines the rate-limit ledger of ``home`` was told share the bot."""
    path = ledger_path(home, Secret(token))
    try:
        return LedgerState.from_json(json.loads(path.read_bytes())).sharers
    except (OSError, ValueError):
        return 0


def test_one_machine_bursting_messages_meets_no_429(
    make_emulator: Callable[..., RunningEmulator], tmp_path: Path
) -> None:
    counted = Burst()
    discord = make_emulator(rate_limit_scale=0.05, exchange_hook=counted)
    asyncio.run(send_all_at_once(discord, {"laptop": tmp_path / "laptop"}, 30))
    people = People(discord)
    try:
        sent = [m["content"] for m in people.messages(discord.channel_id)]
        total = int(people.state()["stats"]["rest_429"])
    finally:
        people.close()
    assert sorted(sent) == sorted(f"laptop {i}" for i in range(30))
    assert total == 0  # Discord's headers predict every limit of a machine alone
    assert set(counted.tries.values()) == {1}


async def test_machines_running_discord_watch_lose_no_message_of_a_burst_and_retry_each_429_once(
    make_emulator: Callable[..., RunningEmulator], roots: Path
) -> None:
    counted = Burst()
    discord = make_emulator(rate_limit_scale=0.05, exchange_hook=counted)
    names, each = ("cloud", "laptop", "server"), 15
    machines = [await machine(discord, roots, name) for name in names]
    people = People(discord)
    try:
        async with running(discord, people, *machines):
            # Each discord-watch tells its own ledger, from the presence records, how many
            # machines share the bot; nothing here tells it.
            await until(
                lambda: all(sharers(m.home, discord.token) == len(names) for m in machines),
                what="each discord-watch telling its rate-limit ledger 3 machines share the bot",
            )
            counted.tries.clear()
            counted.refused.clear()
            await send_all_at_once(discord, {m.name: m.home for m in machines}, each)
        sent = [m["content"] for m in people.messages(discord.channel_id)]
    finally:
        people.close()
    bursts = [text for text in sent if text.split(" ")[0] in names]
    assert sorted(bursts) == sorted(f"{n} {i}" for n in names for i in range(each))
    tries, refused = counted.tries, counted.refused
    assert len(tries) == len(names) * each  # one message per nonce: none sent twice
    # A 429 comes only from another machine spending the same bucket meanwhile (a machine's
    # own headers said there was room); it is waited out and the message sent again, once.
    assert max(refused.values(), default=0) <= 1
    assert all(tries[n] == 1 + refused[n] for n in tries)
