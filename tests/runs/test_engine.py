"""The engine's scheduling and job lifecycle, with the real spawner and wrapper running a
scripted fake CLI (tests/support/fake_cli.py) in place of claude / codex / gemini."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import random
import signal
import stat
import time
from pathlib import Path

import pytest

from discord_mcp.errors import JournalCorrupt, RunError
from discord_mcp.runs import McpRegistration, ProcessSpawner, ProjectRegistry, Tool
from discord_mcp.runs.journal.journal import load
from discord_mcp.state.files import off_loop
from tests.runs.conftest import FAST, EngineFactory, alive
from tests.support.fake_agents import FakeSpawner, RecordingNotifier, Scenario
from tests.support.model_server import wait_until


def gated(tmp_path: Path, name: str, **options: object) -> tuple[Scenario, Path]:
    gate = tmp_path / f"gate-{name}"
    return Scenario(gate=gate, **options), gate  # type: ignore[arg-type]


async def test_jobs_in_one_thread_run_one_after_another_in_order(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        jobs = [await engine.submit("t1", f"m{i}", f"prompt {i}", "owner") for i in range(3)]
        for job in jobs:
            await notifier.wait_finished(job.job_id)
    order = [(c.method, c.job.job_id) for c in notifier.calls if c.method != "job_activity"]
    starts = [order.index(("job_started", j.job_id)) for j in jobs]
    ends = [order.index(("job_finished", j.job_id)) for j in jobs]
    assert starts == sorted(starts)
    assert all(ends[i] < starts[i + 1] for i in range(2))  # never two at once in a thread
    assert [r["prompt"] for r in spawner.runs()] == ["prompt 0", "prompt 1", "prompt 2"]
    assert [c.position for c in notifier.of("job_queued")] == [1, 1, 2]


async def test_the_second_job_resumes_the_session_of_the_first(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        first = await engine.submit("t1", "m1", "one", "owner")
        second = await engine.submit("t1", "m2", "two", "owner")
        done = await notifier.wait_finished(second.job_id)
        key = (await notifier.wait_finished(first.job_id)).session_key
    runs = spawner.runs()
    assert runs[0]["resume"] is None
    assert key
    assert runs[1]["resume"] == key
    assert done.resumed
    assert done.session_key == key


async def test_at_most_the_global_cap_of_clis_run_at_once(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, tmp_path: Path
) -> None:
    gates = []
    for i in range(3):
        scenario, gate = gated(tmp_path, str(i))
        spawner.script(f"job {i}", scenario)
        gates.append(gate)
    async with make_engine() as engine:
        jobs = []
        for i in range(3):
            await engine.start_session(f"t{i}", "app")
            jobs.append(await engine.submit(f"t{i}", "m", f"job {i}", "owner"))
        await notifier.wait_for(lambda: len(notifier.of("job_started")) == 2)
        assert [engine.job(j.job_id).state for j in jobs] == ["running", "running", "queued"]  # type: ignore[union-attr]
        gates[1].touch()
        await notifier.wait_finished(jobs[1].job_id)
        await notifier.wait_for(lambda: notifier.of("job_started", jobs[2].job_id))
        assert [engine.job(j.job_id).state for j in jobs] == ["running", "success", "running"]  # type: ignore[union-attr]
        gates[0].touch()
        gates[2].touch()
        await notifier.wait_finished(jobs[0].job_id)
        await notifier.wait_finished(jobs[2].job_id)


async def test_a_full_queue_refuses_new_messages(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, tmp_path: Path
) -> None:
    scenario, gate = gated(tmp_path, "busy")
    spawner.script("busy", scenario)
    async with make_engine(limits=dataclasses.replace(FAST, queue_cap=2)) as engine:
        await engine.start_session("t1", "app")
        running = await engine.submit("t1", "m0", "busy", "owner")
        await engine.submit("t1", "m1", "one", "owner")
        await engine.submit("t1", "m2", "two", "owner")
        with pytest.raises(RunError) as caught:
            await engine.submit("t1", "m3", "three", "owner")
        assert caught.value.code == "E_QUEUE_FULL"
        assert "limit is 2" in caught.value.message
        view = engine.session("t1")
        assert view is not None
        assert (view.state, view.pending, view.running_job_id) == ("running", 2, running.job_id)
        gate.touch()
        for job in engine.jobs("t1"):
            await notifier.wait_finished(job.job_id)


async def test_a_message_submitted_twice_is_one_job(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        first = await engine.submit("t1", "m1", "hello", "owner")
        again = await engine.submit("t1", "m1", "hello", "owner")
        assert again.job_id == first.job_id
        await notifier.wait_finished(first.job_id)
        after = await engine.submit("t1", "m1", "hello", "owner")
        assert after.job_id == first.job_id
        assert after.state == "success"
        # The same message id in another thread is another message.
        await engine.start_session("t2", "app")
        other = await engine.submit("t2", "m1", "hello", "owner")
        assert other.job_id != first.job_id
        await notifier.wait_finished(other.job_id)
    assert len(spawner.runs()) == 2
    assert len(notifier.of("job_queued")) == 2


async def test_a_tool_switch_applies_from_the_next_job(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, tmp_path: Path
) -> None:
    scenario, gate = gated(tmp_path, "first")
    spawner.script("first", scenario)
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        first = await engine.submit("t1", "m1", "first", "owner")
        await notifier.wait_for(lambda: notifier.of("job_started", first.job_id))
        switched = await engine.set_tool("t1", "codex")
        assert switched.tool == "codex"
        second = await engine.submit("t1", "m2", "second", "owner")
        gate.touch()
        done_first = await notifier.wait_finished(first.job_id)
        done_second = await notifier.wait_finished(second.job_id)
        third = await engine.set_tool("t1", "claude")
        view = engine.session("t1")
        assert view is not None
        assert set(view.session_keys) == {"claude", "codex"}
        assert third.session_key == done_first.session_key  # claude's session is kept
    assert (done_first.tool, done_second.tool) == ("claude", "codex")
    assert [r["tool"] for r in spawner.runs()] == ["claude", "codex"]
    assert spawner.runs()[1]["resume"] is None  # codex starts its own session
    assert spawner.runs()[1]["argv"][:2] == ["codex", "exec"]


async def test_a_tool_the_project_does_not_enable_is_refused(
    make_engine: EngineFactory, registry: ProjectRegistry, workdir: Path
) -> None:
    await off_loop(registry.add, "solo", workdir, ["gemini"])
    async with make_engine() as engine:
        await engine.start_session("t1", "solo")
        for tool in ("claude", "vim"):
            with pytest.raises(RunError) as caught:
                await engine.set_tool("t1", tool)
            assert caught.value.code in ("E_TOOL_NOT_ENABLED", "E_INVALID_TOOLSET")
        with pytest.raises(RunError) as caught:
            await engine.start_session("t2", "solo", "codex")
        assert caught.value.code == "E_TOOL_NOT_ENABLED"


async def test_a_failed_job_is_retried_as_a_new_job_with_the_next_attempt(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    spawner.script("flaky", Scenario(sample="claude-fail-401-noretry.jsonl"))
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "flaky", "owner")
        failed = await notifier.wait_finished(job.job_id)
        assert (failed.state, failed.error_code) == ("failed", "E_CLI_ERROR")
        assert "Invalid API key" in (failed.error_message or "")
        view = engine.session("t1")
        assert view is not None
        assert (view.state, view.retry_job_id) == ("failed", job.job_id)

        spawner.script("flaky", Scenario())  # the second attempt works
        retry = await engine.retry("t1", job.job_id)
        assert (retry.attempt, retry.retry_of, retry.message_id) == (2, job.job_id, "m1")
        assert retry.job_id != job.job_id
        done = await notifier.wait_finished(retry.job_id)
        assert done.state == "success"
        original = engine.job(job.job_id)
        assert original is not None
        assert (original.state, original.retried_by) == ("failed", retry.job_id)

        for target, words in ((job.job_id, "retried already"), (retry.job_id, "is success")):
            with pytest.raises(RunError) as caught:
                await engine.retry("t1", target)
            assert caught.value.code == "E_JOB_NOT_RETRYABLE"
            assert words in caught.value.message
        with pytest.raises(RunError) as caught:
            await engine.retry("t1", "job_nope")
        assert caught.value.code == "E_JOB_NOT_FOUND"


async def test_stop_ends_the_running_job_and_its_whole_group(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    spawner.script("long", Scenario(hang=True, child=True))
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "long", "owner")
        waiting = await engine.submit("t1", "m2", "next", "owner")
        [run] = await notifier.wait_for(spawner.runs)
        stopped = await engine.stop("t1")
        assert stopped is not None
        assert (stopped.job_id, stopped.state, stopped.error_code) == (
            job.job_id,
            "failed",
            "E_STOPPED",
        )
        assert not alive(run["pid"])
        assert not alive(run["child_pid"])
        assert (await notifier.wait_finished(waiting.job_id)).state == "success"
        assert await engine.stop("t1") is None  # nothing running any more
        # A stop the owner asked for is not a failure of the project (issue 34).
        status = engine.project_status("app")
        assert (status.failed_jobs_24h, status.last_error) == (0, None)


async def test_a_job_over_its_time_is_killed_with_its_whole_group(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    spawner.script("slow", Scenario(hang=True, child=True))
    limits = dataclasses.replace(FAST, job_timeout=0.5)
    async with make_engine(limits=limits) as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "slow", "owner")
        done = await notifier.wait_finished(job.job_id)
    [run] = spawner.runs()
    assert (done.state, done.error_code) == ("failed", "E_CLI_TIMEOUT")
    assert "0.5 s timeout" in (done.error_message or "")
    assert done.session_key  # what it reported before it hung is kept
    assert not alive(run["pid"])
    assert not alive(run["child_pid"])


async def test_a_cli_that_ignores_sigterm_is_killed(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    spawner.script("stubborn", Scenario(hang=True, ignore_term=True, child=True))
    # The timeout leaves the fake CLI (a Python process) time to start and record its run even
    # on a loaded machine; what is tested is the kill after SIGTERM is ignored.
    limits = dataclasses.replace(FAST, job_timeout=3.0, kill_grace=0.3)
    async with make_engine(limits=limits) as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "stubborn", "owner")
        done = await notifier.wait_finished(job.job_id)
    [run] = spawner.runs()
    assert done.error_code == "E_CLI_TIMEOUT"
    assert not alive(run["pid"])
    assert not alive(run["child_pid"])


async def test_a_finished_job_carries_its_answer_excerpt_usage_and_cost(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    spawner.script("ask", Scenario(sample="claude-mcp.jsonl"))
    async with make_engine(limits=dataclasses.replace(FAST, result_excerpt=10)) as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "ask", "owner")
        done = await notifier.wait_finished(job.job_id)
        assert done.final_text == "tool said: A (is_error=False)"
        assert done.result_excerpt == "tool said…"
        assert done.usage is not None
        assert done.usage.input_tokens == 24
        assert done.cost_usd == pytest.approx(0.000296)
        assert done.exit_code == 0
        assert done.duration is not None
        stored = engine.job(job.job_id)
        assert stored is not None
        assert stored.final_text is None  # the state keeps the excerpt only...
        assert engine.final_text(job.job_id) == done.final_text  # ...the log has the rest
        [finished] = notifier.of("job_finished", job.job_id)
        assert finished.session is not None
        assert finished.session.state == "idle"
        assert finished.session.resume_ready


async def test_activity_reports_tool_calls_at_most_once_per_interval(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, tmp_path: Path
) -> None:
    class FrozenClock:
        """Wall time moves; the monotonic clock never does, so no interval ever passes."""

        def time(self) -> float:
            return time.time()

        def monotonic(self) -> float:
            return 500.0

    scenario, gate = gated(tmp_path, "mcp", sample="claude-mcp.jsonl")
    spawner.script("ask", scenario)
    async with make_engine(clock=FrozenClock()) as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "ask", "owner")
        await notifier.wait_for(lambda: notifier.of("job_activity", job.job_id))
        gate.touch()
        await notifier.wait_finished(job.job_id)
    [call] = notifier.of("job_activity", job.job_id)  # several changes, one report
    assert call.activity is not None
    assert call.activity.job_id == job.job_id
    assert call.activity.session_key


async def test_activity_shows_the_calls_and_text_so_far(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, tmp_path: Path
) -> None:
    scenario, gate = gated(tmp_path, "mcp", sample="claude-mcp.jsonl")
    spawner.script("ask", scenario)
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "ask", "owner")

        def with_call() -> object:
            return [
                c
                for c in notifier.of("job_activity", job.job_id)
                if c.activity is not None and c.activity.tool_call_count
            ]

        [call, *_] = await notifier.wait_for(with_call)
        assert call.activity is not None
        [tool_call] = call.activity.tool_calls
        assert tool_call.name == "mcp__discord__ask_decision"
        assert tool_call.summary == "Which option should we take?"
        gate.touch()
        await notifier.wait_finished(job.job_id)


async def test_a_broken_notifier_never_breaks_the_engine(
    make_engine: EngineFactory, spawner: FakeSpawner
) -> None:
    broken = RecordingNotifier(fail=True)
    async with make_engine(notifier=broken) as engine:
        await engine.start_session("t1", "app")
        first = await engine.submit("t1", "m1", "one", "owner")
        second = await engine.submit("t1", "m2", "two", "owner")
        await broken.wait_finished(second.job_id)
        assert engine.job(first.job_id).state == "success"  # type: ignore[union-attr]


async def test_noise_on_stdout_and_stderr_does_not_fail_the_job(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    spawner.script(
        "noisy",
        Scenario(
            sample="gemini-new.jsonl",
            noise=("Loaded cached credentials.", '{"type":"future_event"}', "{torn"),
            stderr="Warning: 256-color support not detected.\n",
        ),
    )
    async with make_engine() as engine:
        await engine.start_session("t1", "app", "gemini")
        job = await engine.submit("t1", "m1", "noisy", "owner")
        done = await notifier.wait_finished(job.job_id)
    assert done.state == "success", done.error_message
    assert done.final_text == "pong (user turns seen: 1)"


async def test_a_cli_exiting_without_its_final_event_fails_as_missing_result(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    spawner.script("cut", Scenario(sample="codex-new.jsonl", drop_final=True, rc=0))
    spawner.script("crash", Scenario(drop_final=True, rc=3, stderr="segfault-ish\n"))
    async with make_engine() as engine:
        await engine.start_session("t1", "app", "codex")
        await engine.start_session("t2", "app")
        cut = await engine.submit("t1", "m1", "cut", "owner")
        crash = await engine.submit("t2", "m1", "crash", "owner")
        cut_done = await notifier.wait_finished(cut.job_id)
        crash_done = await notifier.wait_finished(crash.job_id)
    assert cut_done.error_code == "E_ADAPTER_MISSING_RESULT"
    assert (crash_done.error_code, crash_done.exit_code) == ("E_CLI_EXIT_NONZERO", 3)
    assert "segfault-ish" in (crash_done.error_message or "")


async def test_a_failed_resume_starts_a_new_conversation_next_time(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    spawner.script(
        "lost",
        Scenario(
            sample="claude-resume-badid.jsonl",
            rc=1,
            session=False,
            stderr="No conversation found with session ID: x\n",
        ),
    )
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        first = await engine.submit("t1", "m1", "hello", "owner")
        await notifier.wait_finished(first.job_id)
        lost = await engine.submit("t1", "m2", "lost", "owner")
        failed = await notifier.wait_finished(lost.job_id)
        assert failed.error_code == "E_RESUME_FAILED"
        view = engine.session("t1")
        assert view is not None
        assert not view.resume_ready
        third = await engine.submit("t1", "m3", "fresh", "owner")
        await notifier.wait_finished(third.job_id)
    assert [r["resume"] is None for r in spawner.runs()] == [True, False, True]


async def test_each_run_gets_the_discord_server_and_its_thread(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, tmp_path: Path
) -> None:
    env_file = str(tmp_path / "server.env")
    mcp = McpRegistration(["/opt/python", "-m", "discord_mcp"], {"DISCORD_MCP_ENV_FILE": env_file})
    names = ("DISCORD_THREAD_ID", "DISCORD_BOT_TOKEN", "DISCORD_MCP_ENV_FILE")
    scenario, gate = gated(tmp_path, "c", env_names=names)
    spawner.script("claude job", scenario)
    spawner.script("codex job", Scenario(env_names=names))
    # Even when the daemon's own environment holds the token, no CLI gets it.
    daemon_env = {"PATH": "/usr/bin:/bin", "DISCORD_BOT_TOKEN": "tok-123456"}
    async with make_engine(mcp=mcp, env=daemon_env) as engine:
        view = await engine.start_session("777", "app")
        artifacts = str(engine.state_dir / "runs" / str(view.run_id) / "artifacts")
        job = await engine.submit("777", "m1", "claude job", "owner")
        [run] = await notifier.wait_for(spawner.runs)
        config = Path(run["argv"][run["argv"].index("--mcp-config") + 1])
        assert stat.S_IMODE(config.stat().st_mode) == 0o600
        server = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["discord"]
        # The server gets the token by reference; the CLI's environment never has it.
        assert server["env"] == {
            "DISCORD_MCP_ENV_FILE": env_file,
            "DISCORD_THREAD_ID": "777",
            "DISCORD_MCP_RUN_ARTIFACTS": artifacts,  # files it sends are kept in the run folder
        }
        assert run["env"] == {
            "DISCORD_THREAD_ID": "777",
            "DISCORD_BOT_TOKEN": None,
            "DISCORD_MCP_ENV_FILE": None,
        }
        gate.touch()
        await notifier.wait_finished(job.job_id)
        assert not config.exists()  # per-job files go when the job ends
        await engine.set_tool("777", "codex")
        codex_job = await engine.submit("777", "m2", "codex job", "owner")
        await notifier.wait_finished(codex_job.job_id)
    codex_run = spawner.runs()[1]
    # Codex hands its server the variables by name from its own environment: the reference.
    assert codex_run["env"] == {
        "DISCORD_THREAD_ID": "777",
        "DISCORD_BOT_TOKEN": None,
        "DISCORD_MCP_ENV_FILE": env_file,
    }
    assert not any("tok-123456" in part for r in spawner.runs() for part in r["argv"])


async def test_runs_happen_in_the_project_directory(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, workdir: Path
) -> None:
    async with make_engine() as engine:
        await engine.start_session("t1", "app", "gemini")
        job = await engine.submit("t1", "m1", "where", "owner")
        await notifier.wait_finished(job.job_id)
    [run] = spawner.runs()
    assert Path(run["cwd"]) == workdir.resolve()
    assert run["pgid"] == run["ppid"]  # its own group, led by the wrapper (its parent)
    assert run["pgid"] != os.getpgrp()


async def test_a_missing_cli_fails_the_job_with_a_clear_error(
    make_engine: EngineFactory, notifier: RecordingNotifier, tmp_path: Path
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    async with make_engine(spawner=ProcessSpawner(), env={"PATH": str(empty)}) as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "hello", "owner")
        done = await notifier.wait_finished(job.job_id)
    assert done.error_code == "E_CLI_NOT_FOUND"
    message = done.error_message or ""
    assert "the `claude` command is not on discord-watch's PATH" in message
    assert str(empty) not in message  # posted in Discord: the daemon's PATH stays in its log


async def test_a_removed_project_fails_the_next_job(
    make_engine: EngineFactory, notifier: RecordingNotifier, registry: ProjectRegistry
) -> None:
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        await off_loop(registry.remove, "app")
        job = await engine.submit("t1", "m1", "hello", "owner")
        done = await notifier.wait_finished(job.job_id)
    assert done.error_code == "E_PROJECT_NOT_FOUND"


async def test_commands_outside_a_session_and_double_sessions_are_refused(
    make_engine: EngineFactory,
) -> None:
    async with make_engine() as engine:
        for call in (
            engine.submit("nope", "m1", "x", "owner"),
            engine.set_tool("nope", "codex"),
            engine.retry("nope", "job_x"),
            engine.stop("nope"),
        ):
            with pytest.raises(RunError) as caught:
                await call
            assert caught.value.code == "E_NOT_IN_MANAGED_THREAD"
        assert engine.session("nope") is None
        await engine.start_session("t1", "app")
        with pytest.raises(RunError) as caught:
            await engine.start_session("t1", "app")
        assert caught.value.code == "E_SESSION_EXISTS"
        with pytest.raises(RunError) as caught:
            await engine.start_session("t2", "ghost")
        assert caught.value.code == "E_PROJECT_NOT_FOUND"


async def test_only_one_engine_may_run_on_a_state_directory(make_engine: EngineFactory) -> None:
    async with make_engine():
        with pytest.raises(RunError) as caught:
            async with make_engine():
                pass
        assert caught.value.code == "E_ENGINE_LOCKED"
    async with make_engine():  # the lock went with the first engine
        pass


async def test_commands_need_a_running_engine(make_engine: EngineFactory) -> None:
    engine = make_engine()
    with pytest.raises(RunError) as caught:
        await engine.start_session("t1", "app")
    assert caught.value.code == "E_ENGINE_NOT_RUNNING"


async def test_session_and_project_views(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, tmp_path: Path
) -> None:
    spawner.script("bad", Scenario(sample="gemini-fail-401.jsonl"))
    async with make_engine() as engine:
        idle = await engine.start_session("t1", "app", "gemini")
        assert (idle.state, idle.session_key, idle.resume_ready, idle.last_job) == (
            "idle",
            None,
            False,
            None,
        )
        job = await engine.submit("t1", "m1", "bad", "owner")
        await notifier.wait_finished(job.job_id)
        view = engine.session("t1")
        assert view is not None
        assert view.state == "failed"
        assert view.last_job is not None
        assert view.last_job.error_code == "E_CLI_ERROR"
        assert view.retry_job_id == job.job_id
        assert view.resume_ready  # the failed turn still reported its session
        status = engine.project_status("app")
        assert (status.session_total, status.running_sessions, status.failed_jobs_24h) == (1, 0, 1)
        assert status.last_error is not None
        assert status.last_error.startswith("E_CLI_ERROR")
        spawner.script("long", Scenario(hang=True))
        stopping = await engine.submit("t1", "m2", "long", "owner")
        await notifier.wait_for(lambda: len(spawner.runs()) == 2)
        await engine.stop("t1")
        assert (await notifier.wait_finished(stopping.job_id)).error_code == "E_STOPPED"
        after = engine.project_status("app")
        assert (after.failed_jobs_24h, after.last_error) == (1, status.last_error)
        assert [s.thread_id for s in engine.sessions("app")] == ["t1"]
        assert engine.sessions("other") == []


async def test_normal_shutdown_leaves_the_cli_running_and_the_next_engine_reattaches(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, tmp_path: Path
) -> None:
    scenario, gate = gated(tmp_path, "long")
    spawner.script("long", scenario)
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "long", "owner")
        [run] = await notifier.wait_for(spawner.runs)
    assert alive(run["pid"])  # the daemon stopped; the CLI did not
    again = RecordingNotifier()
    async with make_engine(notifier=again) as engine:
        [started] = await again.wait_for(lambda: again.of("job_started", job.job_id))
        assert started.job.reattached
        assert started.job.state == "running"
        gate.touch()
        done = await again.wait_finished(job.job_id)
        assert done.state == "success"
        assert done.final_text == "pong (user turns seen: 1)"
    assert len(spawner.runs()) == 1  # nothing was run twice


async def test_rebuilding_from_events_equals_the_engine_state_after_random_commands(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, state_dir: Path
) -> None:
    rng = random.Random(20261122)
    spawner.script("fails", Scenario(sample="codex-fail-401.jsonl"))
    spawner.script("hangs", Scenario(hang=True))
    limits = dataclasses.replace(FAST, snapshot_every_events=7, queue_cap=4)
    refused: list[str] = []
    async with make_engine(limits=limits) as engine:
        threads = []
        for step in range(60):
            action = rng.choice(["session", "submit", "submit", "submit", "tool", "retry", "stop"])
            if action == "session" or not threads:
                thread = f"t{step}"
                await engine.start_session(thread, "app", rng.choice(["claude", "codex", "gemini"]))
                threads.append(thread)
                continue
            thread = rng.choice(threads)
            try:
                if action == "submit":
                    prompt = rng.choice(["ok", "ok", "fails", "hangs"])
                    await engine.submit(thread, f"m{step}", prompt, "owner")
                elif action == "tool":
                    await engine.set_tool(thread, rng.choice(["claude", "codex", "gemini"]))
                elif action == "retry":
                    failed = [j for j in engine.jobs(thread) if j.retryable]
                    if failed:
                        await engine.retry(thread, rng.choice(failed).job_id)
                else:
                    await engine.stop(thread)
            except RunError as exc:
                refused.append(exc.code)
        # Let everything settle: stop what hangs, wait for the rest, until nothing is left.
        async with asyncio.timeout(60):
            while True:
                busy = [v for v in engine.sessions() if v.state in ("running", "queued")]
                if not busy:
                    break
                hanging = [
                    v.thread_id
                    for v in busy
                    if v.running_job_id and engine.state.jobs[v.running_job_id].prompt == "hangs"
                ]
                for thread in hanging:
                    await engine.stop(thread)
                if not hanging:
                    seen = len(notifier.calls)
                    await notifier.wait_for(lambda: len(notifier.calls) > seen)  # noqa: B023
        live = engine.state.to_dict()
    assert load(state_dir / "runs", keep_finished=limits.keep_finished_jobs).state.to_dict() == live
    events_only = load(state_dir / "runs", use_snapshot=False)
    assert events_only.state.to_dict() == live
    assert events_only.replayed > 100
    assert set(refused) <= {"E_QUEUE_FULL"}


async def test_the_engine_does_not_start_on_a_damaged_journal(
    make_engine: EngineFactory, state_dir: Path
) -> None:
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        await engine.start_session("t2", "app")
    events = state_dir / "runs" / "events.ndjson"
    lines = events.read_text(encoding="utf-8").splitlines()
    events.write_text("\n".join(["{garbage", *lines[1:]]) + "\n", encoding="utf-8")
    (state_dir / "runs" / "snapshot.json").unlink()
    for _ in range(2):  # and it let go of its lock when it refused
        with pytest.raises(JournalCorrupt) as caught:
            async with make_engine():
                pass
        assert caught.value.line == 1


async def test_a_wrapper_killed_alone_leaves_its_cli_to_finish_the_job(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, tmp_path: Path
) -> None:
    scenario, gate = gated(tmp_path, "orphan")
    spawner.script("orphan", scenario)
    async with make_engine() as engine:
        await engine.start_session("t1", "app")
        job = await engine.submit("t1", "m1", "orphan", "owner")
        [run] = await notifier.wait_for(spawner.runs)
        os.kill(run["pgid"], signal.SIGKILL)  # the wrapper only
        wait_until(lambda: not alive(run["pgid"]), timeout=10, what="the wrapper to die")
        assert engine.job(job.job_id).state == "running"  # type: ignore[union-attr]
        gate.touch()
        done = await notifier.wait_finished(job.job_id)
    assert done.state == "success", done.error_message
    assert done.exit_code is None  # nobody was left to record it


async def test_busy_interrupt_stops_a_running_cli_and_runs_the_new_message(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    registry: ProjectRegistry,
    workdir: Path,
) -> None:
    await asyncio.to_thread(registry.add, "hasty", workdir, ["claude"], busy="interrupt")
    spawner.script("long", Scenario(hang=True))
    async with make_engine() as engine:
        await engine.start_session("t1", "hasty")
        job = await engine.submit("t1", "m1", "long", "owner")
        await notifier.wait_for(spawner.runs)
        newer = await engine.submit("t1", "m2", "next", "owner")
        interrupted = await notifier.wait_finished(job.job_id)
        assert (interrupted.state, interrupted.error_code) == ("failed", "E_INTERRUPTED")
        assert (await notifier.wait_finished(newer.job_id)).state == "success"


@pytest.mark.parametrize("tool", ["gemini"])  # Codex steers through app-server (issue 34)
async def test_busy_steer_queues_a_message_for_a_cli_that_cannot_take_it_mid_turn(
    tool: Tool,
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    registry: ProjectRegistry,
    workdir: Path,
) -> None:
    await asyncio.to_thread(registry.add, "steady", workdir, [tool], busy="steer")
    spawner.script("long", Scenario(hang=True))
    async with make_engine() as engine:
        await engine.start_session("t1", "steady")
        job = await engine.submit("t1", "m1", "long", "owner", debounce=False)
        await notifier.wait_for(spawner.runs)
        newer = await engine.submit("t1", "m2", "next", "owner", debounce=False)
        assert newer.job_id != job.job_id
        assert newer.state == "queued"
        await engine.stop("t1")
        stopped = await notifier.wait_finished(job.job_id)
        assert (await notifier.wait_finished(newer.job_id)).state == "success"
    assert stopped.error_code == "E_STOPPED"
    assert [r["prompt"] for r in spawner.runs()] == ["long", "next"]
