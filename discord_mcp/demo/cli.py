"""``discord-mcp demo``: the whole loop on this machine, with nothing to set up.

It starts the emulator (a local Discord, with the owner's page at ``/``), ``discord-watch``
with a demo project, both on a fresh state directory in a temporary folder, and the scripted
agent (``agent.py``) talking MCP to a real ``discord-mcp`` server. The page's URL is the first
line on stdout; what the agent does follows, one line each. Logs of the server and the daemon
stay in the temporary folder, which is removed when the demo stops (Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from discord_mcp.emulator.cli import _port
from discord_mcp.emulator.config import DEFAULT_HOST, DEFAULT_PORT
from discord_mcp.emulator.server import RunningEmulator, start_in_thread

PROJECT = "demo"
WATCH_READY_S = 20.0
_WATCH = [sys.executable, "-c", "from discord_mcp.watch.cli import main; raise SystemExit(main())"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="discord-mcp demo",
        description=(
            "Watch an agent ask you questions and answer them in a browser: a local Discord "
            "(the emulator) with its owner's page, discord-watch, and a scripted agent using a "
            "real discord-mcp server. No Discord account, no model. Stop it with Ctrl-C."
        ),
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to listen on (%(default)s)")
    parser.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help="port, 0 for any free one (%(default)s)"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="play the agent's script this many times, then stop (default 0: until Ctrl-C)",
    )
    parser.add_argument(
        "--pause",
        type=float,
        default=1.5,
        help="seconds between one answer and the next question (%(default)s)",
    )
    parser.add_argument(
        "--no-watch",
        action="store_true",
        help="do not start discord-watch (the server holds the gateway itself)",
    )
    return parser


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def demo_environment(running: RunningEmulator, home: Path, roots: Path) -> dict[str, str]:
    """The environment of the demo's processes: this process's, minus any Discord settings of
    the user's own (their .env stays out of it), plus the emulator's."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DISCORD_", "CLAUDE_CODE_SESSION"))
        and key not in ("PROJECT_NAME", "POLL_INTERVAL_SECONDS")
    }
    env.update(
        {
            "DISCORD_BOT_TOKEN": running.token,
            "DISCORD_CHANNEL_ID": running.channel_id,
            "DISCORD_OWNER_IDS": running.owner_user_id,
            "DISCORD_API_BASE": running.api_base,
            "DISCORD_GATEWAY_URL": running.gateway_url,
            "DISCORD_MCP_HOME": str(home),
            "DISCORD_WATCH_ROOTS": str(roots),
            "PROJECT_NAME": PROJECT,
            "POLL_INTERVAL_SECONDS": "1",
        }
    )
    return env


def _holder_ready(home: Path) -> bool:
    from discord_mcp.relay.holder import read_status

    status = read_status(home / "gateway" / "status.json")
    return status is not None and status.connected(time.time())


@contextlib.contextmanager
def _watch(env: dict[str, str], cwd: Path, home: Path, log: Path) -> Iterator[None]:
    """``discord-watch`` for the demo, until it holds the gateway; stopped at the end."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            _WATCH, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=out
        )
    try:
        deadline = time.monotonic() + WATCH_READY_S
        while not _holder_ready(home):
            if process.poll() is not None:
                raise RuntimeError(f"discord-watch stopped at once; see {log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"discord-watch did not connect in {WATCH_READY_S:.0f} s")
            time.sleep(0.1)
        yield
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def _banner(running: RunningEmulator, folder: Path) -> list[str]:
    return [
        f"Open {running.base_url}/ : the owner's page of a local Discord.",
        "An agent is about to ask you questions there. Answer as 'Owner' with a click, a "
        "reply or a reaction; pick 'stranger' at the top to see a refusal.",
        f"(discord-watch and the agent's discord-mcp use {running.api_base}; state and logs "
        f"in {folder}, removed at the end.)",
        "Press Ctrl-C to stop.",
        "",
    ]


def _run(args: argparse.Namespace, folder: Path) -> int:
    from discord_mcp.demo.agent import AgentError, run_agent, server_argv
    from discord_mcp.runs.projects import ProjectRegistry

    home, project = folder / "home", folder / PROJECT
    project.mkdir()
    try:
        running = start_in_thread(args.host, args.port)
    except (OSError, RuntimeError, ValueError) as exc:
        sys.stderr.write(f"discord-mcp demo: cannot start on {args.host}:{args.port}: {exc}\n")
        return 1
    with running:
        # Through the control API: the emulator's state belongs to its own thread's loop.
        httpx.post(
            running.base_url + "/_emulator/users", json={"username": "stranger"}
        ).raise_for_status()
        for line in _banner(running, folder):
            _say(line)
        env = demo_environment(running, home, folder)
        ProjectRegistry(home, allowed_roots=[folder]).add(PROJECT, project, ["claude"], "claude")
        watch = (
            contextlib.nullcontext()
            if args.no_watch
            else _watch(env, project, home, folder / "discord-watch.log")
        )
        with watch, (folder / "discord-mcp.log").open("wb") as server_log:
            if not args.no_watch:
                _say("discord-watch: running, holding the gateway")

            def narrate(text: str) -> None:
                _say(f"agent: {text}")

            try:
                asyncio.run(
                    run_agent(
                        server_argv(),
                        env,
                        project,
                        server_log,
                        narrate,
                        rounds=args.rounds,
                        pause=args.pause,
                    )
                )
            except AgentError as exc:
                sys.stderr.write(f"discord-mcp demo: {exc}\n")
                return 1
    return 0


def main(argv: list[str]) -> int:
    """Run the demo until Ctrl-C, SIGTERM, or the end of ``--rounds``; returns the exit code."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        with tempfile.TemporaryDirectory(prefix="discord-mcp-demo-") as name:
            try:
                return _run(args, Path(name).resolve())
            except KeyboardInterrupt:
                _say("demo: stopping")
                return 0
            except RuntimeError as exc:
                sys.stderr.write(f"discord-mcp demo: {exc}\n")
                return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
