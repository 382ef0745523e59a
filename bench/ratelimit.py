"""A burst of 100 messages to one channel, against the emulator's real bucket (5 per 5 s).

For our REST client and for discord.py, each against a fresh emulator at the same scale:
elapsed time, the bucket's theoretical minimum, and the 429s received. Budget (DESIGN §6): no
429, at most 1.1x the minimum, and no slower than discord.py.

    .venv/bin/python -m bench.ratelimit [--messages 100] [--scale 0.1]

``--scale`` shrinks every rate-limit window (0.1: 0.5 s windows) so the run takes seconds;
``--scale 1`` is Discord's real speed (about 95 s per client).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import time
import warnings
from collections.abc import Awaitable, Callable

import httpx

from discord_mcp.config import Secret
from discord_mcp.emulator import RunningEmulator, start_in_thread
from discord_mcp.transport.rest import RestClient

LIMIT, WINDOW_S = 5, 5.0
"""The emulator's POST /channels/{id}/messages bucket (discord_mcp/emulator/ratelimit.py)."""


def minimum_seconds(messages: int, scale: float) -> float:
    """The least time the bucket allows: the last window opens after all earlier ones closed."""
    return (math.ceil(messages / LIMIT) - 1) * WINDOW_S * scale


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


def run(
    name: str,
    messages: int,
    scale: float,
    burst: Callable[[RunningEmulator, int], Awaitable[float]],
) -> tuple[float, int]:
    with start_in_thread(rate_limit_scale=scale) as emulator:
        elapsed = asyncio.run(burst(emulator, messages))
        got_429 = stats(emulator)["rest_429"]
        assert stored(emulator) == messages, f"{name}: not every message arrived"
    return elapsed, got_429


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--scale", type=float, default=0.1)
    args = parser.parse_args()
    floor = minimum_seconds(args.messages, args.scale)
    ours_s, ours_429 = run("discord-mcp", args.messages, args.scale, ours)
    dpy_s, dpy_429 = run("discord.py", args.messages, args.scale, discordpy)
    print(
        f"burst of {args.messages} messages to one channel, bucket {LIMIT} per "
        f"{WINDOW_S * args.scale:.2f} s (scale {args.scale}):"
    )
    print(f"  theoretical minimum: {floor:7.2f} s")
    print(f"  discord-mcp        : {ours_s:7.2f} s ({ours_s / floor:.3f}x), 429s: {ours_429}")
    print(f"  discord.py 2.7     : {dpy_s:7.2f} s ({dpy_s / floor:.3f}x), 429s: {dpy_429}")
    ok = ours_429 == 0 and ours_s <= 1.1 * floor and ours_s <= dpy_s
    print(
        "  budget: no 429, <= 1.1x the minimum, no slower than discord.py: "
        + ("OK" if ok else "OVER BUDGET")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
