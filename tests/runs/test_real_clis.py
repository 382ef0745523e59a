"""The run engine with the REAL claude, codex and gemini CLIs against the scripted model server.

Each CLI is configured by the end-to-end harness (tests/support/agent_clis.py: isolated home,
model server, retries and telemetry off); the engine gets that environment per tool and runs
the CLI itself. The scripted model proves what the CLI sent: a resumed second job carries the
first turn, a tool switch keeps each tool's own session, and every run's agent is offered the
``discord`` MCP server the engine registered, which receives the run's thread id.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from discord_mcp.runs import (
    McpRegistration,
    ProjectRegistry,
    RunEngine,
    RunLimits,
    Tool,
)
from discord_mcp.state.files import off_loop
from tests.support.agent_clis import (
    CLAUDE_MODEL,
    CLI_CLASSES,
    CLI_NAMES,
    GEMINI_MODEL,
    AgentCli,
    CliName,
)
from tests.support.echo_mcp_server import EchoServer
from tests.support.fake_agents import RecordingNotifier
from tests.support.model_server import ModelServer, Text, ToolCall, quote_tool_result

pytestmark = pytest.mark.e2e

PROBE = Path(__file__).resolve().parents[1] / "support" / "env_probe.py"
LIMITS = RunLimits(poll_interval=0.02, job_timeout=60.0, kill_grace=2.0)
# Pin the model where the CLI would otherwise route (Gemini) or use its own default.
PROJECT_ARGS: dict[str, list[str]] = {
    "claude": ["--model", CLAUDE_MODEL],
    "codex": [],
    "gemini": ["-m", GEMINI_MODEL],
}
JOB_TIMEOUT = 90.0


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server
        assert not server.outbound_attempts, server.outbound_attempts


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def configure(name: CliName, tmp_path: Path, model: ModelServer, workdir: Path) -> AgentCli:
    """The harness's configuration of one CLI (its home, config and environment)."""
    return CLI_CLASSES[name](
        root=tmp_path / name,
        model_url=model.base_url,
        proxy_url=model.proxy_url,
        workdir=workdir,
    )


async def engine_for(
    tmp_path: Path,
    workdir: Path,
    clis: dict[CliName, AgentCli],
    notifier: RecordingNotifier,
    mcp: McpRegistration | None = None,
) -> RunEngine:
    state_dir = tmp_path / "state"
    registry = ProjectRegistry(state_dir, allowed_roots=[tmp_path])
    tools = list(clis)
    # The servers registered here are stand-ins without an ``approve`` tool: approvals off.
    await off_loop(
        functools.partial(registry.add, approvals="off"),
        "app",
        workdir,
        tools,
        tools[0],
        {t: PROJECT_ARGS[t] for t in tools},
    )
    tool_env: dict[Tool, dict[str, str]] = {name: cli.env() for name, cli in clis.items()}
    return RunEngine(
        state_dir=state_dir,
        projects=registry,
        notifier=notifier,
        limits=LIMITS,
        env={},
        tool_env=tool_env,
        mcp=mcp,
    )


def describe(engine: RunEngine, job_id: str, model: ModelServer) -> str:
    log = engine.state_dir / "logs" / "jobs"
    parts = [model.describe()]
    for suffix in ("stdout", "stderr"):
        path = log / f"{job_id}.{suffix}"
        if path.exists():
            parts.append(f"--- {suffix}\n" + path.read_text(encoding="utf-8")[-3000:])
    return "\n".join(parts)


@pytest.mark.parametrize("name", CLI_NAMES)
async def test_two_jobs_in_a_thread_run_in_order_and_the_second_resumes_the_first(
    name: CliName, tmp_path: Path, model_server: ModelServer, workdir: Path
) -> None:
    model_server.script(Text("First answer."), Text("Second answer."))
    notifier = RecordingNotifier()
    cli = configure(name, tmp_path, model_server, workdir)
    echo = EchoServer(tmp_path / "echo")  # registered as in production, though not called
    mcp = McpRegistration(echo.argv, echo.env())
    async with await engine_for(tmp_path, workdir, {name: cli}, notifier, mcp) as engine:
        await engine.start_session("1001", "app")
        first = await engine.submit("1001", "m1", "Remember the word kumquat.", "owner")
        second = await engine.submit("1001", "m2", "Which word was it?", "owner")
        one = await notifier.wait_finished(first.job_id, JOB_TIMEOUT)
        two = await notifier.wait_finished(second.job_id, JOB_TIMEOUT)
        assert one.state == "success", describe(engine, first.job_id, model_server)
        assert two.state == "success", describe(engine, second.job_id, model_server)
    cli.close()
    assert (one.final_text, two.final_text) == ("First answer.", "Second answer.")
    assert one.session_key
    assert not one.resumed
    assert two.resumed
    assert two.session_key == one.session_key
    assert model_server.errors == []
    last = model_server.turn_requests()[-1]
    prompts = ["Remember the word kumquat.", "Which word was it?"]
    assert [t for t in last.user_texts() if t in prompts] == prompts
    assert last.contains("First answer.")


