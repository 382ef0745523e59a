"""Run folders (issue 23): each run's request, session, logs, transcript, patch and result on
disk, kept by the engine with the scripted fake CLIs (every file is also checked against its
schema after each test: tests/support/run_schemas.py)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from discord_mcp.chat.messages import keep_in_run
from discord_mcp.errors import RunError
from discord_mcp.hooks.guard import FAIL_CLOSED
from discord_mcp.outbound.files import Prepared
from discord_mcp.runs import RunEngine
from discord_mcp.runs.adapters.base import InvocationRequest, McpRegistration
from discord_mcp.runs.adapters.claude import ClaudeAdapter
from discord_mcp.runs.adapters.codex import CodexAdapter
from discord_mcp.runs.constraints import Constraints
from discord_mcp.runs.folders.error_codes import CODES, is_retryable, result_code
from discord_mcp.runs.folders.folders import RunFolder, RunQueue, new_run_id, read_status
from discord_mcp.runs.offline import Jail
from discord_mcp.state.files import off_loop
from discord_mcp.transport.rest import Upload
from tests.runs.conftest import FAST, EngineFactory
from tests.support.fake_agents import FakeSpawner, RecordingNotifier, Scenario
from tests.support.run_schemas import checked_files, problems
from tests.support.waiting import until

ERROR_CODES_PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "errors.md"


def git(workdir: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@x", "PATH": "/usr/bin:/bin", "HOME": str(workdir)}
    done = subprocess.run(
        ["git", *args],
        cwd=workdir,
        env=env,
        capture_output=True,
        encoding="utf-8",
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def repo(workdir: Path) -> Path:
    git(workdir, "init", "-q")
    (workdir / "kept.txt").write_text("one\n", encoding="utf-8")
    git(workdir, "add", "kept.txt")
    git(workdir, "commit", "-q", "-m", "start")
    return workdir


def document(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


async def at_rest(folder: RunFolder) -> dict[str, Any]:
    """The run's result, once session.json says it is at rest."""

    def done() -> dict[str, Any] | None:
        try:
            if document(folder.session)["state"] in ("completed", "failed", "stopped"):
                return document(folder.result)
        except (OSError, ValueError, KeyError):
            return None
        return None

    result: dict[str, Any] = await until(done)
    return result


async def run_one(
    engine: RunEngine, notifier: RecordingNotifier, thread: str, prompt: str, message: str = "m1"
) -> None:
    job = await engine.submit(thread, message, prompt, "owner")
    await notifier.wait_finished(job.job_id)


