"""``discord-mcp emulator``: serve a local Discord until Ctrl-C or SIGTERM.

Everything it prints goes to stderr: first the owner's page, then the URLs, the ids of the
startup world, and the environment that points discord-mcp at it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType
from urllib.parse import quote

from discord_mcp import heap
from discord_mcp.emulator.config import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    DEFAULT_TOKEN,
    MAX_RATE_LIMIT_SCALE,
)
from discord_mcp.emulator.outside import beyond_loopback_notice, check_binding, is_loopback
from discord_mcp.emulator.server import RunningEmulator, start_in_thread


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= MAX_RATE_LIMIT_SCALE:
        raise argparse.ArgumentTypeError(
            f"must be greater than 0 and at most {MAX_RATE_LIMIT_SCALE:g}"
        )
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("must be between 0 and 65535")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="discord-mcp emulator",
        description=(
            "Run a local Discord (REST v10, the gateway and a control API) for trying "
            "discord-mcp without a Discord account. Stop it with Ctrl-C."
        ),
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to listen on (%(default)s)")
    parser.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help="port, 0 for any free one (%(default)s)"
    )
    parser.add_argument(
        "--token",
        default=DEFAULT_TOKEN,
        help="the bot token it accepts (the only one); beyond loopback give your own, the "
        "built-in one is public",
    )
    parser.add_argument(
        "--control-token",
        default=None,
        help=(
            "a secret every control request and the owner's page must carry (Authorization: "
            "Bearer ..., or ?token= in the page's address); required with a --host beyond "
            "loopback"
        ),
    )
    parser.add_argument(
        "--rate-limit-scale",
        type=_positive,
        default=1.0,
        help="multiply every rate-limit window by this (%(default)s = Discord's speed)",
    )
    return parser


def _banner(running: RunningEmulator) -> str:
    page = f"{running.base_url}/"
    if running.control_token:
        page += "?token=" + quote(running.control_token, safe="")
    return "\n".join(
        [
            f"Open {page} : the owner's page (see and answer as Discord's people)",
            f"discord-mcp emulator: a local Discord at {running.base_url}",
            f"  REST API:     {running.api_base}",
            f"  gateway:      {running.gateway_url}",
            f"  control API:  {running.base_url}/_emulator/state",
            f"  guild {running.guild_id}, channel #agents {running.channel_id}",
            f"  bot user {running.bot_user_id}, owner user {running.owner_user_id}",
            "",
            "Point discord-mcp at it:",
            f"  export DISCORD_API_BASE={running.api_base}",
            f"  export DISCORD_GATEWAY_URL={running.gateway_url}",
            "  export DISCORD_BOT_TOKEN="
            # Beyond loopback it is a secret of the user's: not for a terminal's scrollback.
            + (running.token if is_loopback(running.host) else "<the --token you gave>"),
            f"  export DISCORD_CHANNEL_ID={running.channel_id}",
            f"  export DISCORD_OWNER_IDS={running.owner_user_id}",
            "",
            "Press Ctrl-C to stop.",
        ]
    )


def _say(text: str) -> None:
    # stderr only: stdout stays free, as for every discord-mcp command.
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def main(argv: list[str]) -> int:
    """Run the emulator until SIGINT or SIGTERM; returns the exit code."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already explained on stderr
        return exc.code if isinstance(exc.code, int) else 2
    try:
        check_binding(args.host, args.control_token, args.token)
    except ValueError as exc:
        _say(f"discord-mcp emulator: will not serve: {exc}")
        return 2
    if not is_loopback(args.host):
        _say(f"discord-mcp emulator: {beyond_loopback_notice(args.host)}")
    try:
        running = start_in_thread(
            args.host,
            args.port,
            token=args.token,
            rate_limit_scale=args.rate_limit_scale,
            control_token=args.control_token,
        )
    except (OSError, ValueError, RuntimeError) as exc:
        _say(f"discord-mcp emulator: cannot start on {args.host}:{args.port}: {exc}")
        return 1
    stop_requested = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop_requested.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        _say(_banner(running))
        heap.settled()  # a long-lived process, loaded (discord_mcp.heap)
        stop_requested.wait()
        _say("discord-mcp emulator: stopping")
    finally:
        running.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
