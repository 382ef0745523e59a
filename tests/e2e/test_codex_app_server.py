"""The pinned Codex's ``codex app-server`` through :mod:`discord_mcp.runs.codex_app`, against the
scripted model server: a message sent while a turn runs reaches that turn (``turn/steer``), and
an interrupt ends it (``turn/interrupt``), issue 34."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import threading
from pathlib import Path

from discord_mcp.runs.adapters.codex_app import CodexAppServer
from discord_mcp.runs.adapters.codex_steer import steer_message
from tests.support.agent_clis import CodexCli
from tests.support.model_server import ModelRequest, ModelServer, Reply, Text
from tests.support.waiting import until


class Held:
    """Holds the first turn's model call until released; answers what it was told."""

    def __init__(self) -> None:
        self.held = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: ModelRequest) -> Reply:
        said = " ".join(request.user_texts())
        if "second thought" in said:
            return Text("Both thoughts, at once.")
        if "a slow one" in said:
            self.held.set()
            self.release.wait(60)
            return Text("Slow answer.")
        return Text("(done)")


def _server(tmp_path: Path, model_server: ModelServer) -> CodexAppServer:
    cli = CodexCli(root=tmp_path / "codex", model_url=model_server.base_url)
    return CodexAppServer([str(cli.executable), "app-server"], env=cli.env(), cwd=cli.workdir)


async def test_a_message_sent_while_a_codex_turn_runs_reaches_that_turn(
    tmp_path: Path, model_server: ModelServer
) -> None:
    brain = Held()
    model_server.script(brain, repeat=True)
    async with _server(tmp_path, model_server) as codex:
        await codex.start_thread(sandbox="read-only", approval_policy="never")
        turn = await codex.start_turn("a slow one")
        await until(brain.held.is_set, 90, what="the slow turn")
        await codex.steer("second thought")
        brain.release.set()
        end = await asyncio.wait_for(codex.turn_end(), 90)
    assert end.status == "completed"
    assert codex.turn_id == turn  # the same turn
    assert "Both thoughts, at once." in end.messages
    steered = [r for r in model_server.requests if r.contains("second thought")]
    assert steered
    assert all(r.contains("a slow one") for r in steered)  # in the same conversation


async def test_an_interrupt_ends_the_running_codex_turn(
    tmp_path: Path, model_server: ModelServer
) -> None:
    brain = Held()
    model_server.script(brain, repeat=True)
    async with _server(tmp_path, model_server) as codex:
        await codex.start_thread(sandbox="read-only", approval_policy="never")
        await codex.start_turn("a slow one")
        await until(brain.held.is_set, 90, what="the slow turn")
        await codex.interrupt()
        end = await asyncio.wait_for(codex.turn_end(), 90)
        brain.release.set()
    assert end.status == "interrupted"
    assert "Slow answer." not in end.messages


async def _bridge(tmp_path: Path, model_server: ModelServer) -> asyncio.subprocess.Process:
    cli = CodexCli(root=tmp_path / "codex", model_url=model_server.base_url)
    bridge = [sys.executable, "-m", "discord_mcp.runs.adapters.codex_bridge"]
    options = ["--sandbox", "read-only", "--approval", "untrusted"]
    argv = [*bridge, *options, "--", str(cli.executable), "app-server"]
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**cli.env(), "PYTHONPATH": str(Path(__file__).parents[2])},
        cwd=cli.workdir,
    )


async def _events(proc: asyncio.subprocess.Process) -> list[dict[str, object]]:
    assert proc.stdin is not None
    proc.stdin.close()  # the input ends (the daemon ends it once it saw the turn end)
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    events = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    assert events, err.decode()
    return events


async def test_the_bridge_hands_a_line_written_mid_turn_to_that_turn(
    tmp_path: Path, model_server: ModelServer
) -> None:
    brain = Held()
    model_server.script(brain, repeat=True)
    proc = await _bridge(tmp_path, model_server)
    assert proc.stdin is not None
    proc.stdin.write((steer_message("a slow one")).encode())
    await until(brain.held.is_set, 90, what="the slow turn")
    proc.stdin.write((steer_message("second thought")).encode())
    await proc.stdin.drain()
    brain.release.set()
    events = await _events(proc)
    assert events[0]["type"] == "thread.started"
    assert events[-1]["type"] == "turn.completed"
    said = [e["item"]["text"] for e in events if e["type"] == "item.completed"]  # type: ignore
    assert "Both thoughts, at once." in said
    steered = [r for r in model_server.requests if r.contains("second thought")]
    assert steered
    assert all(r.contains("a slow one") for r in steered)


async def test_a_stop_signal_interrupts_the_bridges_turn(
    tmp_path: Path, model_server: ModelServer
) -> None:
    """The turn is interrupted (turn/interrupt), and the bridge gives no verdict of its own, as
    codex exec gives none when signalled: the engine says it was stopped (not a CLI error)."""
    brain = Held()
    model_server.script(brain, repeat=True)
    proc = await _bridge(tmp_path, model_server)
    assert proc.stdin is not None
    proc.stdin.write((steer_message("a slow one")).encode())
    await until(brain.held.is_set, 90, what="the slow turn")
    proc.send_signal(signal.SIGTERM)
    assert proc.stdin is not None
    proc.stdin.close()
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    brain.release.set()
    events = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    assert [e["type"] for e in events] == ["thread.started", "turn.started"], err.decode()
    assert "stopped: the turn ended interrupted" in err.decode()
    assert proc.returncode == 1