async def test_a_run_folder_holds_the_session_logs_transcript_patch_and_result(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, repo: Path
) -> None:
    (repo / "kept.txt").write_text("changed before the run\n", encoding="utf-8")
    spawner.script(
        "add a file",
        Scenario(sample="claude-mcp.jsonl", writes=(("new.txt", "made by the agent\n"),)),
    )
    run_id = new_run_id(0)
    async with make_engine() as engine:
        session = await engine.start_session("t1", "app", "claude", run_id=run_id)
        folder = RunFolder.of(engine.state_dir, run_id)
        created = document(folder.session)
        await run_one(engine, notifier, "t1", "add a file")
        result = await at_rest(folder)
    assert session.run_id == run_id
    assert (created["state"], created["engine"], created["session_id"]) == (
        "created",
        "claude",
        None,
    )
    stored = document(folder.session)
    assert stored["state"] == "completed"
    assert stored["session_id"] == result["session_id"] is not None
    assert stored["pid"] is None
    job_log = engine.state_dir / "logs" / "jobs" / f"{result['turns'][0]['job_id']}.stdout"
    assert folder.stdout(1).read_bytes() == job_log.read_bytes()
    assert folder.stdout(1).stat().st_ino == job_log.stat().st_ino  # the same file, linked
    assert folder.stderr(1).exists()
    request = document(folder.request)
    assert (request["mode"], request["message"], request["session_id"]) == (
        "new",
        "add a file",
        None,
    )
    assert result["status"] == "completed"
    assert result["engine"] == "claude"
    assert result["thread_url"] is None
    assert result["error"] is None
    assert result["summary"]
    assert result["duration_ms"] >= 0
    usage = result["token_usage"]
    assert set(usage) == {
        "input",
        "output",
        "cache_read",
        "cache_write",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
    }
    assert usage["input"] > 0
    # The CodeBridge seed's names, beside ours (issue 34).
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (usage["input"], usage["output"])
    assert usage["total_tokens"] == usage["input"] + usage["output"]
    assert result["turns"][0]["token_usage"] == usage  # one turn: the run's counts are its own
    assert [t["status"] for t in result["turns"]] == ["completed"]
    assert result["constraints"]["allow_network"] is True
    patch = folder.patch.read_text(encoding="utf-8")
    assert "+made by the agent" in patch  # a new file is in the patch
    assert "kept.txt" not in patch  # what was uncommitted before the run is not
    assert "changes.patch" in result["artifacts"]
    events = folder.events.read_text(encoding="utf-8")
    assert "## Turn 1 · claude · completed" in events
    assert "> add a file" in events
    assert "**Tool call**" in events
    assert git(repo, "status", "--porcelain").splitlines() == [" M kept.txt", "?? new.txt"]


async def test_a_resumed_run_adds_a_turn_to_the_same_folder_and_session(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, repo: Path
) -> None:
    spawner.script("second", Scenario(writes=(("second.txt", "2\n"),)))
    async with make_engine() as engine:
        view = await engine.start_session("t1", "app", "codex")
        assert view.run_id is not None
        folder = RunFolder.of(engine.state_dir, view.run_id)
        await run_one(engine, notifier, "t1", "first", "m1")
        first = await at_rest(folder)
        await run_one(engine, notifier, "t1", "second", "m2")
        result = await until(lambda: (r := document(folder.result)) and len(r["turns"]) == 2 and r)
    assert [t["turn"] for t in result["turns"]] == [1, 2]
    assert [t["message"] for t in result["turns"]] == ["first", "second"]
    assert result["session_id"] == first["session_id"]
    assert spawner.runs()[1]["resume"] == first["session_id"]  # the same CLI session
    assert result["duration_ms"] == sum(t["duration_ms"] for t in result["turns"])
    both = [t["token_usage"]["input"] for t in result["turns"]]
    assert result["token_usage"]["input"] == sum(both)
    assert folder.turns() == [1, 2]
    assert "+2" in folder.patch.read_text(encoding="utf-8")
    assert "## Turn 2 · codex" in folder.events.read_text(encoding="utf-8")


