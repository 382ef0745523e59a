"""Idle memory: a discord-mcp server's resident set beside a minimal FastMCP server's.

Budget (DESIGN §6): discord-mcp idle at most 1.2x the minimal FastMCP server with one tool.
Both run side by side in one run, alternating, each round a fresh process; the figures are
medians. Each server is weighed (RSS, /proc/<pid>/status VmRSS) at two points:

- after the handshake: ``tools/list`` answered (and checked to list the server's tools);
- idle: settled as it stays while an agent works. discord-mcp starts its background work
  (recovery of open decisions, the gateway) after the first request, so "idle" is when it
  holds the gateway of a local emulator (``gateway/status.json`` connected, with its pid);
  the minimal server has no background work, so its idle figure is taken at the same point
  in the round, once ours is settled.

The budgets apply to the idle figures, the state a server spends its life in: at most 1.2x the
minimal server's (DESIGN §6), and at most :data:`BUDGET_MB` in itself (every agent session
runs one: a growth the minimal server shares, in FastMCP or its dependencies, passes the
ratio).
:func:`idle_rss` is the reusable part (bench/scale.py weighs sessions with it).

    .venv/bin/python -m bench.memory [--rounds 7] [--server-command CMD] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.mcp_stdio import (
    MINIMAL,
    MINIMAL_TOOLS,
    OVER_BUDGET,
    BenchFailure,
    StdioServer,
    add_server_option,
    our_tools,
    parse_arguments,
    rss_kib,
    run_main,
    server_argv,
)
from discord_mcp.emulator import RunningEmulator, start_in_thread
from discord_mcp.relay.holder import read_status

BUDGET_RATIO = 1.2
BUDGET_MB = 125.0
"""MiB of idle RSS; measured 96-103 MiB (Python 3.11, x86-64)."""
SETTLE_TIMEOUT = 30.0


@dataclass(frozen=True)
class Weight:
    """One server's resident set in KiB: right after the handshake, and once idle."""

    after_handshake: int
    idle: int


def idle_rss(
    server: StdioServer,
    expected_tools: frozenset[str],
    settled: Callable[[], bool] | None = None,
    timeout: float = SETTLE_TIMEOUT,
) -> Weight:
    """Handshake with ``server``, weigh it, wait until ``settled()`` (if given), weigh again.

    Fails (:class:`BenchFailure`) if the handshake or ``tools/list`` fails, if the server
    exits, or if it does not settle within ``timeout`` seconds.
    """
    server.list_tools(expected_tools)
    after_handshake = rss_kib(server.pid)
    if settled is not None:
        deadline = time.monotonic() + timeout
        while not settled():
            if server.process.poll() is not None:
                raise server.failure("exited while settling")
            if time.monotonic() > deadline:
                raise server.failure(f"did not settle within {timeout:g} s")
            time.sleep(0.02)
    return Weight(after_handshake, rss_kib(server.pid))


def holds_gateway(home: Path, pid: int) -> Callable[[], bool]:
    """True once process ``pid`` holds a connected gateway for the state directory ``home``."""

    def check() -> bool:
        status = read_status(home / "gateway" / "status.json")
        return status is not None and status.pid == pid and status.connected(time.time())

    return check


def our_env(emulator: RunningEmulator, home: str) -> dict[str, str]:
    return {
        **os.environ,
        "DISCORD_BOT_TOKEN": emulator.token,
        "DISCORD_CHANNEL_ID": emulator.channel_id,
        "DISCORD_OWNER_IDS": emulator.owner_user_id,
        "DISCORD_API_BASE": emulator.api_base,
        "DISCORD_MCP_HOME": home,
    }


def weigh_ours(argv: list[str], emulator: RunningEmulator, expected: frozenset[str]) -> Weight:
    with (
        tempfile.TemporaryDirectory() as home,
        StdioServer(argv, our_env(emulator, home), "discord-mcp") as server,
    ):
        return idle_rss(server, expected, holds_gateway(Path(home), server.pid))


def weigh_minimal(emulator: RunningEmulator) -> Weight:
    with (
        tempfile.TemporaryDirectory() as home,
        StdioServer(MINIMAL, our_env(emulator, home), "minimal server") as server,
    ):
        return idle_rss(server, MINIMAL_TOOLS)


def mib(kib: float) -> str:
    return f"{kib / 1024:6.1f} MiB"


QUICK = ("--rounds", "2")
"""``--quick``: the same checks on fewer rounds."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    add_server_option(parser)
    args = parse_arguments(parser, QUICK)
    ours_argv = server_argv(args.server_command)
    expected = our_tools()
    ours: list[Weight] = []
    minimal: list[Weight] = []
    with start_in_thread(rate_limit_scale=0.1) as emulator:
        for round_number in range(args.rounds):
            # Alternate which goes first, so neither always runs on a cooler machine.
            if round_number % 2:
                minimal.append(weigh_minimal(emulator))
                ours.append(weigh_ours(ours_argv, emulator, expected))
            else:
                ours.append(weigh_ours(ours_argv, emulator, expected))
                minimal.append(weigh_minimal(emulator))
    if not ours:
        raise BenchFailure("--rounds must be at least 1")
    ours_handshake = statistics.median(w.after_handshake for w in ours)
    ours_idle = statistics.median(w.idle for w in ours)
    minimal_handshake = statistics.median(w.after_handshake for w in minimal)
    minimal_idle = statistics.median(w.idle for w in minimal)
    print(f"resident memory (RSS), median of {args.rounds} rounds each, alternating:")
    print("                                    after handshake   idle")
    print(f"  minimal FastMCP server (1 tool): {mib(minimal_handshake)}   {mib(minimal_idle)}")
    print(
        f"  discord-mcp ({len(expected)} tools, gateway) : {mib(ours_handshake)}   {mib(ours_idle)}"
    )
    print(
        f"  ratio after handshake {ours_handshake / minimal_handshake:.3f}, "
        f"idle {ours_idle / minimal_idle:.3f}"
    )
    ratio = ours_idle / minimal_idle
    relative = ratio <= BUDGET_RATIO
    print(
        f"  budget: idle <= {BUDGET_RATIO}x the minimal server: "
        f"{'OK' if relative else 'OVER BUDGET'}"
    )
    absolute = ours_idle / 1024 <= BUDGET_MB
    print(
        f"  budget: discord-mcp idle <= {BUDGET_MB:.0f} MiB: {'OK' if absolute else 'OVER BUDGET'}"
    )
    return 0 if relative and absolute else OVER_BUDGET


if __name__ == "__main__":
    run_main(main)
