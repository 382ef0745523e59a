"""What the owner gets from an ACP agent's thread (issue 34, seed 003), with the scripted ACP
agent (tests/support/fake_acp_agent.py): the model switch through the session's own model
option, a denial's note as the agent's next prompt, the watchdog that ends a turn gone silent,
and a daemon that stops ending its agents' turns and saying why.

Time is the engine's injected clock, moved by the test: nothing waits for the watchdog's real
half hour.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import time
from pathlib import Path

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs import ProjectRegistry
from discord_mcp.runs.acp.agents import AgentRegistry
from discord_mcp.runs.contract import PermissionAsk, PermissionChoice, RunLimits
from tests.runs.conftest import FAST, EngineFactory, alive
from tests.support.fake_agents import RecordingNotifier
from tests.support.waiting import until

FAKE = Path(__file__).resolve().parents[1] / "support" / "fake_acp_agent.py"


class MovableClock:
    """The engine's clock: the real one, plus however far the test has moved it."""

    def __init__(self) -> None:
        self.offset = 0.0

    def time(self) -> float:
        return time.time() + self.offset

    def monotonic(self) -> float:
        return time.monotonic() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


@pytest.fixture
async def acp_project(state_dir: Path, registry: ProjectRegistry, workdir: Path) -> None:
    await asyncio.to_thread(AgentRegistry(state_dir).add, "fake", [sys.executable, str(FAKE)])
    await asyncio.to_thread(registry.add, "acp", workdir, ["fake"], "fake")


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


@pytest.mark.usefixtures("acp_project")
async def test_the_model_is_switched_through_the_sessions_own_model_option(
    make_engine: EngineFactory, notifier: RecordingNotifier, tmp_path: Path
) -> None:
    switches = tmp_path / "switches.txt"
    env = {"PATH": "/usr/bin:/bin", "FAKE_ACP_PAUSE": "0", "FAKE_ACP_SWITCHES": str(switches)}
    async with make_engine(env=env) as engine:
        await engine.start_session("t1", "acp")
        first = await engine.submit("t1", "m1", "hello", "owner")
        assert (await notifier.wait_finished(first.job_id)).state == "success"
        offered = engine.agent_models("fake")
        assert [(m.model_id, m.label()) for m in offered] == [
            ("fast", "Fast model (fast)"),
            ("deep", "Deep model (deep)"),
        ]
        with pytest.raises(RunError) as refused:  # not one the agent offers
            await engine.set_model("t1", "huge")
        assert refused.value.code == "E_INVALID_MODEL"
        assert "fast, deep" in refused.value.message
        await engine.set_model("t1", "deep")
        assert lines(switches) == []  # from the next job on
        second = await engine.submit("t1", "m2", "hello again", "owner")
        assert (await notifier.wait_finished(second.job_id)).state == "success"
        assert lines(switches) == ["model=deep"]
        process = engine.state.jobs[second.job_id].process
        await engine.set_model("t1", "default")  # back to the agent's own choice: a fresh one
        third = await engine.submit("t1", "m3", "and again", "owner")
        assert (await notifier.wait_finished(third.job_id)).state == "success"
        assert engine.state.jobs[third.job_id].process != process
        assert lines(switches) == ["model=deep"]


@pytest.mark.usefixtures("acp_project")
async def test_a_denials_note_is_the_agents_next_prompt(
    make_engine: EngineFactory, notifier: RecordingNotifier, tmp_path: Path
) -> None:
    prompts = tmp_path / "prompts.txt"
    asked: list[PermissionAsk] = []

    async def owner(question: PermissionAsk) -> PermissionChoice:
        asked.append(question)
        return PermissionChoice("no", note="use make clean instead")

    env = {"PATH": "/usr/bin:/bin", "FAKE_ACP_PAUSE": "0", "FAKE_ACP_PROMPTS": str(prompts)}
    async with make_engine(env=env, permissions=owner) as engine:
        await engine.start_session("t1", "acp")
        job = await engine.submit("t1", "m1", "please ask-permission first", "owner")
        done = await notifier.wait_finished(job.job_id)
    assert done.state == "success", done.error_message
    assert [q.title for q in asked] == ["rm -rf build"]
    said = [json.loads(line) for line in lines(prompts)]
    assert said[0] == "please ask-permission first"
    assert len(said) == 2  # the note followed, in the same job
    assert "use make clean instead" in said[1]
    assert "rm -rf build" in said[1]
    assert done.final_text == "first words and the rest."  # the answer to the note


@pytest.mark.usefixtures("acp_project")
async def test_an_allow_sends_no_follow_up_prompt(
    make_engine: EngineFactory, notifier: RecordingNotifier, tmp_path: Path
) -> None:
    prompts = tmp_path / "prompts.txt"

    async def owner(question: PermissionAsk) -> PermissionChoice:
        return PermissionChoice("yes")

    env = {"PATH": "/usr/bin:/bin", "FAKE_ACP_PAUSE": "0", "FAKE_ACP_PROMPTS": str(prompts)}
    async with make_engine(env=env, permissions=owner) as engine:
        await engine.start_session("t1", "acp")
        job = await engine.submit("t1", "m1", "please ask-permission first", "owner")
        done = await notifier.wait_finished(job.job_id)
    assert done.final_text == "asked: allowed"
    assert len(lines(prompts)) == 1