async def test_a_stopped_run_is_stopped_not_failed(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    spawner.script("long", Scenario(hang=True))
    async with make_engine() as engine:
        view = await engine.start_session("t1", "app", "claude")
        assert view.run_id is not None
        folder = RunFolder.of(engine.state_dir, view.run_id)
        job = await engine.submit("t1", "m1", "long", "owner")
        await engine.submit("t1", "m2", "waiting behind it", "owner")
        await notifier.wait_for(lambda: notifier.of("job_started", job.job_id))
        stopped = await engine.stop_run(view.run_id)
        result = await at_rest(folder)
    assert stopped.state == "idle"
    assert stopped.retry_job_id is None  # no retry hint for a stop
    assert result["status"] == "stopped"
    assert result["error"] is None
    assert [t["status"] for t in result["turns"]] == ["stopped", "stopped"]
    assert document(folder.session)["state"] == "stopped"


@pytest.mark.parametrize(
    ("sample", "code", "retryable"),
    [
        ("claude-fail-401-noretry.jsonl", "E_CLI_ERROR", False),
        ("claude-fail-529-noretry.jsonl", "E_MODEL_UNAVAILABLE", True),
    ],
)
async def test_a_failed_run_has_a_stable_code_and_says_whether_to_retry(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    sample: str,
    code: str,
    retryable: bool,
) -> None:
    spawner.script("x", Scenario(sample=sample))
    limits = dataclasses.replace(FAST, retry_temporary=False)
    async with make_engine(limits=limits) as engine:
        view = await engine.start_session("t1", "app", "claude")
        assert view.run_id is not None
        await run_one(engine, notifier, "t1", "x")
        result = await at_rest(RunFolder.of(engine.state_dir, view.run_id))
    assert result["status"] == "failed"
    assert result["error"]["code"] == code
    assert result["error"]["retryable"] is retryable
    assert result["error"]["message"]


def test_every_error_code_is_in_the_documented_table_with_its_retry_flag() -> None:
    text = ERROR_CODES_PAGE.read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(E_[A-Z_]+)` \| (yes|no) \|", text, re.MULTILINE))
    assert rows == {code: "yes" if entry.retryable else "no" for code, entry in CODES.items()}


def test_usage_limits_and_rate_limits_are_retryable_and_refusals_are_not() -> None:
    assert result_code("E_CLI_ERROR", "You've hit your usage limit|1893456000") == "E_USAGE_LIMIT"
    assert result_code("E_CLI_ERROR", "API Error: 429 rate limit exceeded") == "E_RATE_LIMITED"
    assert result_code("E_CLI_ERROR", "API Error: 500 Internal") == "E_MODEL_UNAVAILABLE"
    assert all(is_retryable(c) for c in ("E_USAGE_LIMIT", "E_RATE_LIMITED", "E_NOT_STARTED"))
    assert not any(is_retryable(c) for c in ("E_CLI_NOT_FOUND", "E_INVALID_PATH", "E_STOPPED"))


async def test_a_runs_own_timeout_stops_it_and_is_retryable(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    spawner.script("slow", Scenario(hang=True))
    limits = dataclasses.replace(FAST, kill_grace=0.5)
    async with make_engine(limits=limits) as engine:
        view = await engine.start_session(
            "t1", "app", "claude", constraints=Constraints(timeout_s=1.0)
        )
        assert view.run_id is not None
        await run_one(engine, notifier, "t1", "slow")
        result = await at_rest(RunFolder.of(engine.state_dir, view.run_id))
    assert result["error"]["code"] == "E_CLI_TIMEOUT"
    assert result["error"]["retryable"] is True  # as the CodeBridge seed's table says (issue 34)
    assert result["constraints"]["timeout_s"] == 1.0


async def test_a_cli_whose_output_cannot_be_read_fails_with_a_parse_error(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    """Seed 000's E_ADAPTER_PARSE in a run's result (issue 34)."""
    spawner.script("text", Scenario(sample="claude-new-text.txt", rc=0))
    async with make_engine() as engine:
        view = await engine.start_session("t1", "app", "claude")
        assert view.run_id is not None
        await run_one(engine, notifier, "t1", "text")
        result = await at_rest(RunFolder.of(engine.state_dir, view.run_id))
    assert result["error"]["code"] == "E_ADAPTER_PARSE"
    assert result["error"]["retryable"] is False


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGSEGV])
async def test_a_cli_killed_by_a_signal_nobody_sent_is_a_retryable_crash(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner, signum: int
) -> None:
    """ENGINE_CRASH in the CodeBridge seed: the engine process ended abnormally (issue 34)."""
    spawner.script("crash", Scenario(die_by=signum))
    spawner.script("fine", Scenario(rc=3, drop_final=True))
    async with make_engine() as engine:
        view = await engine.start_session("t1", "app", "claude")
        assert view.run_id is not None
        await run_one(engine, notifier, "t1", "crash")
        crashed = await at_rest(RunFolder.of(engine.state_dir, view.run_id))
        other = await engine.start_session("t2", "app", "claude")
        assert other.run_id is not None
        await run_one(engine, notifier, "t2", "fine", "m2")
        exited = await at_rest(RunFolder.of(engine.state_dir, other.run_id))
    assert crashed["error"]["code"] == "E_CLI_CRASHED"
    assert crashed["error"]["retryable"] is True
    assert signal.Signals(signum).name in crashed["error"]["message"]
    # An exit code of its own, without a result, is the CLI's say: not a crash.
    assert exited["error"]["code"] == "E_CLI_EXIT_NONZERO"
    assert exited["error"]["retryable"] is False


async def test_without_network_each_cli_is_kept_off_it_or_the_run_is_refused(
    make_engine: EngineFactory,
    notifier: RecordingNotifier,
    spawner: FakeSpawner,
    registry: Any,
    workdir: Path,
) -> None:
    await off_loop(
        registry.add, "open", workdir, ["codex"], "codex", {"codex": ["-s", "danger-full-access"]}
    )
    offline = Constraints(allow_network=False)
    async with make_engine() as engine:
        runs = {}
        for thread, tool in (("c", "claude"), ("x", "codex"), ("g", "gemini")):
            view = await engine.start_session(thread, "app", tool, constraints=offline)
            runs[tool] = view.run_id
            await run_one(engine, notifier, thread, f"offline {tool}")
        refused = await engine.start_session("o", "open", "codex", constraints=offline)
        await run_one(engine, notifier, "o", "open sandbox")
        results = {
            tool: await at_rest(RunFolder.of(engine.state_dir, run_id))
            for tool, run_id in {**runs, "open": refused.run_id}.items()
            if run_id is not None
        }
    argv = {spec.tool: list(spec.argv) for spec in spawner.specs}
    env = {spec.tool: spec.env for spec in spawner.specs}
    assert "--strict-mcp-config" in argv["claude"]
    assert argv["claude"][argv["claude"].index("--disallowedTools") + 1 :][:6] == [
        "WebFetch",
        "WebSearch",
        "Monitor",
        "EnterWorktree",
        "ExitWorktree",
        "Workflow",
    ]
    assert "--settings" in argv["claude"]  # its hook: see the adapter test below
    # Their commands go through the namespace launcher (tests/runs/test_offline.py).
    assert env["claude"]["CLAUDE_CODE_SHELL_PREFIX"].endswith("/no-network-shell")
    assert env["gemini"]["PATH"].split(os.pathsep)[0].endswith("/no-network-bin")
    assert env["gemini"]["GEMINI_SANDBOX"] == "false"
    assert "--allowed-mcp-server-names" in argv["gemini"]
    assert "CLAUDE_CODE_SHELL_PREFIX" not in env["codex"]
    assert "sandbox_workspace_write.network_access=false" in argv["codex"]
    assert 'web_search="disabled"' in argv["codex"]
    assert "--approve-for-me" not in argv["codex"]
    gemini_home = Path(spawner.specs[2].env["GEMINI_CLI_HOME"])
    assert gemini_home.name == "gemini-offline"
    overlay = json.loads((gemini_home / ".gemini" / "settings.json").read_text(encoding="utf-8"))
    assert set(overlay["tools"]["exclude"]) >= {"google_web_search", "web_fetch", "invoke_agent"}
    assert overlay["mcpServers"] == {}
    [group] = overlay["hooks"]["BeforeTool"]
    assert group["hooks"][0]["command"].endswith("hook network --client gemini" + FAIL_CLOSED)
    assert results["claude"]["constraints"]["network_enforcement"] == "namespace"
    assert results["gemini"]["constraints"]["network_enforcement"] == "namespace"
    assert results["codex"]["constraints"]["network_enforcement"] == "sandbox"
    assert results["open"]["error"]["code"] == "E_NETWORK_NOT_ENFORCEABLE"
    assert results["open"]["error"]["retryable"] is False
    assert len(spawner.runs()) == 3  # the refused one never started


def test_claudes_settings_without_network_carry_the_network_hook(tmp_path: Path) -> None:
    request = InvocationRequest(
        executable="claude",
        prompt="p",
        resume_key=None,
        default_args=(),
        job_dir=tmp_path,
        shared_dir=tmp_path,
        thread_id="t",
        env={},
        mcp=None,
        allow_network=False,
        jail=Jail("unshare", sys.executable, 1),
    )
    invocation = ClaudeAdapter().invocation(request)
    settings = json.loads(invocation.files[tmp_path / "claude-settings.json"])
    [group] = settings["hooks"]["PreToolUse"]
    assert group["matcher"] == "*"
    assert group["hooks"][0]["command"].endswith(
        "-m discord_mcp hook network --client claude --timeout 30" + FAIL_CLOSED
    )
    assert group["hooks"][0]["onFailure"] == "block"
    with pytest.raises(RunError) as refused:
        ClaudeAdapter().invocation(
            dataclasses.replace(request, default_args=("--settings", "mine.json"))
        )
    assert refused.value.code == "E_NETWORK_NOT_ENFORCEABLE"


async def test_a_project_without_network_holds_for_every_run(
    make_engine: EngineFactory, registry: Any, workdir: Path
) -> None:
    await off_loop(registry.add, "quiet", workdir, ["claude"], "claude", allow_network=False)
    async with make_engine() as engine:
        asked = await engine.start_session("t1", "quiet", constraints=Constraints())
    assert asked.constraints["allow_network"] is False


async def test_a_turn_that_ended_while_no_daemon_ran_reaches_the_folder_at_the_next_start(
    make_engine: EngineFactory, notifier: RecordingNotifier, spawner: FakeSpawner
) -> None:
    async with make_engine() as engine:
        view = await engine.start_session("t1", "app", "claude")
        assert view.run_id is not None
        folder = RunFolder.of(engine.state_dir, view.run_id)
        await run_one(engine, notifier, "t1", "hello")
        first = await at_rest(folder)
    folder.result.unlink()  # as if the daemon died before writing it
    session = document(folder.session)
    folder.write(
        folder.session, {k: v for k, v in session.items() if k != "version"} | {"state": "running"}
    )
    async with make_engine():
        result = await at_rest(folder)
    assert result["turns"] == first["turns"]
    assert result["status"] == "completed"


async def test_a_request_taken_but_never_started_fails_as_not_started_and_retryable(
    make_engine: EngineFactory, state_dir: Path
) -> None:
    run_id = new_run_id(0)
    queue = RunQueue(state_dir)
    path = queue.put(
        {
            "run_id": run_id,
            "project": "app",
            "engine": "claude",
            "mode": "new",
            "session_id": None,
            "message": "lost",
            "created_at": "2026-01-01T00:00:00.000Z",
            "constraints": {"allow_network": True, "timeout_s": None},
            "reply_id": "1-abcd",
        }
    )
    claimed = queue.claim(path)
    assert claimed is not None  # ...and the daemon died right there
    async with make_engine():
        result = await until(lambda: RunFolder.of(state_dir, run_id).result.exists())
    result = document(RunFolder.of(state_dir, run_id).result)
    assert result["error"] == {
        "code": "E_NOT_STARTED",
        "message": result["error"]["message"],
        "retryable": True,
    }


async def test_status_reads_a_run_and_changes_nothing(
    make_engine: EngineFactory, notifier: RecordingNotifier, state_dir: Path
) -> None:
    async with make_engine() as engine:
        view = await engine.start_session("t1", "app", "gemini")
        assert view.run_id is not None
        await run_one(engine, notifier, "t1", "hi")
        await at_rest(RunFolder.of(state_dir, view.run_id))
    before = {p: p.stat().st_mtime_ns for p in state_dir.rglob("*") if p.is_file()}
    status = read_status(state_dir, view.run_id)
    after = {p: p.stat().st_mtime_ns for p in state_dir.rglob("*") if p.is_file()}
    assert before == after
    assert status["status"] == "completed"
    assert status["result"]["engine"] == "gemini"
    with pytest.raises(RunError) as missing:
        read_status(state_dir, new_run_id(0))
    assert missing.value.code == "E_RUN_NOT_FOUND"
    with pytest.raises(RunError):
        read_status(state_dir, "../../etc")


def test_the_schema_check_finds_a_file_that_breaks_its_schema(tmp_path: Path) -> None:
    folder = RunFolder.of(tmp_path / "home", new_run_id(0))
    folder.make()
    folder.write(folder.session, {"run_id": folder.run_id, "state": "sleeping"})
    assert checked_files(tmp_path) == 1
    found = problems(tmp_path)
    assert any("'sleeping' is not one of" in p for p in found)
    assert any("'engine' is a required property" in p for p in found)
    folder.session.unlink()  # (the autouse check would fail this test otherwise)


def test_files_a_runs_agent_sends_are_kept_in_its_artifacts(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    prepared = Prepared(uploads=(Upload("report.txt", b"one"), Upload("report.txt", b"two")))
    keep_in_run(prepared, {"DISCORD_MCP_RUN_ARTIFACTS": str(artifacts)})
    keep_in_run(prepared, {})  # not a run: nothing anywhere
    assert (artifacts / "report.txt").read_bytes() == b"one"
    assert (artifacts / "report-2.txt").read_bytes() == b"two"
    request = InvocationRequest(
        executable="claude",
        prompt="p",
        resume_key=None,
        default_args=(),
        job_dir=tmp_path,
        shared_dir=tmp_path,
        thread_id="t",
        env={},
        mcp=McpRegistration(argv=["discord-mcp"]),
        artifacts_dir=artifacts,
    )
    config = json.loads(ClaudeAdapter().invocation(request).files[tmp_path / "claude-mcp.json"])
    assert config["mcpServers"]["discord"]["env"]["DISCORD_MCP_RUN_ARTIFACTS"] == str(artifacts)


def test_codex_without_network_turns_off_the_mcp_servers_of_its_config(tmp_path: Path) -> None:
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        '[mcp_servers.fetch]\ncommand = "fetch-server"\n[mcp_servers.discord]\ncommand = "x"\n',
        encoding="utf-8",
    )
    request = InvocationRequest(
        executable="codex",
        prompt="p",
        resume_key=None,
        default_args=(),
        job_dir=tmp_path,
        shared_dir=tmp_path,
        thread_id="t",
        env={"CODEX_HOME": str(codex_home)},
        mcp=None,
        allow_network=False,
    )
    argv = CodexAdapter().invocation(request).argv
    assert "mcp_servers.fetch.enabled=false" in argv
    assert "mcp_servers.discord.enabled=false" not in argv
    (codex_home / "config.toml").write_text(
        '[mcp_servers."odd name"]\ncommand = "x"\n', encoding="utf-8"
    )
    with pytest.raises(RunError) as refused:
        CodexAdapter().invocation(request)
    assert refused.value.code == "E_NETWORK_NOT_ENFORCEABLE"


def test_a_doubtful_network_setting_means_no_network_and_timeouts_are_bounded() -> None:
    assert Constraints.from_dict(None).allow_network is True
    assert Constraints.from_dict({"allow_network": True}).allow_network is True
    for doubtful in (False, "true", "false", None, 1):
        assert Constraints.from_dict({"allow_network": doubtful}).allow_network is False
    for bad in (0.0, -5.0, 90_000.0):
        with pytest.raises(RunError) as refused:
            Constraints(timeout_s=bad).checked()
        assert refused.value.code == "E_INVALID_TIMEOUT"
    assert Constraints(timeout_s=30.0).checked().timeout_s == 30.0
