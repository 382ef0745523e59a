"""``discord-mcp demo``: the whole loop on this machine, with nothing to set up.

It starts the emulator (a local Discord, with the owner's page at ``/``), ``discord-watch``
with a demo project, both on a fresh state directory in a temporary folder, and the scripted
agent (``agent.py``) talking MCP to a real ``discord-mcp`` server: questions, an approval card,
then a run thread where ``discord-watch`` runs the stand-in agent CLI (``stand_in.py``). Once
every card of a round is answered it waits for Enter (``--loop``: plays on; ``--rounds N``:
stops after N). With ``--agent claude|codex|gemini`` the agent is the real CLI instead, run by
``discord-watch`` in a run thread against the scripted model (``agents.py``, ``model/``).
The page's URL is the first line on stdout; what happens follows, one line each. Logs of the
server and the daemon stay in the temporary folder, which is removed when the demo stops
(Ctrl-C or SIGTERM).
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
from typing import TYPE_CHECKING

import httpx

from discord_mcp import heap
from discord_mcp.demo.agents import AGENTS
from discord_mcp.emulator.cli import _port
from discord_mcp.emulator.config import DEFAULT_HOST, DEFAULT_PORT
from discord_mcp.emulator.server import RunningEmulator, start_in_thread
from discord_mcp.team.presence import THREAD_NAME as MACHINES_THREAD

if TYPE_CHECKING:
    from discord_mcp.runs.projects import ProjectRegistry

PROJECT = "demo"
WATCH_READY_S = 20.0
_WATCH = [sys.executable, "-c", "from discord_mcp.watch.cli import main; raise SystemExit(main())"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="discord-mcp demo",
        description=(
            "Watch an agent ask you questions and answer them in a browser: a local Discord "
            "(the emulator) with its owner's page, discord-watch, and a scripted agent using a "
            "real discord-mcp server. No Discord account, no model. Stop it with Ctrl-C. "
            "`discord-mcp demo model` starts the scripted model alone, for discord-watch "
            "submit with a real CLI (see its --help)."
        ),
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to listen on (%(default)s)")
    parser.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help="port, 0 for any free one (%(default)s)"
    )
    parser.add_argument(
        "--agent",
        choices=AGENTS,
        help="run this real agent CLI (on PATH or in the project's .agent-clis) against a "
        "scripted local model, in a discord-watch run thread: its question, its approval "
        "card, offline, before you create a bot",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="play the script (with --agent: jobs) this many times, then stop (default 0: "
        "once, then wait for Enter to play again, or Ctrl-C)",
    )
    parser.add_argument(
        "--loop",
        action="store_true",
        help="play the script again and again without waiting (until Ctrl-C)",
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
        _stop_runs(home)


def _stop_runs(home: Path, grace: float = 10.0) -> None:
    """Stop the agents discord-watch left running. A run outlives its daemon on purpose (the
    next start adopts it), but the demo's state is about to be removed: an agent still alive
    would write into it afterwards (Gemini CLI saves its chat as it exits)."""
    from discord_mcp.runs.engine.launch import process_from_status
    from discord_mcp.runs.processes.runner import stop_group
    from discord_mcp.runs.processes.spawner import group_members, is_alive

    groups = []
    for status in sorted((home / "runs" / "jobs").glob("*/status.json")):
        process = process_from_status(status)
        if process is not None and (is_alive(process) or group_members(process.pid)):
            stop_group(process, signal.SIGTERM)
            groups.append(process.pid)
    deadline = time.monotonic() + grace
    while any(group_members(g) for g in groups) and time.monotonic() < deadline:
        time.sleep(0.1)
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if group_members(group):
                os.killpg(group, signal.SIGKILL)


def _banner(running: RunningEmulator, folder: Path, agent: str | None) -> list[str]:
    who = f"{agent} (the real CLI, with a scripted local model)" if agent else "An agent"
    return [
        f"Open {running.base_url}/ : the owner's page of a local Discord.",
        f"{who} is about to ask you there: a question, then an approval card. Answer as "
        "'Owner' with a click, a reply or a reaction; pick 'stranger' at the top to see a "
        "refusal.",
        f"(discord-watch and the agent's discord-mcp use {running.api_base}; state and logs "
        f"in {folder}, removed at the end.)",
        "Press Ctrl-C to stop.",
        "",
    ]


async def _press_enter() -> bool:
    """Wait for Enter (True: play again); without a terminal, wait until stopped."""
    _say("Press Enter to play again, or Ctrl-C to stop (the page stays up).")
    line = await asyncio.to_thread(sys.stdin.readline)
    if line:
        return True
    await asyncio.Event().wait()  # no terminal: keep the page up until Ctrl-C or SIGTERM
    return False


def _run(args: argparse.Namespace, folder: Path) -> int:
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
        for line in _banner(running, folder, args.agent):
            _say(line)
        env = demo_environment(running, home, folder)
        registry = ProjectRegistry(home, allowed_roots=[folder])
        if args.agent:
            return _run_real_agent(args, folder, running, env, registry)
        registry.add(PROJECT, project, ["claude"], "claude")
        return _run_scripted(args, folder, env, project, home, running)


def _stand_in(folder: Path) -> Path:
    """A directory whose ``claude`` is the plain demo's stand-in agent CLI (no model)."""
    directory = folder / "bin"
    directory.mkdir()
    script = directory / "claude"
    body = "from discord_mcp.demo.stand_in import main\nraise SystemExit(main())\n"
    script.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    script.chmod(0o755)
    return directory


