"""``discord-watch --local`` (issue 23): the run engine without Discord, driven by the shell
commands as a script would (each one a separate process), with the scripted fake CLIs."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from discord_mcp.runs.folders.folders import RunFolder
from discord_mcp.runs.projects import ProjectRegistry
from discord_mcp.watch.local import run_local
from tests.support.fake_agents import FAKE_CLI, FakeSpawner, Scenario
from tests.support.waiting import until

CLI = "from discord_mcp.watch.cli import main; raise SystemExit(main())"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (tmp_path / "app").mkdir()
    ProjectRegistry(home, allowed_roots=[tmp_path]).add(
        "app", tmp_path / "app", ["claude", "codex", "gemini"], "claude"
    )
    return home


async def watch(home: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``discord-watch ARGS`` as its own process, with no Discord settings at all."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLI,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home.parent), "DISCORD_MCP_HOME": str(home)}
        | (env or {}),
        cwd=home.parent,
    )
    async with asyncio.timeout(60):
        out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def as_json(home: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = await watch(home, *args, "--json")
    assert out.count("\n") == 1, (out, err)
    return code, json.loads(out)


@contextlib.asynccontextmanager
async def local_daemon(home: Path, spawner: FakeSpawner) -> AsyncIterator[None]:
    environ = {"PATH": "/usr/bin:/bin", "DISCORD_WATCH_ROOTS": str(home.parent)}
    task = asyncio.create_task(run_local(home, environ=environ, spawner=spawner))
    try:
        await until(lambda: (home / "watch" / "alive.json").exists() or task.done())
        if task.done():
            task.result()
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            async with asyncio.timeout(15):
                await task


async def test_a_script_submits_waits_resumes_and_reads_the_result_without_discord(
    home: Path, spawner: FakeSpawner, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("the flaky test is test_io\n", encoding="utf-8")
    async with local_daemon(home, spawner):
        code, receipt = await as_json(home, "submit", "app", "fix it", "--context", str(notes))
        wait_code, result = await as_json(home, "submit", "app", "and now?", "--wait")
        again_code, again = await as_json(home, "resume", result["run_id"], "more", "--wait")
        status_code, status = await as_json(home, "status", result["run_id"])
        text_code, text, _ = await watch(home, "status", result["run_id"])
        logs_code, logs, _ = await watch(home, "logs", result["run_id"])
        raw_code, raw, _ = await watch(home, "logs", result["run_id"], "--raw")
        _, logs_json = await as_json(home, "logs", result["run_id"])
    assert code == 0
    assert set(receipt) == {
        "ok",
        "run_id",
        "status",
        "created_at",
        "run_dir",
        "thread_url",
        "worktree",
    }
    assert receipt["thread_url"] is None
    assert receipt["status"] in ("created", "running", "completed")
    folder = RunFolder.of(home, receipt["run_id"])
    assert (folder.context / "notes.md").read_text(encoding="utf-8").startswith("the flaky")
    assert notes.exists()  # copied, never moved
    first_prompt = spawner.runs()[0]["prompt"]
    assert str(folder.context / "notes.md") in first_prompt  # it reaches the prompt
    assert wait_code == 0
    assert result["status"] == "completed"
    assert result["session_id"]
    assert result["duration_ms"] >= 0
    assert result["token_usage"]["input"] > 0
    # Every JSON answer about a run says where its folder is, --wait's result too (issue 34).
    run_dir = str(RunFolder.of(home, result["run_id"]).root)
    assert (result["run_dir"], again["run_dir"], status["run_dir"]) == (run_dir,) * 3
    assert logs_json["run_dir"] == run_dir
    stored = json.loads((Path(run_dir) / "result.json").read_text(encoding="utf-8"))
    assert {k: v for k, v in again.items() if k != "run_dir"} == stored
    assert again_code == 0
    assert again["session_id"] == result["session_id"]
    assert [t["message"] for t in again["turns"]] == ["and now?", "more"]
    assert spawner.runs()[-1]["resume"] == result["session_id"]
    assert status_code == 0
    assert (status["status"], status["turn"]) == ("completed", 2)
    assert status["result"]["run_id"] == result["run_id"]
    assert text_code == 0
    assert text.startswith(f"{result['run_id']} completed")
    assert logs_code == 0
    assert "## Turn 2" in logs
    assert raw_code == 0
    assert all(json.loads(line) for line in raw.splitlines() if line.strip())


async def test_stop_ends_a_run_as_stopped_and_a_wait_that_runs_out_exits_4(
    home: Path, spawner: FakeSpawner
) -> None:
    spawner.script("long", Scenario(hang=True))
    async with local_daemon(home, spawner):
        code, out, err = await watch(
            home, "submit", "app", "long", "--wait", "--wait-timeout", "1", "--json"
        )
        running = json.loads(out)
        stop_code, stopped = await as_json(home, "stop", running["run_id"])
        done = await until(lambda: _at_rest(home, running["run_id"]))
        resumed_code, resumed = await as_json(home, "resume", running["run_id"], "go on", "--wait")
    assert code == 4
    assert running["status"] == "running"  # the status JSON, as `status --json` prints it
    assert running["run_dir"].endswith(running["run_id"])
    assert "the wait ran out" in err
    assert stop_code == 0
    assert stopped["stopped"] is True
    assert stopped["run_dir"] == running["run_dir"]
    assert done["status"] == "stopped"
    assert done["error"] is None
    assert resumed_code == 0  # a stopped run can go on
    assert resumed["status"] == "completed"


async def test_submit_runs_in_an_ad_hoc_workspace_inside_the_roots_and_records_its_intent(
    home: Path, spawner: FakeSpawner, tmp_path: Path
) -> None:
    """The CodeBridge seed's ``submit --intent coding --workspace PATH --message ...``: no
    ``project add`` first (issue 34)."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    async with local_daemon(home, spawner):
        code, result = await as_json(
            home,
            "submit",
            "--intent",
            "coding",
            "--workspace",
            str(scratch),
            "--message",
            "tidy it",
            "--wait",
        )
        again_code, again = await as_json(home, "submit", "--workspace", str(scratch), "more")
        outside_code, outside = await as_json(home, "submit", "--workspace", "/etc", "x")
        both_code, both = await as_json(home, "submit", "app", "x", "--workspace", str(scratch))
        bad_code, bad = await as_json(home, "submit", "app", "x", "--intent", "Not A Word")
    assert code == 0, result
    assert result["status"] == "completed"
    request = json.loads((Path(result["run_dir"]) / "request.json").read_text(encoding="utf-8"))
    assert (request["intent"], request["workspace"]) == ("coding", str(scratch))
    assert request["message"] == "tidy it"
    assert spawner.runs()[0]["cwd"] == str(scratch)  # the CLI ran in the folder
    [made] = [p for p in ProjectRegistry(home).list() if p.path == scratch]
    assert made.name.startswith("ws-scratch-")
    assert request["project"] == made.name
    assert again_code == 0, again
    assert again["run_id"] != result["run_id"]
    assert len([p for p in ProjectRegistry(home).list() if p.path == scratch]) == 1  # reused
    assert (outside_code, outside["code"]) == (2, "E_INVALID_PATH")
    assert (both_code, both["code"]) == (2, "E_BAD_ARGUMENTS")
    assert (bad_code, bad["code"]) == (2, "E_BAD_ARGUMENTS")
    assert not [p for p in ProjectRegistry(home).list() if p.path == Path("/etc")]


