"""ACP jobs in the run engine, with a scripted ACP agent (tests/support/fake_acp_agent.py).

One agent process per thread carries the session across jobs; a process that dies is a failed
job with its stderr tail, and the next message starts a fresh process that loads the session.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path

from discord_mcp.runs import ProjectRegistry
from discord_mcp.runs.acp.agents import AgentRegistry
from tests.runs.conftest import FAST, EngineFactory
from tests.support.fake_agents import RecordingNotifier
from tests.support.waiting import until

FAKE = Path(__file__).resolve().parents[1] / "support" / "fake_acp_agent.py"


def register(state_dir: Path, registry: ProjectRegistry, workdir: Path) -> None:
    AgentRegistry(state_dir).add("fake", [sys.executable, str(FAKE)])
    registry.add("acp", workdir, ["fake"], "fake")


async def test_a_dead_agent_fails_its_job_and_the_next_message_loads_the_session(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    state_dir: Path,
    registry: ProjectRegistry,
    workdir: Path,
    tmp_path: Path,
) -> None:
    await asyncio.to_thread(register, state_dir, registry, workdir)
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    loads = tmp_path / "loads.txt"
    env = {
        "PATH": "/usr/bin:/bin",
        "FAKE_ACP_SESSIONS": str(sessions),
        "FAKE_ACP_LOADS": str(loads),
        "FAKE_ACP_PAUSE": "0",
    }
    async with make_engine(env=env) as engine:
        await engine.start_session("t1", "acp")
        first = await engine.submit("t1", "m1", "hello", "owner")
        done = await notifier.wait_finished(first.job_id)
        assert done.state == "success", done.error_message
        assert done.final_text == "first words and the rest."
        pid = engine.state.jobs[first.job_id].process
        second = await engine.submit("t1", "m2", "hello again", "owner")
        again = await notifier.wait_finished(second.job_id)
        assert again.state == "success"
        assert again.session_key == done.session_key  # the same session, kept alive
        assert engine.state.jobs[second.job_id].process == pid  # and the same process
        assert not loads.exists()  # no load was needed

        dying = await engine.submit("t1", "m3", "now die", "owner")
        dead = await notifier.wait_finished(dying.job_id)
        assert dead.state == "failed"
        assert dead.error_code == "E_AGENT_EXITED"
        assert "told to die" in (dead.error_message or "")

        after = await engine.submit("t1", "m4", "hello after", "owner")
        revived = await notifier.wait_finished(after.job_id)
        assert revived.state == "success", revived.error_message
        assert engine.state.jobs[after.job_id].process != pid  # a fresh process
        assert loads.read_text(encoding="utf-8").split() == [
            done.session_key
        ]  # which loaded the session
        assert revived.session_key == done.session_key


async def test_stop_ends_an_agent_that_ignores_the_cancel_and_the_next_message_starts_anew(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    state_dir: Path,
    registry: ProjectRegistry,
    workdir: Path,
) -> None:
    await asyncio.to_thread(register, state_dir, registry, workdir)
    env = {"PATH": "/usr/bin:/bin", "FAKE_ACP_PAUSE": "30"}
    limits = dataclasses.replace(FAST, agent_cancel_grace=0.5)
    async with make_engine(env=env, limits=limits) as engine:
        await engine.start_session("t1", "acp")
        job = await engine.submit("t1", "m1", "take your time", "owner")
        await notifier.wait_for(lambda: engine.state.jobs[job.job_id].process is not None)
        await notifier.wait_for(lambda: notifier.of("job_started", job.job_id))
        stopped = await engine.stop("t1")
        assert stopped is not None
        assert stopped.error_code == "E_STOPPED"  # the fake ignores session/cancel: ended
        pid = engine.state.jobs[job.job_id].process
        env_next = await engine.submit("t1", "m2", "quick die", "owner")
        assert (await notifier.wait_finished(env_next.job_id)).error_code == "E_AGENT_EXITED"
        assert engine.state.jobs[env_next.job_id].process != pid


async def test_a_stop_that_comes_while_the_agent_starts_is_not_lost(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    state_dir: Path,
    registry: ProjectRegistry,
    workdir: Path,
    tmp_path: Path,
) -> None:
    """Stopped between the agent's spawn and the turn's first wait (the agent still answering
    ``initialize``): the turn begins already stopped, instead of waiting for the agent."""
    await asyncio.to_thread(register, state_dir, registry, workdir)
    started = tmp_path / "started"
    env = {
        "PATH": "/usr/bin:/bin",
        "FAKE_ACP_STARTED": str(started),
        "FAKE_ACP_START_PAUSE": "2",
        "FAKE_ACP_PAUSE": "600",
    }
    limits = dataclasses.replace(FAST, agent_cancel_grace=0.5)
    async with make_engine(env=env, limits=limits) as engine:
        await engine.start_session("t1", "acp")
        await engine.submit("t1", "m1", "take your time", "owner")
        # Polled on time, not on the engine's notices: the agent is still in `initialize`.
        await until(lambda: started.exists() and started.read_text("utf-8").strip(), what="start")
        stopped = await engine.stop("t1")
    assert stopped is not None
    assert (stopped.state, stopped.error_code) == ("failed", "E_STOPPED"), stopped


async def test_busy_interrupt_cancels_the_running_turn_and_runs_the_new_message(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    state_dir: Path,
    registry: ProjectRegistry,
    workdir: Path,
) -> None:
    await asyncio.to_thread(AgentRegistry(state_dir).add, "fake", [sys.executable, str(FAKE)])
    await asyncio.to_thread(registry.add, "acp", workdir, ["fake"], "fake", busy="interrupt")
    limits = dataclasses.replace(FAST, agent_cancel_grace=0.5)
    async with make_engine(
        env={"PATH": "/usr/bin:/bin", "FAKE_ACP_PAUSE": "30"}, limits=limits
    ) as engine:
        await engine.start_session("t1", "acp")
        first = await engine.submit("t1", "m1", "a long one", "owner")
        await notifier.wait_for(lambda: engine.state.jobs[first.job_id].process is not None)
        second = await engine.submit("t1", "m2", "die instead", "owner")
        assert second.job_id != first.job_id
        interrupted = await notifier.wait_finished(first.job_id)
        assert interrupted.error_code == "E_INTERRUPTED"
        assert (await notifier.wait_finished(second.job_id)).error_code == "E_AGENT_EXITED"


async def test_busy_steer_queues_for_an_agent_that_does_not_take_prompts_mid_turn(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    state_dir: Path,
    registry: ProjectRegistry,
    workdir: Path,
) -> None:
    await asyncio.to_thread(AgentRegistry(state_dir).add, "fake", [sys.executable, str(FAKE)])
    await asyncio.to_thread(registry.add, "acp", workdir, ["fake"], "fake", busy="steer")
    async with make_engine(env={"PATH": "/usr/bin:/bin", "FAKE_ACP_PAUSE": "1"}) as engine:
        await engine.start_session("t1", "acp")
        first = await engine.submit("t1", "m1", "one", "owner")
        await notifier.wait_for(lambda: engine.state.jobs[first.job_id].process is not None)
        second = await engine.submit("t1", "m2", "two", "owner")
        assert second.job_id != first.job_id  # queued as its own job
        assert (await notifier.wait_finished(first.job_id)).state == "success"
        assert (await notifier.wait_finished(second.job_id)).state == "success"
