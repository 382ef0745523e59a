"""A burst of 100 messages to one channel, against the emulator's real bucket.

For our REST client and for discord.py, each against a fresh emulator at the same scale,
alternating over several rounds (the order swaps each round): elapsed time, the bucket's
theoretical minimum, and the 429s received; the figures are medians. The bucket (requests per
window) is read from the emulator: the ``X-RateLimit-Limit`` and ``X-RateLimit-Reset-After``
headers of a first message to a fresh channel, so the minimum follows the emulator's real
configuration. Budget (DESIGN §6): no 429, at most 1.1x the minimum, and no slower than
discord.py (medians). A burst where a message goes missing fails (exit 2).

    .venv/bin/python -m bench.ratelimit [--messages 100] [--scale 0.1] [--rounds 3]

``--scale`` shrinks every rate-limit window (0.1: 0.5 s windows) so the run takes seconds;
``--scale 1`` is Discord's real speed (about 95 s per client and round).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx

from bench.mcp_stdio import OVER_BUDGET, BenchFailure, parse_arguments, run_main
from discord_mcp.config import Secret
from discord_mcp.emulator import RunningEmulator, start_in_thread
from discord_mcp.transport.rest import RestClient


@dataclass(frozen=True)
class Bucket:
    """A channel's message-create limit as the emulator announces it: ``limit`` per window."""

    limit: int
    window_s: float

    def minimum_seconds(self, messages: int) -> float:
        """The least time it allows: the last window opens after all earlier ones closed."""
        return (math.ceil(messages / self.limit) - 1) * self.window_s


def read_bucket(scale: float) -> Bucket:
    """Post one message to a fresh emulator at ``scale`` and read its rate-limit headers."""
    with start_in_thread(rate_limit_scale=scale) as emulator:
        response = httpx.post(
            f"{emulator.api_base}/channels/{emulator.channel_id}/messages",
            headers={"Authorization": f"Bot {emulator.token}"},
            json={"content": "probe"},
        )
    if response.status_code != 200:
        raise BenchFailure(f"the probe message got {response.status_code}: {response.text}")
    try:
        # A fresh window: Reset-After is the whole window (at the emulator's scale).
        return Bucket(
            int(response.headers["X-RateLimit-Limit"]),
            float(response.headers["X-RateLimit-Reset-After"]),
        )
    except (KeyError, ValueError) as exc:
        raise BenchFailure(f"the probe's rate-limit headers are unusable: {exc!r}") from exc


def stats(emulator: RunningEmulator) -> dict[str, int]:
    return dict(httpx.get(emulator.base_url + "/_emulator/state").json()["stats"])


def stored(emulator: RunningEmulator) -> int:
    url = f"{emulator.base_url}/_emulator/channels/{emulator.channel_id}/messages"
    return len(httpx.get(url).json())


async def ours(emulator: RunningEmulator, messages: int) -> float:
    async with RestClient(Secret(emulator.token), api_base=emulator.api_base) as rest:
        await rest.get_current_user()  # connect first, as a running server would be
        start = time.perf_counter()
        await asyncio.gather(
            *(rest.create_message(emulator.channel_id, f"message {i}") for i in range(messages))
        )
        return time.perf_counter() - start


async def discordpy(emulator: RunningEmulator, messages: int) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # its audioop import, unused here
        import discord
        import discord.http

    discord.http.Route.BASE = emulator.api_base
    client = discord.Client(intents=discord.Intents.default())
    await client.login(emulator.token)
    try:
        channel = await client.fetch_channel(int(emulator.channel_id))
        assert isinstance(channel, discord.TextChannel)
        start = time.perf_counter()
        await asyncio.gather(*(channel.send(f"message {i}") for i in range(messages)))
        return time.perf_counter() - start
    finally:
        await client.close()


Burst = Callable[[RunningEmulator, int], Awaitable[float]]


def run(name: str, messages: int, scale: float, burst: Burst) -> tuple[float, int]:
    """One burst against a fresh emulator: seconds taken and 429s received."""
    with start_in_thread(rate_limit_scale=scale) as emulator:
        elapsed = asyncio.run(burst(emulator, messages))
        got_429 = stats(emulator)["rest_429"]
        arrived = stored(emulator)
    if arrived != messages:
        raise BenchFailure(f"{name}: {arrived} of {messages} messages arrived")
    return elapsed, got_429


QUICK = ("--messages", "30", "--rounds", "3")
"""``--quick``: the same checks on fewer rounds."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parse_arguments(parser, QUICK)
    if args.rounds < 1:
        raise BenchFailure("--rounds must be at least 1")
    bucket = read_bucket(args.scale)
    floor = bucket.minimum_seconds(args.messages)
    clients: dict[str, Burst] = {"discord-mcp": ours, "discord.py": discordpy}
    elapsed: dict[str, list[float]] = {name: [] for name in clients}
    got_429: dict[str, list[int]] = {name: [] for name in clients}
    for round_number in range(args.rounds):
        order = list(clients) if round_number % 2 == 0 else list(reversed(clients))
        for name in order:
            seconds, limited = run(name, args.messages, args.scale, clients[name])
            elapsed[name].append(seconds)
            got_429[name].append(limited)
    ours_s = statistics.median(elapsed["discord-mcp"])
    dpy_s = statistics.median(elapsed["discord.py"])
    print(
        f"burst of {args.messages} messages to one channel, bucket {bucket.limit} per "
        f"{bucket.window_s:.3f} s (read from the emulator, scale {args.scale}), "
        f"median of {args.rounds} alternating rounds:"
    )
    print(f"  theoretical minimum: {floor:7.2f} s")
    for name, label in (
        ("discord-mcp", "discord-mcp        "),
        ("discord.py", "discord.py 2.7     "),
    ):
        median = statistics.median(elapsed[name])
        rounds = ", ".join(f"{s:.2f}" for s in elapsed[name])
        print(
            f"  {label}: {median:7.2f} s ({median / floor:.3f}x; rounds {rounds}), "
            f"429s: {sum(got_429[name])}"
        )
    ok = sum(got_429["discord-mcp"]) == 0 and ours_s <= 1.1 * floor and ours_s <= dpy_s
    print(
        "  budget: no 429, <= 1.1x the minimum, no slower than discord.py: "
        + ("OK" if ok else "OVER BUDGET")
    )
    return 0 if ok else OVER_BUDGET


if __name__ == "__main__":
    run_main(main)