async def test_a_requests_allowed_roots_narrow_the_daemons_and_never_widen_them(
    home: Path, spawner: FakeSpawner, tmp_path: Path
) -> None:
    """CodeBridge's ``allowed_roots`` per request (issue 34): the folder must be inside one
    of them, and they must be inside discord-watch's roots."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with local_daemon(home, spawner):
        narrow_code, narrow = await as_json(
            home, "submit", "app", "x", "--allowed-root", str(tmp_path / "app"), "--wait"
        )
        out_code, out = await as_json(home, "submit", "app", "x", "--allowed-root", str(elsewhere))
        wide_code, wide = await as_json(home, "submit", "app", "x", "--allowed-root", "/")
        relative_code, relative = await as_json(home, "submit", "app", "x", "--allowed-root", "app")
    assert narrow_code == 0, narrow
    request = json.loads((Path(narrow["run_dir"]) / "request.json").read_text(encoding="utf-8"))
    assert request["allowed_roots"] == [str(tmp_path / "app")]
    assert (out_code, out["code"]) == (2, "E_INVALID_PATH")
    assert "outside the request's allowed roots" in out["message"]
    assert (wide_code, wide["code"]) == (2, "E_INVALID_PATH")
    assert "can only narrow" in wide["message"]
    assert (relative_code, relative["code"]) == (2, "E_INVALID_PATH")
    assert len(spawner.runs()) == 1  # only the run inside its roots ran


async def test_a_failed_run_exits_by_whether_it_is_retryable(
    home: Path, spawner: FakeSpawner
) -> None:
    spawner.script("auth", Scenario(sample="claude-fail-401-noretry.jsonl"))
    async with local_daemon(home, spawner):
        code, result = await as_json(home, "submit", "app", "auth", "--wait")
        refused_code, refused = await as_json(home, "submit", "nope", "x")
        missing_code, missing = await as_json(home, "resume", "run_20260101_000000_abcdef", "x")
    assert code == 1
    assert result["error"]["code"] == "E_CLI_ERROR"
    assert result["error"]["retryable"] is False
    assert refused_code == 2
    assert (refused["ok"], refused["code"], refused["retryable"]) == (
        False,
        "E_PROJECT_NOT_FOUND",
        False,
    )
    assert missing_code == 2
    assert missing["code"] == "E_RUN_NOT_FOUND"


async def test_without_a_daemon_submit_exits_3_and_leaves_no_run_behind(home: Path) -> None:
    code, result = await as_json(home, "submit", "app", "hello")
    assert code == 3
    assert result["code"] == "E_DAEMON_NOT_RUNNING"
    assert result["retryable"] is True
    assert not [p for p in (home / "runs").glob("run_*")]


def _at_rest(home: Path, run_id: str) -> dict[str, Any] | None:
    folder = RunFolder.of(home, run_id)
    try:
        session = json.loads(folder.session.read_text(encoding="utf-8"))
        if session["state"] in ("completed", "failed", "stopped"):
            return dict(json.loads(folder.result.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None
    return None


# -- the daemon as a process, and nothing reaching Discord


class Recorder(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def _any(self) -> None:
        Recorder.seen.append(f"{self.command} {self.path}")
        self.send_response(500)
        self.end_headers()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def recorder() -> Iterator[str]:
    Recorder.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def fake_claude(directory: Path, record: Path, scenario_: Scenario | None = None) -> Path:
    """A ``claude`` on PATH that replays the recorded sample (tests/support/fake_cli.py)."""
    directory.mkdir(parents=True, exist_ok=True)
    scenario = json.dumps((scenario_ or Scenario()).document("claude", record))
    script = directory / "claude"
    script.write_text(
        f"#!{sys.executable}\n"
        "import os, sys\n"
        f"os.execv({sys.executable!r}, [{sys.executable!r}, {str(FAKE_CLI)!r}, "
        f"{scenario!r}, '--', *sys.argv])\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return directory


@pytest.mark.parametrize("how", ["--local", "no token"])
async def test_local_mode_says_so_first_and_never_reaches_discord(
    home: Path, tmp_path: Path, recorder: str, how: str
) -> None:
    bin_dir = fake_claude(tmp_path / "bin", tmp_path / "claude-runs.jsonl")
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "DISCORD_MCP_HOME": str(home),
        "DISCORD_WATCH_ROOTS": str(tmp_path),
        "DISCORD_API_BASE": f"{recorder}/api/v10",
        "DISCORD_GATEWAY_URL": recorder.replace("http", "ws"),
        "DISCORD_CHANNEL_ID": "123456789012345678",
        "DISCORD_OWNER_IDS": "123456789012345679",
    }
    args = ["--local"] if how == "--local" else []
    if how == "--local":
        env["DISCORD_BOT_TOKEN"] = "x" * 24 + "." + "y" * 6 + "." + "z" * 27  # ignored
    daemon = subprocess.Popen(
        [sys.executable, "-c", CLI, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
        encoding="utf-8",
        text=True,
    )
    try:
        assert daemon.stdout is not None
        first = await asyncio.wait_for(asyncio.to_thread(daemon.stdout.readline), 30)
        await until(lambda: (home / "watch" / "alive.json").exists(), 30)
        code, result = await as_json(home, "submit", "app", "hello", "--wait")
    finally:
        daemon.send_signal(signal.SIGTERM)
        out, err = await asyncio.to_thread(daemon.communicate, timeout=30)
    assert first.startswith("discord-watch: local only (no Discord)")
    assert code == 0, result
    assert result["status"] == "completed"
    assert result["thread_url"] is None
    assert Recorder.seen == []  # nothing tried to reach Discord
    assert daemon.returncode == 0, err
    assert "x" * 24 not in out + err


def test_the_recording_server_would_see_a_request(recorder: str) -> None:
    import urllib.request

    with contextlib.suppress(OSError):
        urllib.request.urlopen(f"{recorder}/api/v10/users/@me", timeout=5)
    assert Recorder.seen == ["GET /api/v10/users/@me"]
    Recorder.seen = []


def start_daemon(env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CLI, "--local"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
        encoding="utf-8",
        text=True,
    )


async def test_a_run_outlives_a_killed_local_daemon_and_is_reattached(
    home: Path, tmp_path: Path
) -> None:
    gate, record = tmp_path / "gate", tmp_path / "claude-runs.jsonl"
    bin_dir = fake_claude(tmp_path / "bin", record, Scenario(gate=gate, sample="claude-mcp.jsonl"))
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "DISCORD_MCP_HOME": str(home),
        "DISCORD_WATCH_ROOTS": str(tmp_path),
    }
    first = start_daemon(env, tmp_path)
    second = None
    try:
        await until(lambda: (home / "watch" / "alive.json").exists(), 30)
        code, receipt = await as_json(home, "submit", "app", "long job")
        folder = RunFolder.of(home, receipt["run_id"])
        await until(lambda: '"running"' in _text(folder.session), 30)
        first.kill()  # kill -9: no goodbye, the CLI keeps running
        first.wait(timeout=30)
        (home / "watch" / "alive.json").unlink()
        second = start_daemon(env, tmp_path)
        await until(lambda: (home / "watch" / "alive.json").exists(), 30)
        gate.touch()
        result = await until(lambda: _at_rest(home, receipt["run_id"]), 30)
    finally:
        for daemon in (first, second):
            if daemon is not None and daemon.poll() is None:
                daemon.send_signal(signal.SIGTERM)
                daemon.wait(timeout=30)
    assert code == 0
    assert result["status"] == "completed"
    assert result["summary"] == "tool said: A (is_error=False)"
    assert len(record.read_text(encoding="utf-8").splitlines()) == 1  # nothing ran twice


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""