class Looks:
    """The engine's ``owner_wait``, counting its calls: the job's watch loop asks it once a
    round, right before the watchdog looks, so two more calls mean one whole round ran."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, thread_id: str, since: float) -> float:
        self.calls += 1
        return 0.0

    async def rounds(self, count: int = 2) -> None:
        target = self.calls + count
        await until(lambda: self.calls >= target, what="the watch loop's rounds")


def watched() -> RunLimits:
    """Limits with the watchdog at its default half hour, looking often, and no job timeout
    to come first."""
    return dataclasses.replace(
        FAST, wait_check_interval=0.02, agent_silence=1800.0, job_timeout=1_000_000.0
    )


@pytest.mark.usefixtures("acp_project")
async def test_the_watchdog_ends_a_silent_turn_and_closes_its_session(
    make_engine: EngineFactory, notifier: RecordingNotifier, tmp_path: Path
) -> None:
    clock, looks = MovableClock(), Looks()
    env = {"PATH": "/usr/bin:/bin", "FAKE_ACP_RELEASE": str(tmp_path / "never")}
    async with make_engine(env=env, limits=watched(), clock=clock, owner_wait=looks) as engine:
        await engine.start_session("t1", "acp")
        job = await engine.submit("t1", "m1", "a long one", "owner")
        await notifier.wait_for(lambda: notifier.of("job_text", job.job_id))  # its first words
        queued = await engine.submit("t1", "m2", "next one", "owner")
        pid = engine.state.jobs[job.job_id].process
        assert pid is not None
        clock.advance(1790.0)  # not yet
        await looks.rounds()
        assert engine.state.jobs[job.job_id].state == "running", engine.state.jobs[job.job_id]
        clock.advance(11.0)
        ended = await notifier.wait_finished(job.job_id)
        assert ended.error_code == "E_AGENT_SILENT"
        assert "30 minutes" in (ended.error_message or "")
        session = engine.session("t1")
        assert session is not None
        assert session.closed
        assert engine.state.jobs[queued.job_id].state == "cancelled"
        await until(lambda: not alive(pid.pid), what="the agent's end")
        with pytest.raises(RunError) as closed:
            await engine.submit("t1", "m3", "anyone there?", "owner")
        assert closed.value.code == "E_SESSION_CLOSED"


@pytest.mark.usefixtures("acp_project")
async def test_the_watchdog_waits_while_the_owner_is_asked(
    make_engine: EngineFactory, notifier: RecordingNotifier
) -> None:
    clock, looks = MovableClock(), Looks()
    asked = asyncio.Event()
    answer = asyncio.Event()

    async def owner(question: PermissionAsk) -> PermissionChoice:
        asked.set()
        await answer.wait()
        return PermissionChoice("yes")

    env = {"PATH": "/usr/bin:/bin", "FAKE_ACP_PAUSE": "0"}
    async with make_engine(
        env=env, limits=watched(), clock=clock, permissions=owner, owner_wait=looks
    ) as engine:
        await engine.start_session("t1", "acp")
        job = await engine.submit("t1", "m1", "please ask-permission first", "owner")
        await asyncio.wait_for(asked.wait(), 20)
        clock.advance(3 * 3600.0)  # hours for the owner to answer: no silence of the agent's
        await looks.rounds()
        assert engine.state.jobs[job.job_id].state == "running"
        answer.set()
        done = await notifier.wait_finished(job.job_id)
    assert done.state == "success", done.error_message
    assert done.final_text == "asked: allowed"


@pytest.mark.usefixtures("acp_project")
async def test_a_stopping_engine_ends_its_agents_turns_and_says_why(
    make_engine: EngineFactory, notifier: RecordingNotifier, tmp_path: Path
) -> None:
    release = tmp_path / "never"
    env = {"PATH": "/usr/bin:/bin", "FAKE_ACP_RELEASE": str(release)}
    engine = make_engine(env=env, stopping=lambda: "discord-watch stopped (it received SIGTERM)")
    async with engine:
        await engine.start_session("t1", "acp")
        job = await engine.submit("t1", "m1", "a long one", "owner")
        await notifier.wait_for(lambda: notifier.of("job_text", job.job_id))
        pid = engine.state.jobs[job.job_id].process
        assert pid is not None
    ended = notifier.finished(job.job_id)
    assert ended is not None, "the thread was not told"
    assert ended.error_code == "E_WATCH_STOPPED"
    assert "discord-watch stopped (it received SIGTERM)" in (ended.error_message or "")
    assert not alive(pid.pid)
    async with make_engine(env=env) as again:  # nothing is reported lost at the next start
        assert again.state.jobs[job.job_id].state == "failed"
        assert again.state.jobs[job.job_id].error_code == "E_WATCH_STOPPED"
