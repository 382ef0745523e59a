"""Nothing runs twice and nothing vanishes: a message is one job across engine restarts, and a
corrupt project list fails each project operation with how to restore it, never a crash."""

from __future__ import annotations

import dataclasses

import pytest

from discord_mcp.errors import RunError
from discord_mcp.runs import ProjectRegistry
from discord_mcp.state.files import off_loop
from tests.runs.conftest import FAST, EngineFactory
from tests.support.fake_agents import FakeSpawner, RecordingNotifier


async def test_a_message_is_one_job_across_engine_restarts(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        first = await engine.submit("t1", "m1", "hello", "owner")
        await notifier.wait_finished(first.job_id)
    for _ in range(2):  # a restart, then another: the message is seen again each time
        async with make_engine() as engine:
            again = await engine.submit("t1", "m1", "hello", "owner")
            assert (again.job_id, again.state) == (first.job_id, "success")
    assert len(spawner.runs()) == 1


async def test_a_message_whose_old_job_was_dropped_from_the_state_is_not_run_again(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    limits = dataclasses.replace(FAST, keep_finished_jobs=1)
    async with make_engine(limits=limits) as engine:
        await engine.start_session("t1", "app")
        for message in ("m1", "m2", "m3"):
            job = await engine.submit("t1", message, f"prompt {message}", "owner")
            await notifier.wait_finished(job.job_id)
    async with make_engine(limits=limits) as engine:
        with pytest.raises(RunError) as caught:
            await engine.submit("t1", "m1", "prompt m1", "owner")
    assert caught.value.code == "E_DUPLICATE_MESSAGE"
    assert len(spawner.runs()) == 3


async def test_a_corrupt_project_list_fails_the_next_job_and_new_sessions_with_how_to_restore(
    make_engine: EngineFactory, notifier: RecordingNotifier, registry: ProjectRegistry
) -> None:
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        await off_loop(registry.path.write_text, "{ torn", encoding="utf-8")
        job = await engine.submit("t1", "m1", "hello", "owner")
        done = await notifier.wait_finished(job.job_id)
        with pytest.raises(RunError) as refused:
            await engine.start_session("t2", "app")
        with pytest.raises(RunError) as switching:
            await engine.set_tool("t1", "codex")
        # The engine is still up and answering.
        assert engine.session("t1") is not None
    [moved] = registry.quarantined()
    assert done.error_code == "E_CONFIG_CORRUPT"
    for error in (refused.value, switching.value):
        assert error.code == "E_CONFIG_CORRUPT"
        assert str(moved) in error.message
    assert str(moved) in (done.error_message or "")
