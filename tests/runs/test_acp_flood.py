"""An ACP agent that streams megabytes of text (tests/support/fake_acp_agent.py, ``flood``):
the engine's work grows with what arrives, not with what arrived before; the text it keeps and
sends on is a bounded preview; the whole is in the job's log file; and stopping the job or the
engine is prompt even while the agent floods and ignores both ``session/cancel`` and SIGTERM.

Work is counted, not timed: the characters of streamed text handed to the notifier (each one
was put together for it) against the characters the agent sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import signal
import sys
from pathlib import Path

from discord_mcp.runs import ProjectRegistry
from discord_mcp.runs.acp.agents import AgentRegistry
from discord_mcp.runs.engine.streaming import ANSWER_LIMIT, PREVIEW_LIMIT
from discord_mcp.runs.processes.runner import JobPaths
from tests.runs.conftest import FAST, EngineFactory, alive
from tests.support.fake_agents import RecordingNotifier
from tests.support.waiting import until

FAKE = Path(__file__).resolve().parents[1] / "support" / "fake_acp_agent.py"
FLOOD = 8 * 1024 * 1024
FLOODED = 1024 * 1024
"""How much an endless flood has written to the job's log before it is stopped: a megabyte, a
thousand messages into the flood, which goes on while the job is stopped (more only cost CPU)."""
STOPPED_WITHIN_S = 30.0
"""A bound on stopping, far above what it takes (the agent's grace, then SIGKILL): a daemon
held by its agent would not meet it at all."""


def register(state_dir: Path, registry: ProjectRegistry, workdir: Path) -> None:
    AgentRegistry(state_dir).add("fake", [sys.executable, str(FAKE)])
    registry.add("acp", workdir, ["fake"], "fake")


def logged(state_dir: Path, job_id: str) -> int:
    """How many bytes the job's log holds so far."""
    try:
        return os.path.getsize(JobPaths.for_job(state_dir, job_id).stdout)
    except FileNotFoundError:
        return 0


def streamed_in_log(state_dir: Path, job_id: str) -> str:
    """Every chunk of text the job's transcript holds, in order."""
    text = []
    with open(JobPaths.for_job(state_dir, job_id).stdout, encoding="utf-8") as log:
        for line in log:
            event = json.loads(line)
            update = event.get("update") or {}
            if update.get("sessionUpdate") == "agent_message_chunk":
                text.append(update["content"]["text"])
    return "".join(text)


async def test_megabytes_of_streamed_text_cost_work_in_proportion_and_keep_a_bounded_preview(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    state_dir: Path,
    registry: ProjectRegistry,
    workdir: Path,
) -> None:
    await asyncio.to_thread(register, state_dir, registry, workdir)
    env = {"PATH": "/usr/bin:/bin", "FAKE_ACP_FLOOD_BYTES": str(FLOOD)}
    async with make_engine(env=env) as engine:
        await engine.start_session("t1", "acp")
        job = await engine.submit("t1", "m1", "flood", "owner")
        done = await notifier.wait_finished(job.job_id, timeout=120)

    assert done.state == "success", done.error_message
    texts = [c.text or "" for c in notifier.of("job_text", job.job_id)]
    assert texts, "the streamed text reached the notifier"
    assert all(len(t) <= PREVIEW_LIMIT for t in texts)
    assert max(map(len, texts)) >= PREVIEW_LIMIT - 100  # the preview: the end, not the start
    assert all(t.startswith("…\n") for t in texts if len(t) > PREVIEW_LIMIT - 100)
    shown = sum(map(len, texts))
    assert shown <= FLOOD // 4, f"{shown} characters put together for {FLOOD} streamed"

    whole = await asyncio.to_thread(streamed_in_log, state_dir, job.job_id)
    assert len(whole) >= FLOOD
    assert whole.startswith("00000000 ")
    assert whole.endswith(" THE END")
    final = done.final_text or ""
    assert final.startswith("00000000 ")
    assert len(final) <= ANSWER_LIMIT + 200  # the start, and a note that the log has the rest
    assert "log" in final[ANSWER_LIMIT:]


async def test_stop_and_shutdown_are_prompt_while_an_agent_floods_and_ignores_both(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    state_dir: Path,
    registry: ProjectRegistry,
    workdir: Path,
) -> None:
    await asyncio.to_thread(register, state_dir, registry, workdir)
    env = {"PATH": "/usr/bin:/bin", "FAKE_ACP_IGNORE_TERM": "1"}
    limits = dataclasses.replace(FAST, agent_cancel_grace=1.0, kill_grace=1.0)
    engine = make_engine(env=env, limits=limits)
    await engine.__aenter__()
    try:
        await engine.start_session("t1", "acp")
        first = await engine.submit("t1", "m1", "flood forever", "owner")
        await until(lambda: logged(state_dir, first.job_id) >= FLOODED, timeout=120)
        pid = engine.state.jobs[first.job_id].process
        assert pid is not None
        async with asyncio.timeout(STOPPED_WITHIN_S):
            stopped = await engine.stop("t1")
        assert stopped is not None
        assert stopped.error_code == "E_STOPPED"
        assert not alive(pid)

        second = await engine.submit("t1", "m2", "flood forever", "owner")
        await until(lambda: logged(state_dir, second.job_id) >= FLOODED, timeout=120)
        pid = engine.state.jobs[second.job_id].process
        assert pid is not None
    finally:
        async with asyncio.timeout(STOPPED_WITHIN_S):  # the daemon's shutdown, bounded
            await engine.__aexit__(None, None, None)
    assert not alive(pid)


async def test_an_agent_still_starting_when_the_engine_shuts_down_is_ended_too(
    make_engine: EngineFactory,
    state_dir: Path,
    registry: ProjectRegistry,
    workdir: Path,
    tmp_path: Path,
) -> None:
    await asyncio.to_thread(register, state_dir, registry, workdir)
    started = tmp_path / "started"
    env = {
        "PATH": "/usr/bin:/bin",
        "FAKE_ACP_STARTED": str(started),
        "FAKE_ACP_START_PAUSE": "600",
        "FAKE_ACP_IGNORE_TERM": "1",
    }
    engine = make_engine(env=env, limits=dataclasses.replace(FAST, kill_grace=1.0))
    await engine.__aenter__()
    try:
        await engine.start_session("t1", "acp")
        await engine.submit("t1", "m1", "hello", "owner")
        pid = int(
            await until(lambda: started.exists() and started.read_text(encoding="utf-8").strip())
        )
    finally:
        async with asyncio.timeout(STOPPED_WITHIN_S):
            await engine.__aexit__(None, None, None)
    try:
        assert not alive(pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # never leave it behind, even when the test fails
