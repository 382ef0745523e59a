"""The run engine with the REAL Gemini CLI in ``--output-format json`` mode (seed 000, issue 34)
against the scripted model server: where stream-json is not available the daemon's setting
(``DISCORD_WATCH_GEMINI_OUTPUT=json``) or the project's own ``--output-format json`` runs it in
json mode, and its single result gives the answer, the session (the second job resumes it) and
the usage."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from discord_mcp.runs import McpRegistration, ProjectRegistry, RunEngine, Tool
from discord_mcp.runs.adapters.gemini_json import OUTPUT_VARIABLE
from discord_mcp.state.files import off_loop
from tests.runs.test_real_clis import (
    JOB_TIMEOUT,
    LIMITS,
    configure,
    describe,
    model_server,
    workdir,
)
from tests.support.agent_clis import GEMINI_MODEL
from tests.support.echo_mcp_server import EchoServer
from tests.support.fake_agents import RecordingNotifier
from tests.support.model_server import ModelServer, Text

pytestmark = pytest.mark.e2e
__all__ = ["model_server", "workdir"]  # the fixtures, shared


@pytest.mark.parametrize("setting", ["environment", "project"])
async def test_gemini_in_json_mode_answers_and_resumes_its_session(
    setting: str, tmp_path: Path, model_server: ModelServer, workdir: Path
) -> None:
    model_server.script(Text("First answer."), Text("Second answer."))
    notifier = RecordingNotifier()
    cli = configure("gemini", tmp_path, model_server, workdir)
    echo = EchoServer(tmp_path / "echo")
    state_dir = tmp_path / "state"
    args = ["-m", GEMINI_MODEL]
    env = cli.env()
    if setting == "project":
        args += ["--output-format", "json"]
    else:
        env[OUTPUT_VARIABLE] = "json"
    registry = ProjectRegistry(state_dir, allowed_roots=[tmp_path])
    await off_loop(
        functools.partial(registry.add, approvals="off"),
        "app",
        workdir,
        ["gemini"],
        "gemini",
        {"gemini": args},
    )
    tool_env: dict[Tool, dict[str, str]] = {"gemini": env}
    engine = RunEngine(
        state_dir=state_dir,
        projects=registry,
        notifier=notifier,
        limits=LIMITS,
        env={},
        tool_env=tool_env,
        mcp=McpRegistration(echo.argv, echo.env()),
    )
    async with engine:
        await engine.start_session("1001", "app")
        first = await engine.submit("1001", "m1", "Remember the word kumquat.", "owner")
        second = await engine.submit("1001", "m2", "Which word was it?", "owner")
        one = await notifier.wait_finished(first.job_id, JOB_TIMEOUT)
        two = await notifier.wait_finished(second.job_id, JOB_TIMEOUT)
        assert one.state == "success", describe(engine, first.job_id, model_server)
        assert two.state == "success", describe(engine, second.job_id, model_server)
        stdout = (state_dir / "logs" / "jobs" / f"{first.job_id}.stdout").read_text("utf-8")
    cli.close()
    assert stdout.startswith("{\n")
    assert '"response"' in stdout
    assert '"type"' not in stdout  # no stream-json event
    assert (one.final_text, two.final_text) == ("First answer.", "Second answer.")
    assert one.session_key
    assert two.resumed
    assert two.session_key == one.session_key
    assert one.usage is not None
    assert one.usage.output_tokens
    last = model_server.turn_requests()[-1]
    assert last.contains("Remember the word kumquat.")
    assert last.contains("First answer.")