async def test_switching_tools_between_jobs_keeps_each_tools_own_session(
    tmp_path: Path, model_server: ModelServer, workdir: Path
) -> None:
    model_server.script(
        Text("claude one"), Text("codex one"), Text("gemini one"), Text("claude two")
    )
    notifier = RecordingNotifier()
    clis = {name: configure(name, tmp_path, model_server, workdir) for name in CLI_NAMES}
    async with await engine_for(tmp_path, workdir, clis, notifier) as engine:
        await engine.start_session("2002", "app", "claude")
        done = []
        for number, tool in enumerate(["claude", "codex", "gemini", "claude"]):
            await engine.set_tool("2002", tool)
            job = await engine.submit("2002", f"m{number}", f"prompt {number} for {tool}", "owner")
            finished = await notifier.wait_finished(job.job_id, JOB_TIMEOUT)
            assert finished.state == "success", describe(engine, job.job_id, model_server)
            done.append(finished)
        view = engine.session("2002")
        assert view is not None
        assert set(view.session_keys) == {"claude", "codex", "gemini"}
    for cli in clis.values():
        cli.close()
    assert [j.tool for j in done] == ["claude", "codex", "gemini", "claude"]
    assert [j.resumed for j in done] == [False, False, False, True]
    assert done[3].session_key == done[0].session_key
    turns = model_server.turn_requests()
    assert [r.api for r in turns] == ["anthropic", "openai", "gemini", "anthropic"]
    # Back on claude: its own first turn is there, the other tools' turns are not.
    assert turns[3].contains("claude one")
    assert not turns[3].contains("codex one")
    assert not turns[1].contains("claude one")


@pytest.mark.parametrize("name", CLI_NAMES)
async def test_each_run_is_offered_the_discord_server_with_its_thread_id(
    name: CliName, tmp_path: Path, model_server: ModelServer, workdir: Path
) -> None:
    echo = EchoServer(tmp_path / "echo")
    probe_log = tmp_path / "probe.jsonl"
    names = "DISCORD_THREAD_ID,ECHO_MCP_TOKEN"
    mcp = McpRegistration(
        argv=[sys.executable, str(PROBE), str(probe_log), names, "--", *echo.argv],
        env=echo.env(token="tok-run-engine"),
    )
    question = {"question": "Deploy now?", "options": ["yes", "no"]}
    model_server.script(
        ToolCall("discord", "ask_decision", question), quote_tool_result("Got {result}")
    )
    echo.answer("yes, deploy")  # answered before asked: the call returns at once
    notifier = RecordingNotifier()
    cli = configure(name, tmp_path, model_server, workdir)
    async with await engine_for(tmp_path, workdir, {name: cli}, notifier, mcp=mcp) as engine:
        await engine.start_session("3003", "app")
        job = await engine.submit("3003", "m1", "Ask the owner whether to deploy.", "owner")
        done = await notifier.wait_finished(job.job_id, JOB_TIMEOUT)
        assert done.state == "success", describe(engine, job.job_id, model_server)
        calls = [c for c in notifier.of("job_activity", job.job_id) if c.activity]
    cli.close()
    [call] = echo.calls()
    assert call["arguments"] == question
    assert done.final_text is not None
    assert "yes, deploy" in done.final_text
    probes = [json.loads(line) for line in probe_log.read_text(encoding="utf-8").splitlines()]
    assert probes
    assert all(
        p == {"DISCORD_THREAD_ID": "3003", "ECHO_MCP_TOKEN": "tok-run-engine"} for p in probes
    )
    seen = {tc.name for c in calls if c.activity for tc in c.activity.tool_calls}
    assert seen <= {"mcp__discord__ask_decision", "mcp_discord_ask_decision"}
    # Nothing of ours was left in the user's project.
    assert sorted(p.name for p in workdir.iterdir()) == []