class RunThread:
    """The plain demo's run thread: the owner starts a job, the stand-in agent asks there."""

    def __init__(self, running: RunningEmulator) -> None:
        self._running = running
        self._thread: str | None = None

    async def play(self) -> None:
        """Start (then continue) the run, and wait until its job ended."""
        from discord_mcp.demo.stand_in import QUESTION

        base = self._running.base_url + "/_emulator"
        owner = self._running.owner_user_id
        async with httpx.AsyncClient(base_url=base, timeout=10) as control:
            ended = await self._ended(control)
            where = self._thread or self._running.channel_id
            text = (
                "next job: the release checks again"
                if self._thread
                else (f"!start {PROJECT} Get the release ready")
            )
            posted = await control.post(
                f"/channels/{where}/messages", json={"author_id": owner, "content": text}
            )
            posted.raise_for_status()
            _say(f"owner: {text}")
            while self._thread is None:
                await asyncio.sleep(0.3)
                channels = (await control.get("/state")).json()["channels"]
                found = [c for c in channels if c["type"] == 11 and "Get the release" in c["name"]]
                if found:
                    self._thread = found[0]["id"]
                    _say(f"run thread: {found[0]['name']} (the agent asks you there: {QUESTION})")
            while await self._ended(control) <= ended:  # noqa: ASYNC110 (another process)
                await asyncio.sleep(0.3)
            _say("run thread: the job ended; a message there would be its next job")

    async def _ended(self, control: httpx.AsyncClient) -> int:
        if self._thread is None:
            return 0
        messages = (await control.get(f"/channels/{self._thread}/messages")).json()
        return sum("Reply in this thread to continue" in m["content"] for m in messages)


def _run_scripted(
    args: argparse.Namespace,
    folder: Path,
    env: dict[str, str],
    project: Path,
    home: Path,
    running: RunningEmulator,
) -> int:
    from discord_mcp.demo.agent import AgentError, run_agent, server_argv

    run_thread = None
    if not args.no_watch:
        env = {**env, "PATH": os.pathsep.join([str(_stand_in(folder)), env.get("PATH", "")])}
        run_thread = RunThread(running)
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

        async def again() -> bool:
            return await _press_enter()

        heap.settled()  # a long-lived process, loaded (discord_mcp.heap)
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
                    again=None if args.loop else again,
                    after_round=run_thread.play if run_thread is not None else None,
                )
            )
        except AgentError as exc:
            sys.stderr.write(f"discord-mcp demo: {exc}\n")
            return 1
    return 0


def _run_real_agent(
    args: argparse.Namespace,
    folder: Path,
    running: RunningEmulator,
    env: dict[str, str],
    registry: ProjectRegistry,
) -> int:
    from discord_mcp.demo import agents
    from discord_mcp.demo.model import ModelServer
    from discord_mcp.setup.clients import from_clone

    agent: agents.Agent = args.agent
    roots = (Path.cwd(), *([Path(__file__).resolve().parents[2]] if from_clone() else []))
    cli = agents.find_cli(agent, path=os.environ.get("PATH"), roots=roots)
    if cli is None:
        sys.stderr.write(
            f"discord-mcp demo: no `{agent}` on PATH nor in .agent-clis/ here. Install it "
            f"(see the README's 'The agent CLIs'), or run scripts/install-agent-clis in a "
            "clone, then try again.\n"
        )
        return 1
    project, home = folder / PROJECT, folder / "home"
    with ModelServer(agents.job_step, repeat=True) as model:
        env = {**env, **agents.environment(agent, folder / "agent-home", model.base_url)}
        env["PATH"] = os.pathsep.join([str(cli.parent), env.get("PATH", os.defpath)])
        registry.add(PROJECT, project, [agent], agent, {agent: agents.project_args(agent)})
        with _watch(env, project, home, folder / "discord-watch.log"):
            _say(f"discord-watch: running, with {agent} from {cli}")
            control = httpx.Client(base_url=running.base_url + "/_emulator", timeout=10)
            with control:
                control.post(
                    f"/channels/{running.channel_id}/messages",
                    json={
                        "author_id": running.owner_user_id,
                        "content": f"!start {PROJECT} {agents.PROMPT}",
                    },
                ).raise_for_status()
                _say(f"owner: !start {PROJECT} {agents.PROMPT}")
                _follow_run(control, running, args.rounds)
    return 0


def _follow_run(control: httpx.Client, running: RunningEmulator, rounds: int) -> None:
    """Narrate the run thread from the emulator's state until ``rounds`` jobs ended (0: until
    stopped)."""
    from discord_mcp.demo.agents import QUESTION

    said: set[str] = set()
    finished = 0
    while not rounds or finished < rounds:
        time.sleep(0.5)
        state = control.get("/state").json()
        for channel in state.get("channels", []):
            if channel.get("type") != 11 or channel.get("name") == MACHINES_THREAD:
                continue  # the machines' thread holds presence records, no run
            if (key := f"thread {channel['id']}") not in said:
                said.add(key)
                _say(f"run thread: {channel.get('name')}")
            for message in control.get(f"/channels/{channel['id']}/messages").json():
                text = str(message.get("content", ""))
                kind = (
                    "approval card: the agent asks to run a command"
                    if "**Approval needed**" in text
                    else "question card: the agent asks you"
                    if QUESTION in text and message.get("components")
                    else "the job ended: write in the thread for the next one"
                    if "Reply in this thread to continue" in text
                    else None
                )
                if kind is None or (key := f"{kind} {message['id']}") in said:
                    continue
                said.add(key)
                _say(kind)
                finished += kind.startswith("the job ended")


def main(argv: list[str]) -> int:
    """Run the demo until Ctrl-C, SIGTERM, or the end of ``--rounds``; returns the exit code."""
    if argv[:1] == ["model"]:
        from discord_mcp.demo.model_cli import main as model_main

        return model_main(argv[1:])
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
