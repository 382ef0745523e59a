"""The run engine's ``busy`` setting with the REAL Claude Code against the scripted model server:
``steer`` hands a message to the running job (one CLI process answers both), ``queue`` (the
default) runs it as the next job, exactly as before steering existed.

The end-to-end tests from Discord, mid-turn and across a daemon restart, are in
tests/e2e/test_steer_e2e.py.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from discord_mcp.runs import ProjectRegistry, RunEngine, RunLimits
from discord_mcp.state.files import off_loop
from tests.support.agent_clis import CLAUDE_MODEL, ClaudeCli, require_cli
from tests.support.fake_agents import RecordingNotifier
from tests.support.model_server import ModelRequest, ModelServer, Reply, Text
from tests.support.waiting import until

pytestmark = pytest.mark.e2e

LIMITS = RunLimits(poll_interval=0.02, job_timeout=90.0, kill_grace=2.0)
JOB_TIMEOUT = 120.0
SECOND = "a second thought"


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server
        assert not server.outbound_attempts, server.outbound_attempts


class Brain:
    """Holds its answer to the first task until released; says which prompts it has seen."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: ModelRequest) -> Reply:
        said = request.user_texts()
        if said and said[-1] == "first task please":
            self.asked.set()
            self.release.wait(90)
            return Text("Done with the first task.")
        seen = [t for t in said if t in ("first task please", SECOND)]
        return Text("Seen: " + " | ".join(seen))


async def engine(tmp_path: Path, model: ModelServer, busy: str) -> tuple[RunEngine, ClaudeCli]:
    require_cli("claude")
    state_dir = tmp_path / "state"
    workdir = tmp_path / "project"
    workdir.mkdir()
    registry = ProjectRegistry(state_dir, allowed_roots=[tmp_path])
    await off_loop(
        functools.partial(registry.add, approvals="off", busy=busy),
        "app",
        workdir,
        ["claude"],
        "claude",
        {"claude": ["--model", CLAUDE_MODEL]},
    )
    cli = ClaudeCli(root=tmp_path / "claude", model_url=model.base_url, proxy_url=model.proxy_url)
    made = RunEngine(
        state_dir=state_dir,
        projects=registry,
        notifier=RecordingNotifier(),
        limits=LIMITS,
        env={},
        tool_env={"claude": cli.env()},
    )
    return made, cli


async def test_steer_after_the_models_last_step_runs_one_more_turn_of_the_same_job(
    tmp_path: Path, model_server: ModelServer
) -> None:
    """The model had already answered without a tool call when the message reached Claude Code:
    the same process runs it as a second turn of the same session; the job's answer is both."""
    brain = Brain()
    model_server.script(brain, repeat=True)
    made, cli = await engine(tmp_path, model_server, "steer")
    notifier = made.notifier
    assert isinstance(notifier, RecordingNotifier)
    try:
        async with made:
            await made.start_session("1001", "app")
            first = await made.submit("1001", "m1", "first task please", "owner", debounce=False)
            await until(brain.asked.is_set, JOB_TIMEOUT, "the held model request")
            steered = await made.submit("1001", "m2", SECOND, "owner", debounce=False)
            brain.release.set()
            done = await notifier.wait_finished(first.job_id, JOB_TIMEOUT)
            jobs = made.jobs("1001")
    finally:
        brain.release.set()
        cli.close()
    assert steered.job_id == first.job_id  # the running job took it
    assert [j.job_id for j in jobs] == [first.job_id]
    assert done.state == "success", model_server.describe()
    assert done.final_text == (
        "Done with the first task.\n\nSeen: first task please | a second thought"
    )
    assert done.prompt == f"first task please\n\n{SECOND}"
    turns = model_server.turn_requests()
    assert len(turns) == 2
    assert turns[1].contains("Done with the first task.")  # the same session's second turn
    assert len(notifier.of("job_started")) == 1


async def test_busy_queue_runs_a_message_written_mid_turn_as_the_next_job(
    tmp_path: Path, model_server: ModelServer
) -> None:
    brain = Brain()
    model_server.script(brain, repeat=True)
    made, cli = await engine(tmp_path, model_server, "queue")
    notifier = made.notifier
    assert isinstance(notifier, RecordingNotifier)
    try:
        async with made:
            await made.start_session("1002", "app")
            first = await made.submit("1002", "m1", "first task please", "owner", debounce=False)
            await until(brain.asked.is_set, JOB_TIMEOUT, "the held model request")
            queued = await made.submit("1002", "m2", SECOND, "owner", debounce=False)
            assert queued.job_id != first.job_id
            assert queued.state == "queued"
            brain.release.set()
            one = await notifier.wait_finished(first.job_id, JOB_TIMEOUT)
            two = await notifier.wait_finished(queued.job_id, JOB_TIMEOUT)
    finally:
        brain.release.set()
        cli.close()
    assert (one.state, two.state) == ("success", "success"), model_server.describe()
    assert one.final_text == "Done with the first task."
    assert two.final_text == "Seen: first task please | a second thought"
    assert two.resumed
    assert two.session_key == one.session_key
    first_turn, second_turn = model_server.turn_requests()
    assert not first_turn.contains(SECOND)
    assert second_turn.contains("Done with the first task.")
    assert len(notifier.of("job_started")) == 2
