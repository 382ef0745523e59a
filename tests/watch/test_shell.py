"""``discord-watch submit|resume|stop|logs|status`` from a shell, against a daemon with Discord
(the emulator): each run has its thread, and an owner's message there is a resume of the same
run (their output and exit codes are a contract: discord_mcp/watch/shell.py, the CHANGELOG)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from discord_mcp.config import Settings
from discord_mcp.emulator import RunningEmulator
from discord_mcp.runs.folders.folders import RunFolder
from tests.support.fake_agents import FakeSpawner, Scenario
from tests.support.people import People
from tests.support.waiting import until
from tests.watch.conftest import live_daemon
from tests.watch.test_daemon import texts

CLI = "from discord_mcp.watch.cli import main; raise SystemExit(main())"


async def watch(settings: Settings, *args: str) -> tuple[int, str, str]:
    """Run ``discord-watch ARGS`` as a separate process (the daemon keeps running here)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLI,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "HOME": str(settings.home.parent)}
        | {"DISCORD_MCP_HOME": str(settings.home)},
    )
    async with asyncio.timeout(60):
        out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def as_json(settings: Settings, *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = await watch(settings, *args, "--json")
    assert out.count("\n") == 1, (out, err)
    return code, json.loads(out)


def result_of(settings: Settings, run_id: str) -> dict[str, Any] | None:
    folder = RunFolder.of(settings.home, run_id)
    try:
        session = json.loads(folder.session.read_text(encoding="utf-8"))
        result = json.loads(folder.result.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return dict(result) if session["state"] in ("completed", "failed", "stopped") else None


def thread_of(receipt: dict[str, Any]) -> str:
    return str(receipt["thread_url"]).rsplit("/", 1)[-1]


async def test_submit_returns_at_once_with_its_run_and_thread_and_wait_returns_the_result(
    live_settings: Settings, fake_spawner: FakeSpawner, discord: RunningEmulator, people: People
) -> None:
    async with live_daemon(live_settings, fake_spawner, discord):
        code, receipt = await as_json(live_settings, "submit", "app", "fix the build")
        code_wait, done = await as_json(
            live_settings, "submit", "app", "and the docs", "--tool", "codex", "--wait"
        )
        text_code, text, _ = await watch(live_settings, "submit", "app", "say it", "--wait")
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
    assert receipt["run_dir"] == str(live_settings.home / "runs" / receipt["run_id"])
    # the emulator's page, since the bot talks to the emulator
    assert receipt["thread_url"].startswith(f"{discord.base_url}/channels/{discord.guild_id}/")
    assert "**From the shell**" in texts(people, thread_of(receipt))[0]
    assert code_wait == 0
    assert (done["status"], done["engine"]) == ("completed", "codex")
    assert "pong" in done["summary"]
    assert done["token_usage"]["input"] > 0
    assert done["thread_url"].endswith(f"/{discord.guild_id}/{thread_of(done)}")
    assert text_code == 0
    assert "pong" in text


async def test_resume_and_the_owners_message_in_its_thread_are_turns_of_the_same_run(
    live_settings: Settings, fake_spawner: FakeSpawner, discord: RunningEmulator, people: People
) -> None:
    fake_spawner.script("break", Scenario(sample="claude-fail-401-noretry.jsonl"))
    async with live_daemon(live_settings, fake_spawner, discord):
        _, first = await as_json(live_settings, "submit", "app", "one", "--wait")
        run_id, thread = first["run_id"], thread_of(first)
        code, second = await as_json(live_settings, "resume", run_id, "two", "--wait")
        people.say(thread, "three, from my phone")
        third = await until(
            lambda: (r := result_of(live_settings, run_id)) and len(r["turns"]) == 3 and r
        )
        old_code, old_form = await as_json(live_settings, "resume", thread, "four", "--wait")
        failed_code, failed = await as_json(live_settings, "resume", run_id, "break", "--wait")
        missing_code, missing = await as_json(live_settings, "resume", "12345", "x")
    assert code == 0
    assert (second["run_id"], second["status"]) == (run_id, "completed")
    assert second["session_id"] == first["session_id"]
    runs = fake_spawner.runs()
    assert runs[1]["resume"] == first["session_id"]  # the same agent session, continued
    assert [t["message"] for t in third["turns"]] == ["one", "two", "three, from my phone"]
    assert third["session_id"] == first["session_id"]
    assert old_code == 0  # a run thread's id still names its run
    assert len(old_form["turns"]) == 4
    assert failed_code == 1
    assert failed["error"]["code"] == "E_CLI_ERROR"
    assert failed["error"]["retryable"] is False
    assert missing_code == 2
    assert (missing["ok"], missing["code"]) == (False, "E_RUN_NOT_FOUND")


async def test_stop_ends_a_run_as_stopped_without_a_ping_and_logs_show_it(
    live_settings: Settings, fake_spawner: FakeSpawner, discord: RunningEmulator, people: People
) -> None:
    fake_spawner.script("long", Scenario(hang=True))
    async with live_daemon(live_settings, fake_spawner, discord):
        timeout_code, out, err = await watch(
            live_settings, "submit", "app", "long", "--wait", "--wait-timeout", "1", "--json"
        )
        running = json.loads(out)
        thread = thread_of(running)
        await until(lambda: any("**Running**" in t for t in texts(people, thread)))
        code, stopped = await as_json(live_settings, "stop", running["run_id"])
        done = await until(lambda: result_of(live_settings, running["run_id"]))
        await until(lambda: any("stopped on request" in t for t in texts(people, thread)))
        log_code, logs = await as_json(live_settings, "logs", running["run_id"], "--raw")
        job_id = done["turns"][0]["job_id"]
    text_code, text, _ = await watch(live_settings, "logs", job_id)  # no daemon needed
    status_code, status = await as_json(live_settings, "status", running["run_id"])
    assert timeout_code == 4
    assert running["status"] == "running"  # the status JSON; the run goes on
    assert "the wait ran out" in err
    assert code == 0
    assert stopped["stopped"] is True
    assert done["status"] == "stopped"
    assert done["error"] is None
    final = [m for m in people.messages(thread) if "stopped on request" in m["content"]]
    assert final
    assert not final[-1]["mentions"]  # a stop the owner asked for pings nobody
    assert "!retry" not in final[-1]["content"]
    assert log_code == 0
    assert json.loads(logs["stdout"].splitlines()[0])["type"] == "system"
    assert text_code == 0
    assert text.startswith(f"# {job_id} (failed) in thread {thread}")
    assert '{"type"' not in text  # the CLI's events, read: not its raw JSON
    assert status_code == 0
    assert status["status"] == "stopped"


async def test_without_a_daemon_the_commands_say_so_and_exit_3(
    live_settings: Settings, tmp_path: Path
) -> None:
    code, result = await as_json(live_settings, "submit", "app", "hello")
    stop_code, _, err = await watch(live_settings, "stop", "job_x")
    logs_code, _, logs_err = await watch(live_settings, "logs", "job_x")
    assert code == 3
    assert result["code"] == "E_DAEMON_NOT_RUNNING"
    assert stop_code == 3
    assert "discord-watch is not running" in err
    assert logs_code == 2
    assert "E_JOB_NOT_FOUND" in logs_err
    assert not list((live_settings.home / "runs").glob("run_*"))
    queue = live_settings.home / "runs" / "queue"
    assert not queue.exists() or not list(queue.iterdir())
