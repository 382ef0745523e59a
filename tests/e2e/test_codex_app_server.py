"""The pinned Codex's ``codex app-server`` through :mod:`discord_mcp.runs.codex_app`, against the
scripted model server: a message sent while a turn runs reaches that turn (``turn/steer``), and
an interrupt ends it (``turn/interrupt``), issue 34."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from discord_mcp.runs.adapters.codex_app import CodexAppServer
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
