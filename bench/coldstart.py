"""Cold start: process spawn to ``tools/list`` answered, discord-mcp beside a minimal server.

Budget (DESIGN §6): discord-mcp's median at most 1.1x the minimal FastMCP server's, measured
side by side in one run (alternating, so both see the same machine state). Every run checks
that the reply arrived and lists the server's tools (all of discord-mcp's contract tools), so
a server that exits at once or lists nothing fails (exit 2) instead of timing as fast.

    .venv/bin/python -m bench.coldstart [--runs 21] [--server-command CMD]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from bench.mcp_stdio import (
    MINIMAL,
    MINIMAL_TOOLS,
    OVER_BUDGET,
    StdioServer,
    add_server_option,
    our_tools,
    run_main,
    server_argv,
)

BUDGET_RATIO = 1.1


def spawn_to_tools_list(
    argv: list[str], env: dict[str, str], expected: frozenset[str], name: str
) -> float:
    """Seconds from spawning ``argv`` to its ``tools/list`` reply (checked to list ``expected``)."""
    start = time.perf_counter()
    with StdioServer(argv, env, name) as server:
        server.list_tools(expected)
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21)
    add_server_option(parser)
    args = parser.parse_args()
    ours = server_argv(args.server_command)
    expected = our_tools()
    with tempfile.TemporaryDirectory() as home:
        env = {
            **os.environ,
            "DISCORD_BOT_TOKEN": "bench.token.value",
            "DISCORD_CHANNEL_ID": "123456789012345678",
            "DISCORD_OWNER_IDS": "223456789012345678",
            "DISCORD_MCP_HOME": home,
            # Unroutable: proves the handshake needs no Discord at all.
            "DISCORD_API_BASE": "http://127.0.0.1:9/api/v10",
        }
        # Warm the OS file cache once each.
        spawn_to_tools_list(ours, env, expected, "discord-mcp")
        spawn_to_tools_list(MINIMAL, env, MINIMAL_TOOLS, "minimal server")
        ours_times, minimal_times = [], []
        for _ in range(args.runs):
            ours_times.append(spawn_to_tools_list(ours, env, expected, "discord-mcp"))
            minimal_times.append(spawn_to_tools_list(MINIMAL, env, MINIMAL_TOOLS, "minimal"))
    ours_median = statistics.median(ours_times)
    minimal_median = statistics.median(minimal_times)
    ratio = ours_median / minimal_median
    print(f"cold start, spawn to tools/list answered, median of {args.runs} runs each:")
    print(f"  minimal FastMCP server (1 tool): {minimal_median * 1000:7.1f} ms")
    print(f"  discord-mcp ({len(expected)} tools)       : {ours_median * 1000:7.1f} ms")
    verdict = "OK" if ratio <= BUDGET_RATIO else "OVER BUDGET"
    print(f"  ratio {ratio:.3f} (budget <= {BUDGET_RATIO}) {verdict}")
    return 0 if ratio <= BUDGET_RATIO else OVER_BUDGET


if __name__ == "__main__":
    run_main(main)
